"""Pieces shared by the qaoa partition agents: reading observations, split/merge, policies.

Not an agent. ``PartitionPolicy`` wraps a partition rule and an angle rule into the artifact
QAOA2Partition-v0 scores (obs -> {"assign", "params"}).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

TWO_PI = 2 * np.pi
PartitionRule = Callable[[np.ndarray, np.random.Generator], np.ndarray]
AngleRule = Callable[[np.ndarray, np.ndarray, np.random.Generator], np.ndarray]


def graph_from_obs(observation: dict) -> tuple[np.ndarray, np.ndarray]:
    """The current-level weights (n×n, float64) and node features (n×5) of a dense obs."""
    n = int(np.asarray(observation["mask"]).sum())
    weights = np.asarray(observation["adj"], dtype=np.float64)[:n, :n]
    return weights, np.asarray(observation["x"], dtype=np.float64)[:n]


def parts_to_labels(parts: list[list[int]], n: int) -> np.ndarray:
    labels = np.empty(n, dtype=np.int64)
    for label, part in enumerate(parts):
        labels[list(part)] = label
    return labels


def split_and_merge(parts: list[list[int]], weights: np.ndarray, n_max: int,
                    rng: np.random.Generator) -> list[list[int]]:
    """Split parts larger than n_max into random chunks, then repeatedly merge the pair with
    the largest connecting weight Σ|w| whose union fits (ties broken at random) [code]."""
    pieces: list[list[int]] = []
    for part in parts:
        part = list(part)
        if len(part) <= n_max:
            pieces.append(part)
            continue
        shuffled = [part[i] for i in rng.permutation(len(part))]
        chunks = math.ceil(len(part) / n_max)
        pieces.extend([list(c) for c in np.array_split(np.array(shuffled), chunks)])
    absw = np.abs(weights)
    while len(pieces) > 1:
        member = np.zeros((len(pieces), weights.shape[0]))
        for i, piece in enumerate(pieces):
            member[i, piece] = 1.0
        between = member @ absw @ member.T
        sizes = member.sum(axis=1)
        fits = (sizes[:, None] + sizes[None, :] <= n_max) & ~np.eye(len(pieces), dtype=bool)
        if not fits.any():
            break
        score = np.where(fits, between + 1e-9 * rng.random(between.shape), -np.inf)
        score[np.tril_indices(len(pieces))] = -np.inf  # pairs i < j only
        i, j = np.unravel_index(int(np.argmax(score)), score.shape)
        pieces[i] = pieces[i] + pieces[j]
        del pieces[j]
    return pieces


def random_angles(k: int, rng: np.random.Generator) -> np.ndarray:
    """(k, 2) initial (γ, β) drawn uniformly from [0, 2π) — the baselines' angles [code]."""
    return rng.uniform(0.0, TWO_PI, size=(k, 2))


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
