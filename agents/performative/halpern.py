"""Halpern iteration, the paper's recommendation for rho <= 1 in general norms.

x_{t+1} = x_0 / (t + 2) + (1 - 1/(t + 2)) G(x_t) with G(x_t) = Pi_X(zbar_t) and anchor x_0 the
first deployed point. For nonexpansive G the residual obeys
||x_t - G(x_t)|| <= 2 ||x_0 - x*|| / (t + 1) (Lieder 2021), i.e. O(1/eps) deployments,
with no dependence on 1 - rho. No tuning. The flip side is the rate: from gaps of order 1,
eps = 1e-4 needs about 2e4 deployments, so at the standard horizon T = 2,000 it fails most
contractive cells that RRM (linear rate) solves; that is its O(1/t) bound at work, not a bug.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import papergym
from papergym.agents.performative._deploy import DeploymentRule, adapter_for


class HalpernRule(DeploymentRule):
    def reset(self) -> None:
        super().reset()
        self.anchor: np.ndarray | None = None

    def step(self, observation: dict[str, np.ndarray], t: int) -> np.ndarray:
        if t == 0 or self.anchor is None:
            self.anchor = self.adapter.point(observation).copy()  # x_0
        weight = 1.0 / (t + 2)
        return weight * self.anchor + (1.0 - weight) * self.adapter.refit(observation)


class Halpern(papergym.Agent):
    """Halpern's anchored iteration of the RRM map."""

    id = "halpern"
    family = "performative"
    problems = ("papergym/PerformativeAffine-v*", "papergym/StrategicCredit-v0")
    role = "method"
    paper = "anagnostides2026"
    seed_artifact = False  # a deterministic rule: the same at every seed

    class Config(papergym.AgentConfig):
        pass

    def solve(self, view: Any, budget: papergym.Budget, seed: int) -> Any:
        return HalpernRule(adapter_for(view))
