"""QAOA² with boundary-minimizing partitions [code].

Louvain communities on |w| (seeded), split/merge to capacity as in the modularity baseline,
then capacity-respecting single-node moves: a boundary node (one with a neighbour in another
block) moves to a neighbouring block with room when that lowers the number of boundary
nodes, pass after pass until no move helps [recon: the split/merge runs before the moves so
that every move respects n_max]. Angles U[0, 2π).
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
    max_passes: int = 5


def boundary_count(adjacent: np.ndarray, labels: np.ndarray) -> int:
    crossing = adjacent & (labels[:, None] != labels[None, :])
    return int(crossing.any(axis=1).sum())


def boundary_partition(weights: np.ndarray, n_max: int, rng: np.random.Generator,
                       max_passes: int = 5) -> np.ndarray:
    import networkx as nx

    n = weights.shape[0]
    graph = nx.from_numpy_array(np.abs(weights))
    if graph.number_of_edges() == 0:
        parts = [[i] for i in range(n)]
    else:
        parts = [sorted(c) for c in nx.community.louvain_communities(
            graph, weight="weight", seed=int(rng.integers(2**31 - 1)))]
    labels = parts_to_labels(split_and_merge(parts, weights, n_max, rng), n)
    adjacent = weights != 0
    current = boundary_count(adjacent, labels)
    for _ in range(max_passes):
        improved = False
        for node in rng.permutation(n):
            neighbour_blocks = set(labels[adjacent[node]].tolist()) - {int(labels[node])}
            for block in sorted(neighbour_blocks):
                if np.sum(labels == block) >= n_max:
                    continue
                old = labels[node]
                labels[node] = block
                count = boundary_count(adjacent, labels)
                if count < current:
                    current, improved = count, True
                    break
                labels[node] = old
        if not improved:
            break
    return labels


class QAOA2Boundary(Agent):
    """Louvain + boundary-reducing moves within capacity, random angles."""

    id = "qaoa2_boundary"
    family = "qaoa"
    problems = ("papergym/QAOA2Partition-v0",)
    role = "baseline"
    paper = "zheng2026neuralqaoa2"
    Config = Config

    def solve(self, view, budget, seed):
        n_max, passes = view.n_max, self.config.max_passes
        return PartitionPolicy(lambda w, rng: boundary_partition(w, n_max, rng, passes),
                               lambda w, labels, rng: random_angles(int(labels.max()) + 1, rng),
                               n_max, view.N_max, seed)
