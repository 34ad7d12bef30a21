"""The fixed QAOA subsolver of QAOA²: p = 1 circuits, closed-form expectation, sampling.

Convention (Farhi et al.; Wang, Hadfield, Jiang & Rieffel 2018): the cost of a weighted graph
is C = Σ_uv w_uv (1 − Z_u Z_v)/2 (the cut value), and the p = 1 state is
|γ, β⟩ = exp(−iβ Σ_j X_j) exp(−iγ C) |+⟩^n. As a Qiskit circuit: H on every qubit,
``rzz(−γ·w_uv)`` on every edge (rzz(θ) = exp(−iθ ZZ/2), so the global phase of C drops) and
``rx(2β)`` on every qubit. The official Neural QAOA² code's γ is −γ here (PennyLane
MultiRZ(γw) = exp(−iγwZZ/2)).

Closed form (weighted, one global γ). For an edge uv with N_u = N(u)∖{v}, N_v = N(v)∖{u},
F = N_u ∩ N_v::

    ⟨C_uv⟩ = w_uv [½ + ¼ sin4β sin(γ w_uv)(Π_{m∈N_u} cos γw_um + Π_{m∈N_v} cos γw_vm)
             − ¼ sin²2β Π_{m∈N_u∖F} cos γw_um Π_{m∈N_v∖F} cos γw_vm
               (Π_{m∈F} cos γ(w_um − w_vm) − Π_{m∈F} cos γ(w_um + w_vm))]

With a dense weight matrix (w = 0 for non-edges, so cos γ·0 = 1) the last line is exactly
Π_{m∉{u,v}} cos γ(W_um − W_vm) − Π_{m∉{u,v}} cos γ(W_um + W_vm): a node adjacent to only
one end contributes cos γw to both products. That dense form is what :func:`expectation`
evaluates, vectorized over edges (and over a grid of angles); :func:`expectation_unweighted`
is the textbook unit-weight formula with exponent d + e − 2f (the d + e − f variant is wrong).

Block procedure [code defaults]: start from the policy's (γ, β); 20 gradient-ascent steps of
size 0.01 on ⟨C⟩ (closed form, analytic gradient); sample ``shots`` bitstrings; return the
best cut among the samples. ``weight_scale="maxabs"`` divides a block's weights by max|w|
before the angles act on them [recon: the official code's scaling is not established; raw
weights of 10⁵ make raw angles meaningless]; cut values are always computed on raw weights.
Backends: ``aer`` (qiskit-aer ``AerSimulator(method="statevector")``, native gates, no
transpiling, ``seed_simulator`` from the trial's generator) and ``numpy`` (exact statevector,
samples drawn from |amplitude|² with a numpy Generator: the same distribution, faster).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from papergym.maxcut import cut_value

GRADIENT_STEPS = 20
STEP_SIZE = 0.01
BACKENDS = ("aer", "numpy")
WEIGHT_SCALES = ("maxabs", "raw")


# --------------------------------------------------------------------------- closed form
def _prod_and_derivative(factors: np.ndarray, dfactors: np.ndarray) -> tuple[np.ndarray, ...]:
    """Product over the last axis and d/dγ of it, Σ_m f'_m Π_{j≠m} f_j (prefix/suffix
    products, so the derivative stays exact where a cosine vanishes)."""
    ones = np.ones(factors.shape[:-1] + (1,))
    prefix = np.cumprod(np.concatenate([ones, factors[..., :-1]], axis=-1), axis=-1)
    suffix = np.cumprod(np.concatenate([ones, factors[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    return prefix[..., -1] * factors[..., -1], (dfactors * prefix * suffix).sum(axis=-1)


class ClosedForm:
    """The p = 1 closed form of one graph, with its γ-independent parts precomputed.

    For every edge uv (u < v) and every other node m, ``args`` stacks the four angles'
    coefficients of the formula: W_um (Π over N_u), W_vm (Π over N_v), W_um − W_vm and
    W_um + W_vm (the triangle products); m ∈ {u, v} is zeroed so its factor is cos 0 = 1.
    """

    def __init__(self, weights: np.ndarray) -> None:
        weights = np.asarray(weights, dtype=float)
        n = weights.shape[0]
        iu, iv = np.triu_indices(n, 1)
        keep = weights[iu, iv] != 0
        self.iu, self.iv = iu[keep], iv[keep]
        self.w = weights[self.iu, self.iv]
        row_u, row_v = weights[self.iu], weights[self.iv]  # (E, n)
        args = np.stack([row_u, row_v, row_u - row_v, row_u + row_v])  # (4, E, n)
        edge = np.arange(self.w.size)
        args[:, edge, self.iu] = 0.0
        args[:, edge, self.iv] = 0.0
        self.args = args

    def __call__(self, gamma, beta) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        gamma_b, beta_b = np.broadcast_arrays(np.atleast_1d(np.asarray(gamma, float)),
                                              np.atleast_1d(np.asarray(beta, float)))
        gamma_b, beta_b = gamma_b.ravel(), beta_b.ravel()
        if self.w.size == 0:
            zeros = np.zeros_like(gamma_b)
            return zeros, zeros.copy(), zeros.copy()
        phase = gamma_b[:, None, None, None] * self.args[None]  # (G, 4, E, n)
        products, d_products = _prod_and_derivative(np.cos(phase), -np.sin(phase) * self.args)
        prod_u, prod_v, diff, summ = (products[:, i] for i in range(4))
        dprod_u, dprod_v, ddiff, dsumm = (d_products[:, i] for i in range(4))
        w, g, b = self.w, gamma_b[:, None], beta_b[:, None]
        sin_gw, cos_gw = np.sin(g * w), np.cos(g * w)
        sin4b, cos4b = np.sin(4 * b), np.cos(4 * b)
        sin2b_sq = np.sin(2 * b) ** 2
        single = prod_u + prod_v
        triangle = diff - summ
        # the weighted Wang et al. formula, edge by edge
        per_edge = w * (0.5 + 0.25 * sin4b * sin_gw * single - 0.25 * sin2b_sq * triangle)
        d_gamma = w * (0.25 * sin4b * (w * cos_gw * single + sin_gw * (dprod_u + dprod_v))
                       - 0.25 * sin2b_sq * (ddiff - dsumm))
        # d sin4β = 4 cos4β; d sin²2β = 2 sin4β
        d_beta = w * (cos4b * sin_gw * single - 0.5 * sin4b * triangle)
        return per_edge.sum(axis=1), d_gamma.sum(axis=1), d_beta.sum(axis=1)


def expectation_and_gradient(
    weights: np.ndarray, gamma: np.ndarray | float, beta: np.ndarray | float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """⟨C⟩ at p = 1 and its gradient (∂/∂γ, ∂/∂β) for a dense symmetric weight matrix.

    ``gamma`` and ``beta`` broadcast to a common shape (G,) (a scalar gives G = 1); returns
    three arrays of that shape.
    """
    return ClosedForm(weights)(gamma, beta)


def expectation(weights: np.ndarray, gamma: float, beta: float) -> float:
    """⟨γ,β|C|γ,β⟩ at p = 1 from the closed form (weighted)."""
    return float(expectation_and_gradient(weights, gamma, beta)[0][0])


def expectation_unweighted(adjacency: np.ndarray, gamma: float, beta: float) -> float:
    """The unit-weight formula: Σ_uv ½ + ¼ sin4β sinγ (cos^d γ + cos^e γ)
    − ¼ sin²2β cos^{d+e−2f} γ (1 − cos^f 2γ), d = deg u − 1, e = deg v − 1, f = #triangles."""
    a = (np.asarray(adjacency) != 0).astype(int)
    degree = a.sum(axis=1)
    common = a @ a
    total = 0.0
    for u, v in zip(*np.nonzero(np.triu(a, 1))):
        d, e, f = degree[u] - 1, degree[v] - 1, common[u, v]
        total += (
            0.5
            + 0.25 * np.sin(4 * beta) * np.sin(gamma) * (np.cos(gamma) ** d + np.cos(gamma) ** e)
            - 0.25 * np.sin(2 * beta) ** 2 * np.cos(gamma) ** (d + e - 2 * f)
            * (1 - np.cos(2 * gamma) ** f)
        )
    return float(total)


# --------------------------------------------------------------------------- statevectors
@lru_cache(maxsize=32)
def _bit_table(n: int) -> np.ndarray:
    """(2^n, n) bits; row z holds qubit j's value in bit j (Qiskit's little-endian order)."""
    return ((np.arange(1 << n)[:, None] >> np.arange(n)) & 1).astype(np.int8)


def cut_table(weights: np.ndarray) -> np.ndarray:
    """Cut value of every bitstring z ∈ {0, 1}^n (index bit j = node j)."""
    return cut_value(weights, _bit_table(weights.shape[0]))


def statevector(weights: np.ndarray, gamma: float, beta: float,
                cuts: np.ndarray | None = None) -> np.ndarray:
    """The p = 1 QAOA state as a numpy vector (little-endian, as Qiskit's Statevector)."""
    n = weights.shape[0]
    cuts = cut_table(weights) if cuts is None else cuts
    psi = np.exp(-1j * gamma * cuts) / np.sqrt(1 << n)
    cos, sin = np.cos(beta), -1j * np.sin(beta)
    for qubit in range(n):  # exp(−iβX) on each qubit: pairs of amplitudes differing in bit j
        view = psi.reshape(-1, 2, 1 << qubit)
        low, high = view[:, 0, :].copy(), view[:, 1, :]
        view[:, 0, :] = cos * low + sin * high
        view[:, 1, :] = sin * low + cos * high
    return psi


def qaoa_circuit(weights: np.ndarray, gamma: float, beta: float, measure: bool = False):
    """The Qiskit circuit: H^⊗n, rzz(−γ w_uv) per edge, rx(2β) per qubit."""
    from qiskit import QuantumCircuit

    n = weights.shape[0]
    circuit = QuantumCircuit(n)
    circuit.h(range(n))
    for u, v in zip(*np.nonzero(np.triu(weights, 1))):
        circuit.rzz(-gamma * float(weights[u, v]), int(u), int(v))
    circuit.rx(2 * beta, range(n))
    if measure:
        circuit.measure_all()
    return circuit


@lru_cache(maxsize=1)
def _aer_simulator():
    from qiskit_aer import AerSimulator

    return AerSimulator(method="statevector")


def sample_bitstrings(
    weights: np.ndarray, gamma: float, beta: float, shots: int, rng: np.random.Generator,
    backend: str = "aer", cuts: np.ndarray | None = None,
) -> np.ndarray:
    """Indices z of ``shots`` measured bitstrings (bit j of z = qubit j); ``cuts`` is the
    cut table of ``weights`` when the caller has it."""
    n = weights.shape[0]
    if backend == "numpy":
        probabilities = np.abs(statevector(weights, gamma, beta, cuts)) ** 2
        return rng.choice(1 << n, size=shots, p=probabilities / probabilities.sum())
    if backend != "aer":
        raise ValueError(f"unknown backend {backend!r}; choose one of {BACKENDS}")
    seed = int(rng.integers(0, 2**31 - 1))
    job = _aer_simulator().run(qaoa_circuit(weights, gamma, beta, measure=True), shots=shots,
                               seed_simulator=seed)
    counts = job.result().get_counts()
    samples = np.empty(shots, dtype=np.int64)
    position = 0
    for key, count in sorted(counts.items()):
        samples[position : position + count] = int(key.replace(" ", ""), 2)
        position += count
    return samples


# --------------------------------------------------------------------------- block solve
class BlocksClosedForm:
    """The closed form of several graphs at once (one (γ, β) each): their edges are stacked,
    padded to a common node count with zero weights (cos 0 = 1 leaves every product alone),
    and per-edge terms are summed per graph. Used to run the blocks' gradient steps jointly."""

    def __init__(self, graphs: list[np.ndarray]) -> None:
        size = max(g.shape[0] for g in graphs)
        parts, owners = [], []
        for index, graph in enumerate(graphs):
            padded = np.zeros((size, size))
            padded[: graph.shape[0], : graph.shape[0]] = graph
            form = ClosedForm(padded)
            parts.append(form)
            owners.append(np.full(form.w.size, index))
        self.count = len(graphs)
        self.owner = np.concatenate(owners)
        self.w = np.concatenate([f.w for f in parts])
        self.args = np.concatenate([f.args for f in parts], axis=1)  # (4, E_total, size)

    def __call__(self, gamma: np.ndarray, beta: np.ndarray) -> tuple[np.ndarray, ...]:
        if self.w.size == 0:
            zeros = np.zeros(self.count)
            return zeros, zeros.copy(), zeros.copy()
        g, b = gamma[self.owner], beta[self.owner]  # per edge
        phase = g[None, :, None] * self.args
        (prod_u, prod_v, diff, summ), (dprod_u, dprod_v, ddiff, dsumm) = _prod_and_derivative(
            np.cos(phase), -np.sin(phase) * self.args)
        w = self.w
        sin_gw, cos_gw = np.sin(g * w), np.cos(g * w)
        sin4b, cos4b, sin2b_sq = np.sin(4 * b), np.cos(4 * b), np.sin(2 * b) ** 2
        single, triangle = prod_u + prod_v, diff - summ
        per_edge = w * (0.5 + 0.25 * sin4b * sin_gw * single - 0.25 * sin2b_sq * triangle)
        d_gamma = w * (0.25 * sin4b * (w * cos_gw * single + sin_gw * (dprod_u + dprod_v))
                       - 0.25 * sin2b_sq * (ddiff - dsumm))
        d_beta = w * (cos4b * sin_gw * single - 0.5 * sin4b * triangle)
        return tuple(np.bincount(self.owner, weights=x, minlength=self.count)
                     for x in (per_edge, d_gamma, d_beta))


@dataclass
class BlockSolution:
    bits: np.ndarray  # (k,) int8, side of each block node
    cut: float  # on raw weights
    gamma: float  # angles after the gradient steps
    beta: float
    expectation: float  # closed-form ⟨C⟩ at the final angles, raw weight units
    closed_form_evals: int
    shots: int


def solve_blocks(
    blocks: list[np.ndarray], angles: np.ndarray, rng: np.random.Generator, *,
    shots: int = 1000, backend: str = "aer", weight_scale: str = "maxabs",
    steps: int = GRADIENT_STEPS, step_size: float = STEP_SIZE,
) -> list[BlockSolution]:
    """Solve every block from its initial (γ, β): ``steps`` gradient-ascent steps on ⟨C⟩
    (all blocks at once; each block's steps depend only on its own graph), then ``shots``
    samples per block (block order, one generator), keeping the best cut of each."""
    if weight_scale not in WEIGHT_SCALES:
        raise ValueError(f"unknown weight_scale {weight_scale!r}; choose one of {WEIGHT_SCALES}")
    angles = np.asarray(angles, dtype=float).reshape(len(blocks), 2)
    active = [i for i, w in enumerate(blocks) if w.shape[0] > 1 and np.any(w)]
    scales = {i: (float(np.abs(blocks[i]).max()) if weight_scale == "maxabs" else 1.0)
              for i in active}
    gamma, beta = angles[:, 0].copy(), angles[:, 1].copy()
    values = np.zeros(len(blocks))
    if active:
        closed_form = BlocksClosedForm([blocks[i] / scales[i] for i in active])
        g, b = gamma[active], beta[active]
        for _ in range(steps):  # plain gradient ascent on ⟨C⟩ [code: 20 steps, lr 0.01]
            _, d_gamma, d_beta = closed_form(g, b)
            g, b = g + step_size * d_gamma, b + step_size * d_beta
        gamma[active], beta[active] = g, b
        values[active] = closed_form(g, b)[0] * np.array([scales[i] for i in active])
    solutions = []
    for i, weights in enumerate(blocks):
        k = weights.shape[0]
        if i not in scales:
            solutions.append(BlockSolution(np.zeros(k, np.int8), 0.0, gamma[i], beta[i], 0.0,
                                           0, 0))
            continue
        cuts = cut_table(weights)
        samples = sample_bitstrings(weights / scales[i], gamma[i], beta[i], shots, rng, backend,
                                    cuts / scales[i])
        best = int(samples[np.argmax(cuts[samples])])
        solutions.append(BlockSolution(_bit_table(k)[best].copy(), float(cuts[best]),
                                       float(gamma[i]), float(beta[i]), float(values[i]),
                                       steps + 1, shots))
    return solutions


def solve_block(weights: np.ndarray, gamma: float, beta: float, rng: np.random.Generator,
                **kwargs) -> BlockSolution:
    """One block: :func:`solve_blocks` on a single graph."""
    return solve_blocks([weights], np.array([[gamma, beta]]), rng, **kwargs)[0]
