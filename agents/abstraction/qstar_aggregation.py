"""Q*-epsilon irrelevance (Li, Walsh & Littman 2006): merge states whose optimal action values
agree within epsilon, by complete linkage on max_a |Q*(s, a) - Q*(t, a)|.

The strongest value-preserving classical abstraction given exact Q*; it ignores labels and the
transition structure. epsilon in {0, 0.01, 0.02, 0.05, 0.1} V_range, tuned on the training MDPs as
the largest whose mean value loss is at most tau.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from papergym.agent import Agent, AgentConfig
from papergym.agents.abstraction.common import EPS_GRID, complete_linkage, tune_epsilon
from papergym.envs.abstraction.core import MDP, optimal_values


def q_distance(mdp: MDP) -> np.ndarray:
    _, Q = optimal_values(mdp)
    return np.abs(Q[:, None, :] - Q[None, :, :]).max(axis=2)


class QStarRoutine:
    def __init__(self, eps: float) -> None:
        self.eps = eps

    def __call__(self, mdp: MDP) -> np.ndarray:
        return complete_linkage(q_distance(mdp), self.eps * mdp.v_range)


class QStarAggregation(Agent):
    id = "qstar_aggregation"
    family = "abstraction"
    role = "baseline"
    paper = "li2006"
    problems = ("papergym/StateAbstraction-v0",)

    class Config(AgentConfig):
        eps_grid: tuple[float, ...] = EPS_GRID
        eps: float | None = None  # fixed epsilon (times V_range) instead of tuning

    def solve(self, view: Any, budget: Any, seed: int) -> QStarRoutine:
        if self.config.eps is not None:
            return QStarRoutine(self.config.eps)
        mdps = list(view.mdps)
        eps = tune_epsilon(mdps, [q_distance(m) for m in mdps], view.tau, self.config.eps_grid)
        return QStarRoutine(eps)
