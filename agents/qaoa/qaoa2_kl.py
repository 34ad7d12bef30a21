"""QAOA² with recursive Kernighan–Lin bisection [code].

Bisect every part larger than n_max with networkx's Kernighan–Lin (on |w|, seeded) until
every part fits. Angles U[0, 2π).
"""

from __future__ import annotations

from papergym.agent import Agent, AgentConfig
from papergym.agents.qaoa.common import PartitionPolicy
from papergym.envs.qaoa.partitions import kl_partition, random_angles


class Config(AgentConfig):
    pass


class QAOA2KernighanLin(Agent):
    """Recursive Kernighan–Lin bisection to capacity, random angles."""

    id = "qaoa2_kl"
    family = "qaoa"
    problems = ("papergym/QAOA2Partition-v*",)
    role = "baseline"
    paper = "zheng2026neuralqaoa2"
    Config = Config

    def solve(self, view, budget, seed):
        n_max = view.n_max
        return PartitionPolicy(lambda w, rng: kl_partition(w, n_max, rng),
                               lambda w, labels, rng: random_angles(int(labels.max()) + 1, rng),
                               n_max, view.N_max, seed)
