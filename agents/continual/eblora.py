"""EBLoRA (Gu, Luo, Zhou, Zhang, Zhang, Wei, ICML 2026): each task's low-rank update with its
magnitude decoupled from its direction, the direction on a restricted Stiefel manifold.

Per adapted layer W (out, in): Delta W = (alpha / r) s U V^T with U in St(out, r), V in St(in, r)
and F^T V = 0, F (in, p) an orthonormal basis of earlier tasks' principal gradient subspace;
s is one scalar per adapter, so all r singular values of Delta W equal |s| alpha / r — the
spectrum is balanced by construction (the paper's remedy for spectral imbalance).

- Init per task [code]: G = dL/dW on the gradient subset; G_t = G^T; Ghat = (I - F F^T) G_t;
  top-r SVD Ghat = P S Q^T; V <- P_r, U <- Q_r, s <- -0.005, so Delta W points along -G's
  projected polar factor (an exact thin SVD here instead of the code's randomized one).
- Step ("Riemannian AdamW") [code]: (pre) grad_U <- grad_U - U grad_U^T U; grad_V <- (I - F F^T)
  grad_V, then grad_V <- grad_V - V grad_V^T V; (step) AdamW on U, V, s, with s in a parameter
  group of its own (the code's "lora_scale" group) whose lr is lr * ``magnitude_lr_mult``
  (default 1, the code's; tuned in [1, 100] with lr, inside the section's budget); (post) Delta = X_new -
  X_old scaled by sqrt(c / r) (the code's division by sqrt(r / c); c = the network width here
  [recon]), projected the same way at X_old, retracted X <- polar(X_old + Delta) (for V with F
  projected out first). s is plain AdamW.
- After the task [code]: merge W <- W + Delta W; recompute the gradients on the subset and grow
  F GPM-style until ||F^T G_t||^2 >= 0.99 ||G_t||^2, keeping dim F <= in - r [recon].

Ablations (hooks of one learner): ``eblora_nof`` (no F: plain Stiefel), ``eblora_diag`` (a
learnable diagonal instead of the scalar s, which re-allows imbalance), ``eblora_randinit``
(random Stiefel init instead of the gradient's polar factor).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import torch

from papergym.agents.continual._common import (
    LR_RANGE,
    AdamW,
    Learner,
    StreamAgent,
    StreamConfig,
    grow_subspace,
)
from papergym.tuning import LogUniform

S_INIT = -0.005  # the code's initial magnitude of every layer
# the magnitude's step relative to the directions' (searched with lr, inside the same budget)
MAGNITUDE_LR_MULT = LogUniform(1.0, 100.0)


# ----------------------------------------------------------------------------- Stiefel geometry


def off_subspace(M: torch.Tensor, F: torch.Tensor | None) -> torch.Tensor:
    """(I - F F^T) M; the identity when F is None or empty."""
    if F is None or F.shape[-1] == 0:
        return M
    return M - F @ (F.T @ M)


def riemannian_grad(X: torch.Tensor, G: torch.Tensor, F: torch.Tensor | None = None) -> torch.Tensor:
    """The code's pre-projection: G <- (I - F F^T) G, then G - X G^T X (tangent at X when X^T X = I:
    X^T xi + xi^T X = X^T G - G^T X + G^T X - X^T G = 0)."""
    G = off_subspace(G, F)
    return G - X @ (G.T @ X)


tangent_project = riemannian_grad  # the same map, applied to a step instead of a gradient [code]


def polar(M: torch.Tensor) -> torch.Tensor:
    """The orthonormal polar factor P Q^T of M = P S Q^T (thin SVD)."""
    P, _, Qt = torch.linalg.svd(M, full_matrices=False)
    return P @ Qt


def retract(X: torch.Tensor, D: torch.Tensor, F: torch.Tensor | None = None) -> torch.Tensor:
    """Polar retraction X <- polar((I - F F^T)(X + D)): orthonormal columns, orthogonal to F."""
    return polar(off_subspace(X + D, F))


def random_stiefel(rows: int, cols: int, gen: torch.Generator, F: torch.Tensor | None = None) -> torch.Tensor:
    Z = off_subspace(torch.randn(rows, cols, generator=gen, dtype=torch.float64), F)
    return polar(Z)


# ----------------------------------------------------------------------------- learner


class EBLoRAConfig(StreamConfig):
    energy_threshold: float = 0.99  # subspace growth (the code's 99%)
    # the magnitude s steps in a parameter group of its own (the code's "lora_scale" group) with
    # lr * magnitude_lr_mult; the code gives that group the shared lr, so the default is 1 [code]
    magnitude_lr_mult: float = 1.0


class EBLoRALearner(Learner):
    use_subspace: ClassVar[bool] = True
    diagonal: ClassVar[bool] = False
    gradient_init: ClassVar[bool] = True

    def __init__(self, view: Any, cfg: Any) -> None:
        super().__init__(view, cfg)
        self.c = float(self.W[0].shape[0])  # the step-amplification constant: the network width
        self.F = [torch.zeros(self.W[i].shape[1], 0, dtype=torch.float64) for i in self.adapted]

    def begin_task(self, data: Any) -> None:
        grads = self.layer_gradients(*data.gradient_data()) if self.gradient_init else None
        self.U, self.V, self.s = [], [], []
        for k, i in enumerate(self.adapted):
            out, inp = self.W[i].shape
            F = self.F[k]
            if grads is not None:
                Ghat = off_subspace(grads[k].T.double(), F)  # (in, out)
                P, _, Qt = torch.linalg.svd(Ghat, full_matrices=False)
                V, U = P[:, : self.rank], Qt[: self.rank].T
                V = polar(off_subspace(V, F))  # exact orthogonality to F in float64
            else:
                V, U = random_stiefel(inp, self.rank, self.gen, F), random_stiefel(out, self.rank, self.gen)
            self.U.append(U.float().contiguous().requires_grad_())
            self.V.append(V.float().contiguous().requires_grad_())
            self.s.append(torch.full((self.rank if self.diagonal else 1,), S_INIT, requires_grad=True))

    def parameters(self) -> list[torch.Tensor]:
        return [*self.U, *self.V, *self.s]

    def optimizer(self) -> AdamW:
        """AdamW over two parameter groups: the directions U, V at lr, the magnitudes s at
        lr * magnitude_lr_mult (Adam moves s by about its lr per step, from |s| = 0.005)."""
        lr = self.cfg.lr
        return AdamW([{"params": [*self.U, *self.V]},
                      {"params": list(self.s), "lr": lr * self.cfg.magnitude_lr_mult}], lr=lr)

    def deltas(self) -> list[torch.Tensor]:
        return [self.scale * (U * s) @ V.T for U, V, s in zip(self.U, self.V, self.s)]

    def step(self, opt: AdamW) -> None:
        with torch.no_grad():
            old_U, old_V = [], []
            for U, V, F in zip(self.U, self.V, self.F):
                if U.grad is not None:
                    U.grad.copy_(riemannian_grad(U.double(), U.grad.double()).float())
                if V.grad is not None:
                    V.grad.copy_(riemannian_grad(V.double(), V.grad.double(), self._f(F)).float())
                old_U.append(U.detach().double().clone())
                old_V.append(V.detach().double().clone())
            opt.step()
            amplify = math.sqrt(self.c / self.rank)
            for U, V, F, U0, V0 in zip(self.U, self.V, self.F, old_U, old_V):
                D = (U.double() - U0) * amplify
                U.copy_(retract(U0, tangent_project(U0, D)).float())
                D = (V.double() - V0) * amplify
                V.copy_(retract(V0, tangent_project(V0, D, self._f(F)), self._f(F)).float())

    def _f(self, F: torch.Tensor) -> torch.Tensor | None:
        return F if self.use_subspace else None

    def end_task(self, data: Any) -> list[np.ndarray]:
        update = super().end_task(data)  # merged
        if self.use_subspace:
            grads = self.layer_gradients(*data.gradient_data())  # pass 2: at the merged network
            for k, G in enumerate(grads):
                cap = G.shape[1] - self.rank
                self.F[k] = grow_subspace(self.F[k], G.T, self.cfg.energy_threshold, cap)
        return update


class EBLoRA(StreamAgent):
    id: ClassVar[str] = "eblora"
    role: ClassVar[str] = "method"
    Config: ClassVar[type] = EBLoRAConfig
    learner: ClassVar[type[Learner]] = EBLoRALearner
    search_space = {"lr": LR_RANGE, "magnitude_lr_mult": MAGNITUDE_LR_MULT}


class NoSubspaceLearner(EBLoRALearner):
    use_subspace: ClassVar[bool] = False


class DiagonalLearner(EBLoRALearner):
    diagonal: ClassVar[bool] = True


class RandomInitLearner(EBLoRALearner):
    gradient_init: ClassVar[bool] = False


class EBLoRANoF(EBLoRA):
    """Ablation: plain Stiefel manifold (no restriction to earlier tasks' complement)."""

    id: ClassVar[str] = "eblora_nof"
    role: ClassVar[str] = "baseline"
    learner: ClassVar[type[Learner]] = NoSubspaceLearner


class EBLoRADiag(EBLoRA):
    """Ablation: a learnable diagonal Sigma instead of the scalar s (re-allows imbalance)."""

    id: ClassVar[str] = "eblora_diag"
    role: ClassVar[str] = "baseline"
    learner: ClassVar[type[Learner]] = DiagonalLearner


class EBLoRARandInit(EBLoRA):
    """Ablation: random Stiefel init instead of the projected gradient's polar factor."""

    id: ClassVar[str] = "eblora_randinit"
    role: ClassVar[str] = "baseline"
    learner: ClassVar[type[Learner]] = RandomInitLearner
