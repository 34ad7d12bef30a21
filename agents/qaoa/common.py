"""Pieces shared by the qaoa partition agents: reading observations, policies, actions.

Not an agent. The partition rules live in ``papergym.envs.qaoa.partitions`` (the problem
builds its logged runs with them too). ``PartitionPolicy`` wraps a partition rule and an
angle rule into the artifact
QAOA2Partition-v0 scores (obs -> {"assign", "params"}).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from papergym.envs.qaoa.partitions import TWO_PI

PartitionRule = Callable[[np.ndarray, np.random.Generator], np.ndarray]
AngleRule = Callable[[np.ndarray, np.ndarray, np.random.Generator], np.ndarray]


def graph_from_obs(observation: dict) -> tuple[np.ndarray, np.ndarray]:
    """The current-level weights (n×n, float64) and node features (n×5) of a dense obs."""
    n = int(np.asarray(observation["mask"]).sum())
    weights = np.asarray(observation["adj"], dtype=np.float64)[:n, :n]
    return weights, np.asarray(observation["x"], dtype=np.float64)[:n]


class PartitionPolicy:
    """obs -> action of QAOA2Partition-v0 from a partition rule and an angle rule.

    ``partition(weights, rng) -> labels`` is called when the level graph has more than n_max
    nodes (else every node is block 0); ``angles(weights, labels, rng) -> (k, 2)``.
    Randomness comes from one Generator seeded at construction (trial seed).
    """

    def __init__(self, partition: PartitionRule, angles: AngleRule, n_max: int, N_max: int,
                 seed: int) -> None:
        self.partition, self.angles = partition, angles
        self.n_max, self.N_max = int(n_max), int(N_max)
        self.rng = np.random.default_rng(seed)

    def __call__(self, observation: dict) -> dict[str, np.ndarray]:
        weights, _ = graph_from_obs(observation)
        n = weights.shape[0]
        if n > self.n_max:
            labels = np.asarray(self.partition(weights, self.rng), dtype=np.int64)
        else:
            labels = np.zeros(n, dtype=np.int64)
        params = np.asarray(self.angles(weights, labels, self.rng), dtype=np.float64)
        return make_action(labels, params, self.N_max)


def make_action(labels: np.ndarray, params: np.ndarray, N_max: int) -> dict[str, np.ndarray]:
    assign = np.zeros(N_max, dtype=np.int64)
    assign[: labels.size] = labels
    full = np.zeros((N_max, 2), dtype=np.float32)
    full[: min(len(params), N_max)] = np.mod(params[:N_max], TWO_PI)
    return {"assign": assign, "params": full}
