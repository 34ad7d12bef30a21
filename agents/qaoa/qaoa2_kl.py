"""QAOA² with recursive Kernighan–Lin bisection [code].

Bisect every part larger than n_max with networkx's Kernighan–Lin (on |w|, seeded) until
every part fits. Angles U[0, 2π).
"""

from __future__ import annotations

import numpy as np

from papergym.agent import Agent, AgentConfig
from papergym.agents.qaoa.common import PartitionPolicy, parts_to_labels, random_angles


class Config(AgentConfig):
    pass


def kl_partition(weights: np.ndarray, n_max: int, rng: np.random.Generator) -> np.ndarray:
    import networkx as nx

    graph = nx.from_numpy_array(np.abs(weights))
    pending, done = [list(range(weights.shape[0]))], []
    while pending:
        part = pending.pop()
        if len(part) <= n_max:
            done.append(part)
            continue
        left, right = nx.community.kernighan_lin_bisection(
            graph.subgraph(part), weight="weight", seed=int(rng.integers(2**31 - 1)))
        pending.extend([sorted(left), sorted(right)])
    return parts_to_labels(done, weights.shape[0])


class QAOA2KernighanLin(Agent):
    """Recursive Kernighan–Lin bisection to capacity, random angles."""

    id = "qaoa2_kl"
    family = "qaoa"
    problems = ("papergym/QAOA2Partition-v0",)
    role = "baseline"
    paper = "zheng2026neuralqaoa2"
    Config = Config

    def solve(self, view, budget, seed):
        n_max = view.n_max
        return PartitionPolicy(lambda w, rng: kl_partition(w, n_max, rng),
                               lambda w, labels, rng: random_angles(int(labels.max()) + 1, rng),
                               n_max, view.N_max, seed)
