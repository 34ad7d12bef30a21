"""What the continual learners share: the adapted network in torch, the per-task training loop
over the problem's metered stream, layer gradients and inputs on the gradient subset, GPM-style
subspace growth, and the tuning protocol (papergym.tuning) run once per configuration on the
problem's shared tuning stream.

Every method is a :class:`Learner` with a few hooks (``begin_task``, ``deltas``, ``penalty``,
``step``, ``end_task``); an agent is a :class:`StreamAgent` naming its learner. Weights follow
``torch.nn.Linear``: W is (out, in) and a layer computes x W^T + b.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import torch

from papergym.agent import Agent, AgentConfig
from papergym.envs.continual.core import forward
from papergym.tuning import LogUniform, Tuned, choose

PAPER = "gu2026eblora"
# Every method searches lr over the same range; selection by the tuning stream's MAA (the spec's
# 1e-4..3e-3 sits below every method's optimum at ~100 steps per task [recon]).
LR_RANGE = LogUniform(1e-3, 3e-2)


class AdamW:
    """Adam with decoupled weight decay, as ``torch.optim.AdamW`` computes it (written out: the
    torch.optim import costs seconds per trial process). ``params`` is a list of tensors or, as
    torch's parameter groups, of ``{"params": [...], "lr": ...}`` (a group without ``lr`` steps
    with ``lr``)."""

    def __init__(self, params: list[Any], lr: float, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0) -> None:
        groups = params if params and isinstance(params[0], dict) else [{"params": params}]
        self.params = [p for g in groups for p in g["params"]]
        self.lrs = [float(g.get("lr", lr)) for g in groups for _ in g["params"]]
        self.lr, self.betas = lr, betas
        self.eps, self.weight_decay = eps, weight_decay
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        self.t = 0

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        self.t += 1
        b1, b2 = self.betas
        c1, c2 = 1 - b1 ** self.t, 1 - b2 ** self.t
        for p, lr, m, v in zip(self.params, self.lrs, self.m, self.v):
            if p.grad is None:
                continue
            g = p.grad
            p.mul_(1 - lr * self.weight_decay)
            m.mul_(b1).add_(g, alpha=1 - b1)
            v.mul_(b2).addcmul_(g, g, value=1 - b2)
            p.sub_(lr * (m / c1) / ((v / c2).sqrt() + self.eps))


class Learner:
    """The backbone's weights (merged updates folded in) plus the method's adapters."""

    def __init__(self, view: Any, cfg: Any) -> None:
        self.W = [torch.tensor(np.asarray(w), dtype=torch.float32) for w in view.weights]
        self.b = [torch.tensor(np.asarray(v), dtype=torch.float32) for v in view.biases]
        self.adapted = tuple(view.adapted)
        self.rank, self.cfg = int(view.rank), cfg
        self.alpha = cfg.alpha_per_rank * self.rank  # alpha = 2r (the paper's 32 at r = 16)
        self.scale = self.alpha / self.rank  # LoRA's alpha / r
        self.gen = torch.Generator().manual_seed(int(view.init_seed))
        self.active = False  # whether adapters are live (between begin_task and a merge)

    # ---- hooks
    def begin_task(self, data: Any) -> None:
        raise NotImplementedError

    def parameters(self) -> list[torch.Tensor]:
        raise NotImplementedError

    def deltas(self) -> list[torch.Tensor]:
        """The adapters' current contribution to each adapted layer (differentiable)."""
        raise NotImplementedError

    def batch(self, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The minibatch a step trains on (the stream's, unless the method adds to it)."""
        return X, y

    def penalty(self) -> torch.Tensor | float:
        return 0.0

    def optimizer(self) -> AdamW:
        return AdamW(self.parameters(), lr=self.cfg.lr)

    def step(self, opt: AdamW) -> None:
        opt.step()

    def end_task(self, data: Any) -> list[np.ndarray]:
        """Merge the task's adapters into W and return the update (default: all of deltas)."""
        update = [d.detach().clone() for d in self.deltas()]
        self.merge(update)
        return [u.double().numpy() for u in update]

    def submit_options(self) -> dict[str, Any]:
        return {}

    # ---- shared machinery
    def effective(self, deltas: list[torch.Tensor] | None = None) -> list[torch.Tensor]:
        if deltas is None:
            deltas = self.deltas() if self.active else []
        W = list(self.W)
        for i, d in zip(self.adapted, deltas):
            W[i] = W[i] + d
        return W

    def logits(self, X: torch.Tensor, deltas: list[torch.Tensor] | None = None) -> torch.Tensor:
        return forward(self.effective(deltas), self.b, X)

    def merge(self, update: list[torch.Tensor]) -> None:
        for i, u in zip(self.adapted, update):
            self.W[i] = self.W[i] + u
        self.active = False

    def layer_gradients(self, X: np.ndarray, y: np.ndarray) -> list[torch.Tensor]:
        """dL/dW (out, in) of each adapted layer at the current network (cross-entropy, mean)."""
        W = [w.detach().clone().requires_grad_(i in self.adapted) for i, w in enumerate(self.effective())]
        with torch.enable_grad():
            loss = torch.nn.functional.cross_entropy(forward(W, self.b, _x(X)), torch.as_tensor(y))
            grads = torch.autograd.grad(loss, [W[i] for i in self.adapted])
        return [g.detach() for g in grads]

    def layer_inputs(self, X: np.ndarray) -> list[torch.Tensor]:
        """The input (n, in) each adapted layer sees at the current network."""
        W, h, out = self.effective(), _x(X), []
        with torch.no_grad():
            for i, (w, b) in enumerate(zip(W, self.b)):
                if i in self.adapted:
                    out.append(h.clone())
                h = torch.nn.functional.linear(h, w, b)
                if i < len(W) - 1:
                    h = torch.nn.functional.gelu(h)
        return out


def _x(X: np.ndarray) -> torch.Tensor:
    return torch.as_tensor(np.asarray(X), dtype=torch.float32)


def kaiming_uniform(rows: int, cols: int, gen: torch.Generator) -> torch.Tensor:
    """torch.nn.init.kaiming_uniform_(a=sqrt(5)) as LoRA's A uses: U(-1/sqrt(cols), 1/sqrt(cols))."""
    bound = 1.0 / math.sqrt(cols)
    return (torch.rand(rows, cols, generator=gen) * 2 - 1) * bound


def grow_subspace(F: torch.Tensor, G: torch.Tensor, threshold: float, cap: int) -> torch.Tensor:
    """GPM-style growth: add the top left singular vectors of (I - F F^T) G until the basis
    captures ``threshold`` of ||G||^2 (||F^T G||^2 >= threshold ||G||^2), keeping dim <= cap."""
    G = G.double()
    total = float((G * G).sum())
    if total == 0.0 or F.shape[1] >= cap:
        return F
    Fd = F.double()
    residual = G - Fd @ (Fd.T @ G)
    captured = total - float((residual * residual).sum())
    P, S, _ = torch.linalg.svd(residual, full_matrices=False)
    need, k = threshold * total - captured, 0
    energy = torch.cumsum(S ** 2, 0)
    if need > 0:
        k = int(torch.searchsorted(energy, torch.tensor(need, dtype=energy.dtype)).item()) + 1
    k = min(k, cap - F.shape[1], len(S))
    if k <= 0:
        return F
    basis, _ = torch.linalg.qr(torch.cat([Fd, P[:, :k]], dim=1))  # re-orthonormalized
    return basis.to(F.dtype)


def run_stream(view: Any, learner: Learner) -> str:
    """Learn every task of the view's stream in order and submit each task's update."""
    for _ in range(int(view.num_tasks)):
        data = view.next_task()
        learner.begin_task(data)
        learner.active = True
        opt = learner.optimizer()
        for _ in range(int(view.epochs)):
            for X, y in data.batches.epoch():
                X, y = learner.batch(X, y)
                loss = torch.nn.functional.cross_entropy(learner.logits(_x(X)), torch.as_tensor(y))
                loss = loss + learner.penalty()
                if not torch.isfinite(loss):
                    raise FloatingPointError("the training loss diverged")
                opt.zero_grad()
                loss.backward()
                learner.step(opt)
        view.submit(learner.end_task(data), **learner.submit_options())
    return view.finish()


class StreamConfig(AgentConfig):
    # the default candidate, and the lr used as is when the view grants no tuning runs (smoke):
    # the old grid's best for every method at this scale [recon]; the paper's code uses 2e-4 for
    # LLaVA-1.5-7B, one epoch per task [code]
    lr: float = 1e-2
    alpha_per_rank: float = 2.0  # alpha = 2r (the paper's 32 at r = 16)
    tune: bool = True  # pick lr (and the method's knob) on the tuning stream when granted


class StreamAgent(Tuned, Agent):
    """Tunes by the protocol on the shared tuning stream (its defaults and its own draws,
    ``view.tuning_runs`` in all, each run once per configuration and cached by the problem),
    then runs the stream with the best configuration."""

    family: ClassVar[str] = "continual"
    paper: ClassVar[str] = PAPER
    Config: ClassVar[type[AgentConfig]] = StreamConfig
    learner: ClassVar[type[Learner]] = Learner
    search_space = {"lr": LR_RANGE}

    def solve(self, view: Any, budget: Any, seed: int) -> str:
        configs = self.tuning_candidates(int(view.tuning_runs) if self.config.tune else 0)
        if len(configs) == 1:
            return self.fit(view, configs[0])
        # the defaults first, then the draws rotated by the seed (workers then build different
        # cached runs at once); the choice is the problem's record's: the best score, ties to the
        # earliest run, so to the defaults, and the recorded configuration is the one used
        n = len(configs)
        order = [0] + [1 + (seed + j) % (n - 1) for j in range(n - 1)]
        scores = [view.validation_score(lambda v, c=configs[i]: self.fit(v, c), configs[i].model_dump())
                  for i in order]
        return self.fit(view, configs[order[choose(scores)]])

    def fit(self, view: Any, cfg: Any) -> str:
        return run_stream(view, self.learner(view, cfg))
