"""Equivariant Gaussian: the method's network, head and safeguards with the Gaussian NLL
½ tr S̄ + ½ q instead of LE-ESO (isolates the loss; the authors' loss module has it as its
Gaussian option)."""

from __future__ import annotations

from typing import ClassVar

from papergym.agents.tensoruq._common import TensorUQLearner


class EqGauss(TensorUQLearner):
    id: ClassVar[str] = "eq_gauss"
    role: ClassVar[str] = "baseline"
