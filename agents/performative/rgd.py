"""Repeated gradient descent (Perdomo et al. 2020, Sec. 4).

x_{t+1} = Pi_X(x_t - eta * grad_x E_{z ~ D(x_t)} l(x_t; z)) = Pi_X(x_t - eta (x_t - zbar_t)) for
l = 1/2 ||x - z||^2 (eta = 1 is RRM). eta is tuned on training instances over ``eta_grid``
(the spec's grid {0.1, 0.3, 0.5, 1.0}) by the empirical gap the agent observes. Credit: the
grid also holds eta = 2 / (beta_hat + 2 lambda), the step of the Perdomo et al. code.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import papergym
from papergym.agents.performative._deploy import DeploymentRule, adapter_for, tune


class RGDRule(DeploymentRule):
    def __init__(self, adapter: Any, eta: float) -> None:
        super().__init__(adapter)
        self.eta = eta

    def step(self, observation: dict[str, np.ndarray], t: int) -> np.ndarray:
        x, grad = self.adapter.point(observation), self.adapter.gradient(observation)
        return self.adapter.project(x - self.eta * grad)  # one gradient step on D(x_t)


class RepeatedGradientDescent(papergym.Agent):
    """Repeated gradient descent with a step size tuned on training instances."""

    id = "rgd"
    family = "performative"
    problems = ("papergym/PerformativeAffine-v*", "papergym/StrategicCredit-v0")
    role = "baseline"
    paper = "perdomo2020"

    class Config(papergym.AgentConfig):
        eta_grid: tuple[float, ...] = (0.1, 0.3, 0.5, 1.0)
        tune_instances: int = 2
        tune_steps: int = 2000  # deployments per training instance and grid value

    def solve(self, view: Any, budget: papergym.Budget, seed: int) -> Any:
        adapter = adapter_for(view)
        grid = list(self.config.eta_grid)
        if getattr(view, "problem", "affine") == "credit":
            grid.insert(0, 2.0 / (view.beta_hat + 2.0 * view.l2))  # Perdomo et al.'s step
        steps = min(self.config.tune_steps, view.horizon)
        eta, _ = tune(view, lambda e: RGDRule(adapter, e), grid, self.config.tune_instances,
                      steps)
        return RGDRule(adapter, eta)
