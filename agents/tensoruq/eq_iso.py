"""Equivariant isotropic: the method's network and mean head, an invariant covariance σ² I₆ from
one 0e output, Gaussian NLL (isolates the full covariance)."""

from __future__ import annotations

from typing import ClassVar

from papergym.agents.tensoruq._common import IsoHead, TensorUQLearner


class EqIso(TensorUQLearner):
    id: ClassVar[str] = "eq_iso"
    role: ClassVar[str] = "baseline"
    head_class: ClassVar[type] = IsoHead
