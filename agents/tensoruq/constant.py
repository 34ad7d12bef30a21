"""Constant (the trivial end): μ = the isotropic part of the training mean, Σ = σ² I₆ with σ²
the training residual variance per component (equivariant: both are invariant multiples of
isotropic objects)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from papergym.agent import Agent, AgentConfig
from papergym.agents.tensoruq._common import ISO, PAPER


class ConstantModel:
    def __init__(self, mu: np.ndarray, var: float) -> None:
        self.mu, self.var = mu, var

    def predict(self, inputs: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, str, str]:
        n = len(inputs["volume"])
        return np.tile(self.mu, (n, 1)), np.tile(self.var * np.eye(6), (n, 1, 1)), "gaussian", "km"


class Constant(Agent):
    id: ClassVar[str] = "constant"
    family: ClassVar[str] = "tensoruq"
    role: ClassVar[str] = "baseline"
    paper: ClassVar[str] = PAPER
    Config: ClassVar[type[AgentConfig]] = AgentConfig

    def solve(self, view: Any, budget: Any, seed: int) -> ConstantModel:
        y = np.asarray(view.train.targets)
        iso = ISO.numpy()
        mu = (y.mean(0) @ iso) * iso
        return ConstantModel(mu, float(((y - mu) ** 2).mean()))
