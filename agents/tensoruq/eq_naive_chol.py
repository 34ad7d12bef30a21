"""Naive per-irrep Cholesky (diagnostic): the method's network and mean head; the 21 generator
outputs are read as the entries of a lower-triangular factor L in the irreps basis (softplus
diagonal), Σ = P L Lᵀ Pᵀ: SPD, but an entry of a rotating irrep placed in a fixed
slot of L breaks equivariance by design (the authors' "e3nn backbone + Cholesky head" baseline
[code]). Gaussian NLL."""

from __future__ import annotations

from typing import Any, ClassVar

import torch
from torch import nn

from papergym.agents.tensoruq._common import EquivariantNet, FullHead, TensorUQLearner
from papergym.envs.tensoruq import geometry

ROWS, COLS = torch.tril_indices(6, 6)


class CholeskyHead(FullHead):
    def factor(self, net: EquivariantNet, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(μ, L): Σ = P (L Lᵀ) Pᵀ, L filled row by row with the 21 outputs."""
        mu_irr, c = net(x)
        L = c.new_zeros((len(c), 6, 6))
        L[:, ROWS, COLS] = c
        diag = nn.functional.softplus(torch.diagonal(L, dim1=-2, dim2=-1) + net.offset) + 1e-3
        return geometry.tensor_from_irreps(mu_irr), torch.tril(L, -1) + torch.diag_embed(diag)

    def nll(self, net: EquivariantNet, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(μ, Gaussian NLL log|L| + ½||L⁻¹ Pᵀ(y − μ)||²) through the factor."""
        mu, L = self.factor(net, x)
        r = (y - mu) @ geometry.irreps_to_km(x.dtype)  # Pᵀ r
        z = torch.linalg.solve_triangular(L, r[..., None], upper=False)[..., 0]
        return mu, torch.log(torch.diagonal(L, dim1=-2, dim2=-1)).sum(-1) + 0.5 * (z ** 2).sum(-1)

    def predict(self, nets: list[nn.Module], x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mu, L = self.factor(nets[0], x)
        P = geometry.irreps_to_km(torch.float64)
        L = L.to(torch.float64)
        return mu, P @ (L @ L.transpose(-1, -2)) @ P.T


class EqNaiveCholesky(TensorUQLearner):
    id: ClassVar[str] = "eq_naive_chol"
    role: ClassVar[str] = "baseline"
    head_class: ClassVar[type] = CholeskyHead

    def objective(self, net: nn.Module, head: Any, x: torch.Tensor, y: torch.Tensor,
                  w_mse: float) -> torch.Tensor:
        mu, nll = head.nll(net, x, y)
        return w_mse * ((mu - y) ** 2).mean() + nll.mean()
