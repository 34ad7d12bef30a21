"""Krasnosel'skii-Mann averaging of the RRM map.

x_{t+1} = (1 - a) x_t + a Pi_X(zbar_t) = (1 - a) x_t + a G(x_t). For nonexpansive G the
residual ||x_t - G(x_t)|| is non-increasing and tends to 0 (the standard fix for the
rho = 1 cycling of RRM). a is tuned over {0.25, 0.5, 0.75} on training instances.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import papergym
from papergym.agents.performative._deploy import DeploymentRule, adapter_for, tune


class KMRule(DeploymentRule):
    def __init__(self, adapter: Any, averaging: float) -> None:
        super().__init__(adapter)
        self.averaging = averaging

    def step(self, observation: dict[str, np.ndarray], t: int) -> np.ndarray:
        a, x = self.averaging, self.adapter.point(observation)
        return (1.0 - a) * x + a * self.adapter.refit(observation)  # (1-a) x_t + a G(x_t)


class KrasnoselskiiMann(papergym.Agent):
    """Krasnosel'skii-Mann iteration with the averaging weight tuned on training instances."""

    id = "km"
    family = "performative"
    problems = ("papergym/PerformativeAffine-v*", "papergym/StrategicCredit-v0")
    role = "baseline"
    paper = "anagnostides2026"

    class Config(papergym.AgentConfig):
        averaging_grid: tuple[float, ...] = (0.25, 0.5, 0.75)
        tune_instances: int = 2
        tune_steps: int = 2000

    def solve(self, view: Any, budget: papergym.Budget, seed: int) -> Any:
        adapter = adapter_for(view)
        steps = min(self.config.tune_steps, view.horizon)
        a, _ = tune(view, lambda v: KMRule(adapter, v), self.config.averaging_grid,
                    self.config.tune_instances, steps)
        return KMRule(adapter, a)
