"""Optimistic gradient ascent (Popov 1980; Daskalakis et al. 2018).

x_{t+1} = Pi(x_t + eta (2 g_t - g_{t-1})), g_t the player's payoff gradient at round t
(g_{-1} = g_0). Last-iterate convergence in zero-sum games with a unique interior equilibrium
(Wei, Lee, Zhang, Luo 2021). eta tuned over {0.05, 0.1, 0.2, 0.3} on training games (the
spec's grid plus 0.3, which 5x5 cyclic games need to reach 1e-4 within T = 2,000).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import papergym
from papergym.agents.performative.games._joint import JointPolicy, tune_step


class OGDAPolicy(JointPolicy):
    def __init__(self, kind: str, block_sizes: dict[str, int], horizon: int, eta: float,
                 average: bool = False) -> None:
        self.eta = eta
        super().__init__(kind, block_sizes, horizon, average)

    def update(self, state: dict[str, Any], own: np.ndarray, grad: np.ndarray) -> np.ndarray:
        previous = state.get("grad", grad)
        state["grad"] = grad
        return self.project(own + self.eta * (2.0 * grad - previous))


class OptimisticGradient(papergym.Agent):
    """Optimistic gradient ascent with a step size tuned on training games."""

    id = "ogda"
    family = "performative"
    problems = ("papergym/PerformativeGame-v0",)
    role = "baseline"
    paper = "anagnostides2026"

    class Config(papergym.AgentConfig):
        eta_grid: tuple[float, ...] = (0.05, 0.1, 0.2, 0.3)
        average: bool = False

    def solve(self, view: Any, budget: papergym.Budget, seed: int) -> Any:
        def make(eta: float) -> OGDAPolicy:
            return OGDAPolicy(view.kind, view.block_sizes, view.horizon, eta, self.config.average)

        return make(tune_step(view, make, self.config.eta_grid))
