"""QAOA² with random partitions and random angles (Zhou et al. 2022, the original QAOA²).

Shuffle the nodes, split them into ⌈N/n_max⌉ chunks of equal size, draw each block's
(γ, β) from U[0, 2π) [code]. Nothing is tuned.
"""

from __future__ import annotations

from papergym.agent import Agent, AgentConfig
from papergym.agents.qaoa.common import PartitionPolicy
from papergym.envs.qaoa.partitions import random_angles, random_partition


class Config(AgentConfig):
    pass


class QAOA2Random(Agent):
    """Original QAOA²: random equal-size partitions, random angles."""

    id = "qaoa2_random"
    family = "qaoa"
    problems = ("papergym/QAOA2Partition-v*",)
    role = "baseline"
    paper = "zhou2022qaoa2"
    Config = Config

    def solve(self, view, budget, seed):
        n_max = view.n_max
        return PartitionPolicy(lambda w, rng: random_partition(w, n_max, rng),
                               lambda w, labels, rng: random_angles(int(labels.max()) + 1, rng),
                               n_max, view.N_max, seed)
