"""Partition rules of the QAOA² baselines, shared by the problem and the agents.

The problem uses them to build its logged runs (the labelled QAOA² runs an evaluator trains
on, ``task.py``) and the held-out runs on which it checks an artifact's evaluator; the
baseline agents (``agents/qaoa/qaoa2_*.py``) wrap them into partition policies.

- ``random_partition``: equal chunks of a random permutation (the original QAOA²) [code].
- ``modularity_partition``: networkx greedy modularity communities on |w| [code].
- ``boundary_partition``: Louvain communities, then capacity-respecting moves that reduce the
  number of boundary nodes [code; recon: split/merge before the moves so moves respect n_max].
- ``kl_partition``: recursive Kernighan–Lin bisection on |w| until every part fits [code].
- ``split_and_merge``: split parts larger than n_max into random chunks, then repeatedly merge
  the pair with the largest connecting Σ|w| whose union fits (ties at random) [code].
- ``perturb_partition``: swap ``swaps`` random node pairs between blocks [recon]: partitions
  near a heuristic one, so that an evaluator sees contrasting partitions of the same graph.
- ``random_angles``: (k, 2) initial (γ, β) from U[0, 2π), the baselines' angles [code].
"""

from __future__ import annotations

import math

import numpy as np

TWO_PI = 2 * np.pi


def random_angles(k: int, rng: np.random.Generator) -> np.ndarray:
    """(k, 2) initial (γ, β) drawn uniformly from [0, 2π)."""
    return rng.uniform(0.0, TWO_PI, size=(k, 2))


def parts_to_labels(parts: list[list[int]], n: int) -> np.ndarray:
    labels = np.empty(n, dtype=np.int64)
    for label, part in enumerate(parts):
        labels[list(part)] = label
    return labels


def random_partition(weights: np.ndarray, n_max: int, rng: np.random.Generator) -> np.ndarray:
    """Equal chunks of a random permutation."""
    n = weights.shape[0]
    labels = np.empty(n, dtype=np.int64)
    for label, chunk in enumerate(np.array_split(rng.permutation(n), math.ceil(n / n_max))):
        labels[chunk] = label
    return labels


def split_and_merge(parts: list[list[int]], weights: np.ndarray, n_max: int,
                    rng: np.random.Generator) -> list[list[int]]:
    """Split parts larger than n_max into random chunks, then repeatedly merge the pair with
    the largest connecting weight Σ|w| whose union fits (ties broken at random)."""
    pieces: list[list[int]] = []
    for part in parts:
        part = list(part)
        if len(part) <= n_max:
            pieces.append(part)
            continue
        shuffled = [part[i] for i in rng.permutation(len(part))]
        pieces.extend([list(c) for c in np.array_split(np.array(shuffled),
                                                       math.ceil(len(part) / n_max))])
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


def modularity_partition(weights: np.ndarray, n_max: int, rng: np.random.Generator) -> np.ndarray:
    import networkx as nx

    graph = nx.from_numpy_array(np.abs(weights))
    if graph.number_of_edges() == 0:
        parts = [[i] for i in range(weights.shape[0])]
    else:
        parts = [sorted(c) for c in nx.community.greedy_modularity_communities(graph, weight="weight")]
    return parts_to_labels(split_and_merge(parts, weights, n_max, rng), weights.shape[0])


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


def perturb_partition(labels: np.ndarray, swaps: int, rng: np.random.Generator) -> np.ndarray:
    """``labels`` with ``swaps`` random pairs of nodes in different blocks exchanged (block
    sizes, hence capacity, unchanged)."""
    labels = np.asarray(labels, dtype=np.int64).copy()
    if labels.max(initial=0) == 0:
        return labels
    for _ in range(int(swaps)):
        u = int(rng.integers(labels.size))
        others = np.flatnonzero(labels != labels[u])
        v = int(others[rng.integers(others.size)])
        labels[u], labels[v] = labels[v], labels[u]
    return labels


HEURISTICS = {"modularity": modularity_partition, "boundary": boundary_partition,
              "kl": kl_partition}
