"""Independent projected gradient play with the environment's step lam.

Each player: x_i <- Pi(x_i + lam * grad_i u_i(x)). On PerformativeAffine-v0 this is exactly RRM,
G(x) = Pi_X(x + lam (R y, C^T x)) (bimatrix) or Pi_[0,1]^d(x + lam (A x + b)) (polymatrix)
[derived; the equivalence is tested to 1e-12]. No tuning (only this learner uses lam).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import papergym
from papergym.agents.performative.games._joint import JointPolicy


class GradientPlayPolicy(JointPolicy):
    def __init__(self, kind: str, block_sizes: dict[str, int], horizon: int, step: float,
                 average: bool = False) -> None:
        self.step = step
        super().__init__(kind, block_sizes, horizon, average)

    def update(self, state: dict[str, Any], own: np.ndarray, grad: np.ndarray) -> np.ndarray:
        return self.project(own + self.step * grad)  # = RRM's G on the performative instance


class GradientPlay(papergym.Agent):
    """Simultaneous projected gradient ascent (= RRM in the performative view)."""

    id = "gradient_play"
    family = "performative"
    problems = ("papergym/PerformativeGame-v0",)
    role = "baseline"
    paper = "anagnostides2026"

    class Config(papergym.AgentConfig):
        average: bool = False  # play the time-averaged strategy in the last round

    def solve(self, view: Any, budget: papergym.Budget, seed: int) -> Any:
        return GradientPlayPolicy(view.kind, view.block_sizes, view.horizon, view.lam,
                                  self.config.average)
