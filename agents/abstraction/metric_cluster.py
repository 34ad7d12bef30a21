"""Abstraction from the logic-derived behavioural metric (the paper's metric construction).

The one-step semantics of the labelled MDP, closed under composition, gives the metric
d(s, t) = max(c_L [L(s) != L(t)], max_a |R(s,a) - R(t,a)| + gamma W1_d(P(.|s,a), P(.|t,a))),
the least fixed point of a gamma-contraction (Ferns et al. 2004 with a label term). The routine
computes d itself on every MDP it is handed (exact transport, fixed-point iteration from 0),
then cuts a complete-linkage clustering at epsilon, so that every same-block pair has
d <= epsilon and, by soundness |V*(s) - V*(t)| <= d(s, t), V* varies by at most epsilon inside
a block [derived]. Returns d with the labels.

epsilon (times V_range) is tuned by the one protocol: the default 0 (the exact construction:
d = 0 exactly on bisimilar pairs) first, then the agent's own draws from log-U[1e-3, 0.3],
``view.tuning_runs`` in all, each scored by the problem's validation MDPs.

``local_only`` (the mechanism's control) stops at the first iterate from 0: the one-step
metric max(c_L [L(s) != L(t)], max_a |R(s,a) - R(t,a)|), the local description without
composition, clustered and tuned the same way.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from papergym.agent import Agent, AgentConfig
from papergym.agents.abstraction.common import EPS_RANGE, complete_linkage, tuned_routine
from papergym.envs.abstraction.core import MDP
from papergym.envs.abstraction.oracles import bisimulation_metric, one_step_metric
from papergym.tuning import Tuned


class MetricRoutine:
    def __init__(self, eps: float, local_only: bool = False) -> None:
        self.eps, self.local_only = eps, local_only

    def __call__(self, mdp: MDP) -> dict[str, np.ndarray]:
        d = one_step_metric(mdp) if self.local_only else bisimulation_metric(mdp)[0]
        return {"labels": complete_linkage(d, self.eps * mdp.v_range), "metric": d}


class MetricCluster(Tuned, Agent):
    id = "metric_cluster"
    family = "abstraction"
    role = "method"
    paper = "zhang2026behavioral"
    problems = ("papergym/StateAbstraction-v*",)
    search_space = {"eps": EPS_RANGE}

    class Config(AgentConfig):
        eps: float = 0.0  # times V_range; 0: blocks are the zero set of d (the bisimulation)
        local_only: bool = False  # the one-step metric (no composition): the control
        tune: bool = True  # tune eps by the protocol when the view grants tuning runs

    def solve(self, view: Any, budget: Any, seed: int) -> MetricRoutine:
        local = self.config.local_only
        return tuned_routine(self, view, lambda c: MetricRoutine(c.eps, local))
