"""Direct symmetric output (diagnostic): the 21 equivariant generator coefficients used as Σ
itself, Σ = s₀ I + Σ_j c_j B_j, without the exponential map: equivariant but not guaranteed SPD
(the authors' "e3nn + direct output" baseline [code]). Trained with the Gaussian NLL on the
eigenvalues clipped at 1e-4; the problem scores non-SPD outputs clipped and reports the
SPD-valid rate."""

from __future__ import annotations

from typing import ClassVar

import torch
from torch import nn

from papergym.agents.tensoruq._common import EquivariantNet, FullHead, TensorUQLearner, Terms
from papergym.envs.tensoruq import geometry

EIG_FLOOR = 1e-4


class DirectHead(FullHead):
    def terms(self, net: EquivariantNet, x: torch.Tensor, y: torch.Tensor) -> Terms:
        mu, Sigma = self.outputs(net, x)

        def log_clip(lam: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            c = lam.clamp_min(EIG_FLOOR)
            return torch.log(c), (lam > EIG_FLOOR).to(lam.dtype) / c

        def inverse_clip(lam: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            c = lam.clamp_min(EIG_FLOOR)
            return 1 / c, -(lam > EIG_FLOOR).to(c.dtype) / c ** 2

        logdet = torch.diagonal(geometry.spectral_map(Sigma, log_clip), dim1=-2, dim2=-1).sum(-1)
        r = y - mu
        q = torch.einsum("bi,bij,bj->b", r, geometry.spectral_map(Sigma, inverse_clip), r)
        lam = torch.linalg.eigvalsh(Sigma.to(torch.float64)).to(Sigma.dtype)
        return Terms(mu, logdet, q, lam, lam)

    def predict(self, nets: list[nn.Module], x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.outputs(nets[0], x)


class EqDirect(TensorUQLearner):
    id: ClassVar[str] = "eq_direct"
    role: ClassVar[str] = "baseline"
    head_class: ClassVar[type] = DirectHead
