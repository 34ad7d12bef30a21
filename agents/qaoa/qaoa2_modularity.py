"""QAOA² with modularity partitions (the heuristic Neural QAOA² compares against) [code].

networkx greedy modularity communities on |w|; parts larger than n_max are split into random
chunks; then the pair with the largest connecting weight whose union fits is merged,
repeatedly (ties random). Angles U[0, 2π), as in the paper's comparison.
"""

from __future__ import annotations

import numpy as np

from papergym.agent import Agent, AgentConfig
from papergym.agents.qaoa.common import (
    PartitionPolicy,
    parts_to_labels,
    random_angles,
    split_and_merge,
)


class Config(AgentConfig):
    pass


def modularity_partition(weights: np.ndarray, n_max: int, rng: np.random.Generator) -> np.ndarray:
    import networkx as nx

    graph = nx.from_numpy_array(np.abs(weights))
    if graph.number_of_edges() == 0:
        parts = [[i] for i in range(weights.shape[0])]
    else:
        parts = [sorted(c) for c in nx.community.greedy_modularity_communities(graph, weight="weight")]
    return parts_to_labels(split_and_merge(parts, weights, n_max, rng), weights.shape[0])


class QAOA2Modularity(Agent):
    """Greedy-modularity partitions + split/merge to capacity, random angles."""

    id = "qaoa2_modularity"
    family = "qaoa"
    problems = ("papergym/QAOA2Partition-v0",)
    role = "baseline"
    paper = "zheng2026neuralqaoa2"
    Config = Config

    def solve(self, view, budget, seed):
        n_max = view.n_max
        return PartitionPolicy(lambda w, rng: modularity_partition(w, n_max, rng),
                               lambda w, labels, rng: random_angles(int(labels.max()) + 1, rng),
                               n_max, view.N_max, seed)
