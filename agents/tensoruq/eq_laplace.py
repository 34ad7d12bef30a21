"""Equivariant LE-ESO UQ (the paper's method): the pooled-moment equivariant network with a mean
head (0e + 2e) and a generator head (2x0e + 2x2e + 1x4e) -> S in sym(6) -> Σ = expm(S) through
the safeguarded spectrum, trained with the Log-Euclidean Equivariant Scoring Objective (LE-ESO,
the authors' training code; constants w_ld = 0.1, τ = 5, c = 0.5, κ = 100) plus the auxiliary
MSE schedule. Dielectric: predicts KM(logm ε) (``log_km``). Predictive law: Laplace.
``loss = "laplace_floor"``: the exact Laplace NLL with q floored at 1e-3 instead [recon].
``distance = "squared"``: LE-ESO with ½ D_M² in place of its robust ρ_τ(D_M), every other term,
the Laplace predictive law and the schedule unchanged [recon]: the control of the robustness
claim, which isolates the distance term from everything else that differs from ``eq_gauss``."""

from __future__ import annotations

from typing import ClassVar, Literal

import torch

from papergym.agents.tensoruq._common import (
    TensorUQConfig,
    TensorUQLearner,
    Terms,
    laplace_floor_nll,
    le_eso,
)


class EqLaplaceConfig(TensorUQConfig):
    loss: Literal["le_eso", "laplace_floor"] = "le_eso"
    w_ld: float = 0.1
    tau: float = 5.0
    spread_weight: float = 0.5
    kappa: float = 100.0
    # "squared": ½ D_M² in place of ρ_τ(D_M), all else equal [recon] (the robustness claim's control)
    distance: Literal["robust", "squared"] = "robust"


class EqLaplace(TensorUQLearner):
    id: ClassVar[str] = "eq_laplace"
    role: ClassVar[str] = "method"
    Config: ClassVar[type[TensorUQConfig]] = EqLaplaceConfig
    predictive_family: ClassVar[str] = "laplace"

    def loss(self, terms: Terms) -> torch.Tensor:
        cfg = self.config
        if cfg.loss == "laplace_floor":
            return laplace_floor_nll(terms)
        return le_eso(terms, cfg.lam_lo, cfg.lam_hi, w_ld=cfg.w_ld, tau=cfg.tau, c=cfg.spread_weight,
                      kappa=cfg.kappa, distance=cfg.distance)
