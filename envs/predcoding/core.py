"""The predictive-coding core shared by the problem's evaluator and every agent (numpy, float64).

Model family (defined by the problem, so every agent trains the same functions) [recon]:
latents h_0 (the input, clamped) ... h_L (the output); predictions
    u_l = W_l · phi_l(h_{l-1}) + b_l (+ h_a on a residual skip a -> l),
phi_1 = identity (on the input), phi_l = GELU otherwise. ``PCDepth``: L weight layers of width w.
``PCDepthResidual``: an input layer, B blocks of two layers whose second adds the block input
(identity skip), an output layer (L = 2 + 2B). The feed-forward pass sets h_l = u_l.

Energy (precision-weighted): E = sum_l ½ pi_{l-1} ||h_l − u_l||², energy layers j = l − 1 = 0..L−1
(the output's is L − 1). Auxiliary skip neurons (DeepPC, residual nets): the skip a -> l passes
through an identity latent s_l (prediction h_a, error s_l − h_a, energy layer l − 2, the depth of
the main path's middle node), and u_l adds s_l instead of h_a; so energy on the skip path needs
two inference steps, as on the main path. The forward function is unchanged (s_l = h_a).

Inference: T steps of SGD with (Nesterov) momentum on the free latents (h_1..h_{L−1} and the s_l)
with the output clamped; gradients are written by hand (local: each latent sees its own error and
the errors of the layers it predicts). Precision schedules: ``uniform`` (pi = 1); ``S`` (DeepPC:
at step t, pi_j = 1 for j = L−1−t, alpha for j above it, 0 below it: a wave from output to input,
each layer at full precision exactly when it arrives); ``D`` (full precision at the spike,
then exp(−decay·i) i steps after it, 0 before it).

Weight updates (the gradient of a local loss per layer): ``settled`` (standard PC:
½||h_l − u_l(h_{l−1})||² at the settled latents), ``fu`` (DeepPC's new update:
½||h_l − f_l(h0_{l−1})||², the layer's input taken from the feed-forward pass h0), ``backprop``
(the loss ½||y − u_L||² differentiated through the network; errors = −dLoss/du_l).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

N_IN, N_OUT = 64, 10
SCHEDULES = ("uniform", "S", "D")
WEIGHT_UPDATES = ("settled", "fu", "backprop")
IMBALANCE_FLOOR = 1e-30  # ||e||^2 below this counts as this (an exactly zero error)


@dataclass(frozen=True)
class Architecture:
    """L weight layers, width w; ``blocks`` > 0: the residual net with B two-layer blocks."""

    depth: int
    width: int
    blocks: int = 0
    n_in: int = N_IN
    n_out: int = N_OUT

    def __post_init__(self) -> None:
        if self.blocks and self.depth != 2 + 2 * self.blocks:
            raise ValueError(f"a residual net with {self.blocks} blocks has depth "
                             f"{2 + 2 * self.blocks}, not {self.depth}")
        if self.depth < 2 or self.width < 1:
            raise ValueError(f"depth must be >= 2 and width >= 1, got {self.depth}, {self.width}")

    @classmethod
    def mlp(cls, depth: int, width: int) -> Architecture:
        return cls(depth=int(depth), width=int(width))

    @classmethod
    def residual(cls, blocks: int, width: int) -> Architecture:
        if int(blocks) < 1:
            raise ValueError(f"blocks must be >= 1, got {blocks!r}")
        return cls(depth=2 + 2 * int(blocks), width=int(width), blocks=int(blocks))

    @property
    def skips(self) -> dict[int, int]:
        """Residual skips as {target layer l: source latent a} (block k: a = 1 + 2k, l = a + 2)."""
        return {3 + 2 * k: 1 + 2 * k for k in range(self.blocks)}

    def shapes(self) -> list[tuple[int, int]]:
        """(out, in) of W_1..W_L."""
        sizes = [self.n_in] + [self.width] * (self.depth - 1) + [self.n_out]
        return [(sizes[i + 1], sizes[i]) for i in range(self.depth)]


@dataclass(frozen=True)
class InferenceConfig:
    """What an artifact declares about its relaxation (used for the energy-imbalance metric)."""

    T: int = 0  # inference steps (0: the number of energy layers L)
    lr_h: float = 0.5
    momentum: float = 0.0
    nesterov: bool = True
    schedule: str = "uniform"
    alpha: float = 1e-3
    decay: float = 1.0
    aux: bool = False
    weight_update: str = "settled"

    def __post_init__(self) -> None:
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {self.schedule!r}")
        if self.weight_update not in WEIGHT_UPDATES:
            raise ValueError(f"weight_update must be one of {WEIGHT_UPDATES}, got {self.weight_update!r}")
        for name in ("lr_h", "momentum", "alpha", "decay"):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
        if not (isinstance(self.T, int) and 0 <= self.T <= 10_000):
            raise ValueError(f"T must be an integer in [0, 10000], got {self.T!r}")
        if self.momentum >= 1:
            raise ValueError(f"momentum must be < 1, got {self.momentum!r}")

    def steps(self, arch: Architecture) -> int:
        return self.T or arch.depth


# ---------------------------------------------------------------------------------- functions

GELU_C = math.sqrt(2.0 / math.pi)


def gelu_and_grad(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """GELU in its tanh form (PyTorch's approximate="tanh") and its derivative, in x's dtype."""
    inner = GELU_C * (x + 0.044715 * x * x * x)
    t = np.tanh(inner)
    value = 0.5 * x * (1.0 + t)
    grad = 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * GELU_C * (1.0 + 3 * 0.044715 * x * x)
    return value, grad


def gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(GELU_C * (x + 0.044715 * x * x * x)))


def gelu_grad(x: np.ndarray) -> np.ndarray:
    return gelu_and_grad(x)[1]


def act(layer: int, h: np.ndarray) -> np.ndarray:
    """phi applied to latent ``layer`` (identity on the input latent h_0)."""
    return h if layer == 0 else gelu(h)


def act_grad(layer: int, h: np.ndarray) -> np.ndarray:
    return np.ones_like(h) if layer == 0 else gelu_grad(h)


@dataclass
class Params:
    """Weights W_1..W_L ((out, in) each) and biases b_1..b_L (lists indexed l − 1)."""

    W: list[np.ndarray]
    b: list[np.ndarray]

    def copy(self) -> Params:
        return Params([w.copy() for w in self.W], [v.copy() for v in self.b])

    def arrays(self) -> list[np.ndarray]:
        return [*self.W, *self.b]


def init_params(arch: Architecture, rng: np.random.Generator, dtype: type = np.float64) -> Params:
    """He-normal weights (std sqrt(2 / fan_in)), zero biases; the output layer std 1/sqrt(fan_in),
    the last layer of each residual block std sqrt(2 / fan_in) / sqrt(2B) (Fixup-like) [recon].
    Drawn in float64, then cast to ``dtype`` (agents train in float32)."""
    W, b = [], []
    for i, (out, fan_in) in enumerate(arch.shapes()):
        gain = 1.0 if i == arch.depth - 1 else math.sqrt(2.0)
        if i + 1 in arch.skips:  # a block's last layer: scaled by 1/sqrt(2B), so the stream stays O(1)
            gain /= math.sqrt(2.0 * arch.blocks)
        W.append(rng.normal(0.0, gain / math.sqrt(fan_in), size=(out, fan_in)).astype(dtype))
        b.append(np.zeros(out, dtype=dtype))
    return Params(W, b)


def check_params(params: Params, arch: Architecture) -> None:
    """Raise ValueError unless ``params`` fit ``arch`` and are finite."""
    if len(params.W) != arch.depth or len(params.b) != arch.depth:
        raise ValueError(f"expected {arch.depth} weight matrices and biases, got "
                         f"{len(params.W)} and {len(params.b)}")
    for i, (shape, w, v) in enumerate(zip(arch.shapes(), params.W, params.b)):
        if np.shape(w) != shape or np.shape(v) != (shape[0],):
            raise ValueError(f"layer {i + 1}: W must be {shape} and b ({shape[0]},), got "
                             f"{np.shape(w)} and {np.shape(v)}")
        if not (np.all(np.isfinite(w)) and np.all(np.isfinite(v))):
            raise ValueError(f"layer {i + 1}: non-finite weights")


def layer_input(params: Params, layer: int, h_prev: np.ndarray) -> np.ndarray:
    """W_l · phi(h_{l−1}) + b_l (batch rows)."""
    return act(layer - 1, h_prev) @ params.W[layer - 1].T + params.b[layer - 1]


def forward(params: Params, arch: Architecture, x: np.ndarray) -> list[np.ndarray]:
    """Feed-forward latents h_0 = x, h_l = u_l (h0 in the paper's notation)."""
    h = [np.asarray(x, dtype=params.W[0].dtype)]
    skips = arch.skips
    for layer in range(1, arch.depth + 1):
        u = layer_input(params, layer, h[-1])
        if layer in skips:
            u = u + h[skips[layer]]
        h.append(u)
    return h


def predict(params: Params, arch: Architecture, x: np.ndarray) -> np.ndarray:
    """Class predictions (argmax of the output; PC with a free output equals this pass)."""
    return np.argmax(forward(params, arch, x)[-1], axis=1)


def one_hot(y: np.ndarray, n: int = N_OUT, dtype: type = np.float64) -> np.ndarray:
    out = np.zeros((len(y), n), dtype=dtype)
    out[np.arange(len(y)), np.asarray(y, dtype=np.int64)] = 1.0
    return out


# --------------------------------------------------------------------------------- inference

@dataclass
class State:
    """Latents of one batch: h[0..L] (h[0] and h[L] clamped), aux s[l] per skip target l,
    the feed-forward values h0 / s0, and the momentum buffers."""

    h: list[np.ndarray]
    s: dict[int, np.ndarray]
    h0: list[np.ndarray]
    s0: dict[int, np.ndarray]
    aux: bool
    velocity: dict[tuple[str, int], np.ndarray] = field(default_factory=dict)
    # phi(h_k), phi'(h_k) of the array object h[k] they were computed from (reused while unchanged)
    cache: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default_factory=dict)


def init_state(params: Params, arch: Architecture, x: np.ndarray, target: np.ndarray | None,
               aux: bool = False) -> State:
    """Forward initialization; the output latent clamped to ``target`` (None: left free at u_L)."""
    h0 = forward(params, arch, x)
    h = [v.copy() for v in h0]
    if target is not None:
        h[-1] = np.asarray(target, dtype=h0[-1].dtype).copy()
    s0 = {t: h0[a] for t, a in arch.skips.items()} if aux else {}
    return State(h=h, s={t: v.copy() for t, v in s0.items()}, h0=h0, s0=s0, aux=aux)


def activations(state: State) -> tuple[list[np.ndarray], list[np.ndarray | None]]:
    """phi(h_k) and phi'(h_k) of the current latents (phi'(h_0), h_L's: not needed, None)."""
    phi: list[np.ndarray] = [state.h[0]]
    dphi: list[np.ndarray | None] = [None]
    for k in range(1, len(state.h) - 1):
        hit = state.cache.get(k)
        if hit is not None and hit[0] is state.h[k]:
            value, grad = hit[1], hit[2]
        else:
            value, grad = gelu_and_grad(state.h[k])
            state.cache[k] = (state.h[k], value, grad)
        phi.append(value)
        dphi.append(grad)
    return phi, dphi + [None]


def predictions(params: Params, arch: Architecture, state: State,
                phi: list[np.ndarray] | None = None) -> list[np.ndarray | None]:
    """u_l from the current latents (index l; u[0] is None)."""
    phi = activations(state)[0] if phi is None else phi
    u: list[np.ndarray | None] = [None]
    for layer in range(1, arch.depth + 1):
        a = arch.skips.get(layer)
        v = phi[layer - 1] @ params.W[layer - 1].T + params.b[layer - 1]
        if a is not None:
            v = v + (state.s[layer] if state.aux else state.h[a])
        u.append(v)
    return u


def errors(params: Params, arch: Architecture, state: State,
           phi: list[np.ndarray] | None = None) -> tuple[list, dict[int, np.ndarray]]:
    """(e_l = h_l − u_l for l = 0..L (e[0] None), aux errors s_l − h_a)."""
    u = predictions(params, arch, state, phi)
    e = [None] + [state.h[k] - u[k] for k in range(1, arch.depth + 1)]
    es = {t: state.s[t] - state.h[a] for t, a in arch.skips.items()} if state.aux else {}
    return e, es


def precisions(schedule: str, n_layers: int, t: int, alpha: float = 1e-3,
               decay: float = 1.0) -> np.ndarray:
    """pi_j(t) for energy layers j = 0..n_layers−1 (the output is n_layers − 1)."""
    if schedule == "uniform":
        return np.ones(n_layers)
    front = n_layers - 1 - t  # the layer the wave reaches at step t
    j = np.arange(n_layers)
    pi = np.zeros(n_layers)
    if schedule == "S":
        pi[j > front] = alpha
        if front >= 0:
            pi[front] = 1.0
        return pi
    if schedule == "D":
        since = j - front  # steps since the spike (>= 0 at and above the front)
        pi[since >= 0] = np.exp(-decay * since[since >= 0])
        return pi
    raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")


def energy(params: Params, arch: Architecture, state: State, pi: np.ndarray | None = None) -> float:
    """E = sum_l ½ pi_{l−1} ||e_l||² + sum_aux ½ pi_{l−2} ||e_s||², summed over the batch."""
    pi = np.ones(arch.depth) if pi is None else pi
    e, es = errors(params, arch, state)
    total = sum(0.5 * pi[k - 1] * float(np.sum(e[k] ** 2)) for k in range(1, arch.depth + 1))
    return total + sum(0.5 * pi[t - 2] * float(np.sum(v ** 2)) for t, v in es.items())


def latent_grads(params: Params, arch: Architecture, state: State,
                 pi: np.ndarray) -> dict[tuple[str, int], np.ndarray]:
    """dE/dh_k for the free latents (k = 1..L−1) and dE/ds_l, by hand (local terms only)."""
    pi = [float(v) for v in pi]  # Python floats keep the latents' dtype
    phi, dphi = activations(state)
    e, es = errors(params, arch, state, phi)
    L = arch.depth
    grads: dict[tuple[str, int], np.ndarray] = {}
    for k in range(1, L):
        top_down = (pi[k] * e[k + 1]) @ params.W[k]  # the error of layer k + 1, through W_{k+1}
        g = pi[k - 1] * e[k] - dphi[k] * top_down
        for target, a in arch.skips.items():
            if a == k:  # the skip a -> target: directly, or through its aux latent
                g = g - (pi[target - 2] * es[target] if state.aux else pi[target - 1] * e[target])
        grads[("h", k)] = g
    for target in state.s:
        grads[("s", target)] = pi[target - 2] * es[target] - pi[target - 1] * e[target]
    return grads


def inference_step(params: Params, arch: Architecture, state: State, pi: np.ndarray,
                   config: InferenceConfig) -> None:
    """One SGD step (PyTorch's momentum / Nesterov convention) on the free latents, in place."""
    grads = latent_grads(params, arch, state, pi)
    mu = config.momentum
    for key, g in grads.items():
        if key not in state.velocity and not g.any():
            continue  # an exactly zero step (below the S wave): the latent stays the same object
        if mu > 0:
            v = state.velocity.get(key)
            v = g.copy() if v is None else mu * v + g
            state.velocity[key] = v
            g = g + mu * v if config.nesterov else v
        kind, index = key
        if kind == "h":
            state.h[index] = state.h[index] - config.lr_h * g
        else:
            state.s[index] = state.s[index] - config.lr_h * g


def relax(params: Params, arch: Architecture, state: State, config: InferenceConfig,
          on_step: Callable[[int, State, np.ndarray], None] | None = None) -> State:
    """The declared relaxation: T steps under the precision schedule (in place; returned)."""
    for t in range(config.steps(arch)):
        pi = precisions(config.schedule, arch.depth, t, config.alpha, config.decay)
        inference_step(params, arch, state, pi, config)
        if on_step is not None:
            on_step(t, state, pi)
    return state


# ------------------------------------------------------------------------------ weight updates

def update_errors(params: Params, arch: Architecture, state: State, rule: str) -> list[np.ndarray]:
    """The error each layer's weight update uses, e_1..e_L (list index l − 1).

    settled: h_l − u_l(h_{l−1}); fu: h_l − f_l(h0_{l−1}) (skips from h0 too); backprop:
    −dLoss/du_l of ½||y − u_L||² at the feed-forward pass (y = the clamped output)."""
    L = arch.depth
    if rule == "settled":
        e, _ = errors(params, arch, state)
        return e[1:]
    if rule == "fu":
        out = []
        for layer in range(1, L + 1):
            f = layer_input(params, layer, state.h0[layer - 1])
            if layer in arch.skips:
                f = f + state.h0[arch.skips[layer]]
            out.append(state.h[layer] - f)
        return out
    if rule == "backprop":
        return backprop_errors(params, arch, state.h0, state.h[-1] - state.h0[-1])
    raise ValueError(f"weight_update must be one of {WEIGHT_UPDATES}, got {rule!r}")


def backprop_errors(params: Params, arch: Architecture, h0: list[np.ndarray],
                    output_error: np.ndarray) -> list[np.ndarray]:
    """delta_l = −dLoss/du_l given −dLoss/du_L (= y − u_L for the squared error)."""
    L = arch.depth
    deltas: list[np.ndarray] = [np.empty(0)] * L
    deltas[L - 1] = output_error
    into: dict[int, list[int]] = {}
    for target, a in arch.skips.items():
        into.setdefault(a, []).append(target)
    for layer in range(L - 1, 0, -1):  # delta of u_layer, from the layers it feeds
        d = act_grad(layer, h0[layer]) * (deltas[layer] @ params.W[layer])
        for target in into.get(layer, []):
            d = d + deltas[target - 1]
        deltas[layer - 1] = d
    return deltas


def weight_grads(params: Params, arch: Architecture, inputs: list[np.ndarray],
                 errs: list[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Gradients of sum_l ½||e_l||² / batch w.r.t. W_l, b_l with e_l = h_l − W_l phi(x_{l−1}) − b_l
    (descent moves W_l along e_l phi(x_{l−1})ᵀ); ``inputs[l−1]`` is the layer's input latent."""
    n = len(errs[0])
    gW = [-(errs[i].T @ act(i, inputs[i])) / n for i in range(arch.depth)]
    gb = [-errs[i].mean(axis=0) for i in range(arch.depth)]
    return gW, gb


def pc_weight_grads(params: Params, arch: Architecture, state: State,
                    rule: str) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The weight step of a PC rule after relaxation: settled latents or feed-forward inputs (FU)."""
    errs = update_errors(params, arch, state, rule)
    inputs = state.h[:-1] if rule == "settled" else state.h0[:-1]
    return weight_grads(params, arch, inputs, errs)


# ------------------------------------------------------------------------------- the metrics

def imbalance(errs: list[np.ndarray]) -> np.ndarray:
    """Per sample log10(max_l ||e_l||² / min_l ||e_l||²) (squared norms floored at 1e-30)."""
    sq = np.stack([np.sum(e ** 2, axis=1) for e in errs], axis=1)
    sq = np.maximum(sq, IMBALANCE_FLOOR)
    return np.log10(sq.max(axis=1) / sq.min(axis=1))


def energy_imbalance(params: Params, arch: Architecture, x: np.ndarray, y: np.ndarray,
                     config: InferenceConfig) -> np.ndarray:
    """Per sample imbalance of the errors the declared weight update uses, at the end of the
    declared relaxation with the label clamped (backprop: of the backprop deltas)."""
    state = init_state(params, arch, x, one_hot(y), aux=config.aux)
    if config.weight_update != "backprop":
        relax(params, arch, state, config)
    return imbalance(update_errors(params, arch, state, config.weight_update))
