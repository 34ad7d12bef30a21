"""Hedge / multiplicative weights (Freund and Schapire 1997).

x_{t+1} proportional to x_0 * exp(eta * sum_{s <= t} g_s) (bimatrix: over the player's actions;
polymatrix: the binary case, p = sigmoid(logit(x_0) + eta * sum_s g_s)). Starts from the
environment's x_0 rather than uniform, so all learners share the starting profile.
eta tuned over {0.05, 0.1, 0.5} on training games.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import papergym
from papergym.agents.performative.games._joint import JointPolicy, tune_step


class HedgePolicy(JointPolicy):
    def __init__(self, kind: str, block_sizes: dict[str, int], horizon: int, eta: float,
                 average: bool = False) -> None:
        self.eta = eta
        super().__init__(kind, block_sizes, horizon, average)

    def update(self, state: dict[str, Any], own: np.ndarray, grad: np.ndarray) -> np.ndarray:
        if "logits" not in state:
            if self.kind == "bimatrix":
                state["logits"] = np.log(np.maximum(own, 1e-12))
            else:
                p = np.clip(own, 1e-12, 1 - 1e-12)
                state["logits"] = np.log(p) - np.log1p(-p)
        state["logits"] = state["logits"] + self.eta * grad
        z = state["logits"]
        if self.kind == "bimatrix":
            w = np.exp(z - z.max())
            return w / w.sum()
        return 1.0 / (1.0 + np.exp(-z))


class Hedge(papergym.Agent):
    """Multiplicative weights with a learning rate tuned on training games."""

    id = "hedge"
    family = "performative"
    problems = ("papergym/PerformativeGame-v0",)
    role = "baseline"
    paper = "anagnostides2026"

    class Config(papergym.AgentConfig):
        eta_grid: tuple[float, ...] = (0.05, 0.1, 0.5)
        average: bool = False

    def solve(self, view: Any, budget: papergym.Budget, seed: int) -> Any:
        def make(eta: float) -> HedgePolicy:
            return HedgePolicy(view.kind, view.block_sizes, view.horizon, eta, self.config.average)

        return make(tune_step(view, make, self.config.eta_grid))
