"""Q*-epsilon irrelevance (Li, Walsh & Littman 2006): merge states whose optimal action values
agree within epsilon, by complete linkage on max_a |Q*(s, a) - Q*(t, a)|.

The strongest value-preserving classical abstraction given exact Q*; it ignores labels and the
transition structure. epsilon (times V_range) is tuned by the one protocol, as
``metric_cluster``'s: the default 0 first, then its own draws from log-U[1e-3, 0.3].
"""

from __future__ import annotations

from typing import Any

import numpy as np

from papergym.agent import Agent, AgentConfig
from papergym.agents.abstraction.common import EPS_RANGE, complete_linkage, tuned_routine
from papergym.envs.abstraction.core import MDP, optimal_values
from papergym.tuning import Tuned


def q_distance(mdp: MDP) -> np.ndarray:
    _, Q = optimal_values(mdp)
    return np.abs(Q[:, None, :] - Q[None, :, :]).max(axis=2)


class QStarRoutine:
    def __init__(self, eps: float) -> None:
        self.eps = eps

    def __call__(self, mdp: MDP) -> np.ndarray:
        return complete_linkage(q_distance(mdp), self.eps * mdp.v_range)


class QStarAggregation(Tuned, Agent):
    id = "qstar_aggregation"
    family = "abstraction"
    role = "baseline"
    paper = "li2006"
    problems = ("papergym/StateAbstraction-v*",)
    search_space = {"eps": EPS_RANGE}

    class Config(AgentConfig):
        eps: float = 0.0  # times V_range; 0: Q*-equal states only (Li et al.'s exact case)
        tune: bool = True  # tune eps by the protocol when the view grants tuning runs

    def solve(self, view: Any, budget: Any, seed: int) -> QStarRoutine:
        return tuned_routine(self, view, lambda c: QStarRoutine(c.eps))
