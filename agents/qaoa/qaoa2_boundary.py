"""QAOA² with boundary-minimizing partitions [code].

Louvain communities on |w| (seeded), split/merge to capacity as in the modularity baseline,
then capacity-respecting single-node moves: a boundary node (one with a neighbour in another
block) moves to a neighbouring block with room when that lowers the number of boundary
nodes, pass after pass until no move helps [recon: the split/merge runs before the moves so
that every move respects n_max]. Angles U[0, 2π).
"""

from __future__ import annotations

from papergym.agent import Agent, AgentConfig
from papergym.agents.qaoa.common import PartitionPolicy
from papergym.envs.qaoa.partitions import boundary_partition, random_angles


class Config(AgentConfig):
    max_passes: int = 5


class QAOA2Boundary(Agent):
    """Louvain + boundary-reducing moves within capacity, random angles."""

    id = "qaoa2_boundary"
    family = "qaoa"
    problems = ("papergym/QAOA2Partition-v*",)
    role = "baseline"
    paper = "zheng2026neuralqaoa2"
    Config = Config

    def solve(self, view, budget, seed):
        n_max, passes = view.n_max, self.config.max_passes
        return PartitionPolicy(lambda w, rng: boundary_partition(w, n_max, rng, passes),
                               lambda w, labels, rng: random_angles(int(labels.max()) + 1, rng),
                               n_max, view.N_max, seed)
