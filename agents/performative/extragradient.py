"""Extragradient (Korpelevich 1976) on the VI of performative stability.

With F(x) = x - E_{D(x)} z = x - zbar(x) (the gradient of l at the deployed point):
  half step  x' = Pi_X(x - eta F(x))          -- deploys x'  to observe zbar(x')
  full step  x+ = Pi_X(x - eta F(x'))         -- deploys x+
Two deployments per iteration, both charged. eta is tuned over {0.25, 0.5, 1} on training
instances. Converges for monotone VIs (rho <= 1); a fair baseline at the threshold.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import papergym
from papergym.agents.performative._deploy import DeploymentRule, adapter_for, tune


class ExtragradientRule(DeploymentRule):
    def __init__(self, adapter: Any, eta: float) -> None:
        self.eta = eta
        super().__init__(adapter)

    def reset(self) -> None:
        super().reset()
        self.base: np.ndarray | None = None  # x of the current iteration while x' is deployed

    def step(self, observation: dict[str, np.ndarray], t: int) -> np.ndarray:
        x, F = self.adapter.point(observation), self.adapter.gradient(observation)
        if self.base is None:
            self.base = x
            return self.adapter.project(x - self.eta * F)        # x' = Pi(x - eta F(x))
        base, self.base = self.base, None
        return self.adapter.project(base - self.eta * F)         # x+ = Pi(x - eta F(x'))


class Extragradient(papergym.Agent):
    """Extragradient with the step size tuned on training instances."""

    id = "extragradient"
    family = "performative"
    problems = ("papergym/PerformativeAffine-v*", "papergym/StrategicCredit-v0")
    role = "baseline"
    paper = "anagnostides2026"

    class Config(papergym.AgentConfig):
        eta_grid: tuple[float, ...] = (0.25, 0.5, 1.0)
        tune_instances: int = 2
        tune_steps: int = 2000

    def solve(self, view: Any, budget: papergym.Budget, seed: int) -> Any:
        adapter = adapter_for(view)
        steps = min(self.config.tune_steps, view.horizon)
        eta, _ = tune(view, lambda e: ExtragradientRule(adapter, e), self.config.eta_grid,
                      self.config.tune_instances, steps)
        return ExtragradientRule(adapter, eta)
