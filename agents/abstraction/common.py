"""Helpers shared by the abstraction agents: complete-linkage clustering under a distance, and
the tuning rule of the spec (the largest epsilon whose mean value loss on the training MDPs is at
most tau)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import squareform

from papergym.envs.abstraction.core import MDP, canonical, optimal_values, value_loss

EPS_GRID = (0.0, 0.01, 0.02, 0.05, 0.1)  # times V_range


def complete_linkage(D: np.ndarray, eps: float, groups: np.ndarray | None = None) -> np.ndarray:
    """Blocks in which every pair has D <= eps (complete linkage cut at eps); ``groups`` (e.g.
    observed labels) are never merged with each other."""
    S = D.shape[0]
    if groups is not None:
        out = np.zeros(S, dtype=np.int64)
        offset = 0
        for g in np.unique(groups):
            members = np.nonzero(groups == g)[0]
            sub = complete_linkage(D[np.ix_(members, members)], eps)
            out[members] = sub + offset
            offset += sub.max() + 1
        return canonical(out)
    if S == 1:
        return np.zeros(1, dtype=np.int64)
    sym = np.maximum((D + D.T) / 2, 0.0)
    np.fill_diagonal(sym, 0.0)
    tree = linkage(squareform(sym, checks=False), method="complete")
    return canonical(fcluster(tree, t=eps * (1 + 1e-12) + 1e-12, criterion="distance"))


def tune_epsilon(mdps: Sequence[MDP], distances: Sequence[np.ndarray], tau: float,
                 grid: Sequence[float] = EPS_GRID,
                 cluster: Callable[[MDP, np.ndarray, float], np.ndarray] | None = None) -> float:
    """The largest eps (times V_range) whose mean value loss over ``mdps`` is <= tau."""
    cluster = cluster or (lambda mdp, D, eps: complete_linkage(D, eps))
    values = [optimal_values(mdp)[0] for mdp in mdps]
    best = 0.0
    for scale in sorted(grid):
        losses = [value_loss(mdp, cluster(mdp, D, scale * mdp.v_range), V)
                  for mdp, D, V in zip(mdps, distances, values)]
        if not losses or np.mean(losses) <= tau:
            best = scale
    return best
