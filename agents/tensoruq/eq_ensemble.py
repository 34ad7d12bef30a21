"""Deep ensemble: M equivariant mean models, each with an isotropic aleatoric variance (the
``eq_iso`` network, its own initialization, the same batches); Σ = mean_m σ_m² I + Cov_m(μ_m),
equivariant because every member is. M = 3 at the standard tier (the spec's 5: ``members``)."""

from __future__ import annotations

from typing import Any, ClassVar

import torch
from torch import nn

from papergym.agents.tensoruq._common import IsoHead, TensorUQConfig, TensorUQLearner


class EnsembleHead(IsoHead):
    def predict(self, nets: list[nn.Module], x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mus, covs = zip(*(IsoHead.predict(self, [net], x) for net in nets))
        mu = torch.stack(mus).to(torch.float64)  # [M, B, 6]
        mean = mu.mean(0)
        spread = mu - mean
        epistemic = torch.einsum("mbi,mbj->bij", spread, spread) / len(nets)
        return mean, torch.stack(covs).mean(0) + epistemic


class EnsembleConfig(TensorUQConfig):
    members: int = 3


class EqEnsemble(TensorUQLearner):
    id: ClassVar[str] = "eq_ensemble"
    role: ClassVar[str] = "baseline"
    Config: ClassVar[type[TensorUQConfig]] = EnsembleConfig
    head_class: ClassVar[type] = EnsembleHead

    def solve(self, view: Any, budget: Any, seed: int) -> Any:
        if not 1 <= self.config.members <= 5:
            raise ValueError(f"{self.id}: members must be in 1..5 (the view's epoch budget), "
                             f"got {self.config.members}")
        self.members = int(self.config.members)
        return super().solve(view, budget, seed)
