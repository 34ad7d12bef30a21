"""Abstraction from the logic-derived behavioural metric (the paper's metric construction).

The one-step semantics of the labelled MDP, closed under composition, gives the metric
d(s, t) = max(c_L [L(s) != L(t)], max_a |R(s,a) - R(t,a)| + gamma W1_d(P(.|s,a), P(.|t,a))),
the least fixed point of a gamma-contraction (Ferns et al. 2004 with a label term). The routine
computes d itself on every MDP it is handed (exact transport, fixed-point iteration from 0),
then cuts a complete-linkage clustering at epsilon, so that every same-block pair has
d <= epsilon and, by soundness |V*(s) - V*(t)| <= d(s, t), V* varies by at most epsilon inside
a block [derived]. epsilon in {0, 0.01, 0.02, 0.05, 0.1} V_range, tuned on the training MDPs as
the largest whose mean value loss is at most tau. Returns d with the labels.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from papergym.agent import Agent, AgentConfig
from papergym.agents.abstraction.common import EPS_GRID, complete_linkage, tune_epsilon
from papergym.envs.abstraction.core import MDP
from papergym.envs.abstraction.oracles import bisimulation_metric


class MetricRoutine:
    def __init__(self, eps: float) -> None:
        self.eps = eps

    def __call__(self, mdp: MDP) -> dict[str, np.ndarray]:
        d, _ = bisimulation_metric(mdp)
        return {"labels": complete_linkage(d, self.eps * mdp.v_range), "metric": d}


class MetricCluster(Agent):
    id = "metric_cluster"
    family = "abstraction"
    role = "method"
    paper = "zhang2026behavioral"
    problems = ("papergym/StateAbstraction-v0",)

    class Config(AgentConfig):
        eps_grid: tuple[float, ...] = EPS_GRID
        eps: float | None = None  # fixed epsilon (times V_range) instead of tuning

    def solve(self, view: Any, budget: Any, seed: int) -> MetricRoutine:
        if self.config.eps is not None:
            return MetricRoutine(self.config.eps)
        mdps = list(view.mdps)
        metrics = [bisimulation_metric(m)[0] for m in mdps]
        return MetricRoutine(tune_epsilon(mdps, metrics, view.tau, self.config.eps_grid))
