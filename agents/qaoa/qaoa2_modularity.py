"""QAOA² with modularity partitions (the heuristic Neural QAOA² compares against) [code].

networkx greedy modularity communities on |w|; parts larger than n_max are split into random
chunks; then the pair with the largest connecting weight whose union fits is merged,
repeatedly (ties random). Angles U[0, 2π), as in the paper's comparison.

The artifact also scores a given partition by its modularity (``score``, a proxy:
``score_is_proxy``), so the problem measures how well modularity ranks held-out partitions by
their final r: the paper's motivation (C5: Pearson 0.2859 of modularity with r on g05_100.1).
"""

from __future__ import annotations

import numpy as np

from papergym.agent import Agent, AgentConfig
from papergym.agents.qaoa.common import PartitionPolicy
from papergym.envs.qaoa.logs import modularity
from papergym.envs.qaoa.partitions import modularity_partition, random_angles


class Config(AgentConfig):
    pass


class ModularityPolicy(PartitionPolicy):
    """The modularity-partition policy; ``score`` is the modularity of a given partition."""

    score_is_proxy = True

    def score(self, weights: np.ndarray, labels: np.ndarray, params: np.ndarray) -> float:
        return modularity(weights, labels)


class QAOA2Modularity(Agent):
    """Greedy-modularity partitions + split/merge to capacity, random angles."""

    id = "qaoa2_modularity"
    family = "qaoa"
    problems = ("papergym/QAOA2Partition-v*",)
    role = "baseline"
    paper = "zheng2026neuralqaoa2"
    Config = Config

    def solve(self, view, budget, seed):
        n_max = view.n_max
        return ModularityPolicy(lambda w, rng: modularity_partition(w, n_max, rng),
                                lambda w, labels, rng: random_angles(int(labels.max()) + 1, rng),
                                n_max, view.N_max, seed)
