"""Repeated risk minimization (Perdomo, Zrnic, Mendler-Dunner, Hardt 2020, eq. (3)).

theta_{t+1} = argmin_theta E_{z ~ D(theta_t)} l(theta; z). On PerformativeAffine-v0 the loss is
1/2 ||x - z||^2, so the exact refit on the revealed data is x_{t+1} = Pi_X(zbar_t) (= G(x_t) when
sigma = 0). On StrategicCredit-v0 it is the exact logistic refit on the responded population
(Newton, gradient norm <= 1e-12). Converges linearly at rate rho when rho < 1 (Perdomo et al.
Thm 3.5); the 2026 paper shows that beyond rho = 1 no RRM-map algorithm is efficient.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import papergym
from papergym.agents.performative._deploy import DeploymentRule, adapter_for


class RRMRule(DeploymentRule):
    def step(self, observation: dict[str, np.ndarray], t: int) -> np.ndarray:
        return self.adapter.refit(observation)  # x_{t+1} = G(x_t): risk minimizer on D(x_t)


class RepeatedRiskMinimization(papergym.Agent):
    """Repeated risk minimization: deploy the exact risk minimizer on the last data."""

    id = "rrm"
    family = "performative"
    problems = ("papergym/PerformativeAffine-v*", "papergym/StrategicCredit-v0")
    role = "baseline"
    paper = "perdomo2020"
    seed_artifact = False  # a deterministic rule: the same at every seed

    class Config(papergym.AgentConfig):
        pass

    def solve(self, view: Any, budget: papergym.Budget, seed: int) -> Any:
        return RRMRule(adapter_for(view))
