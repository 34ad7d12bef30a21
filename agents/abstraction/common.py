"""Helpers shared by the abstraction agents: complete-linkage clustering under a distance, and
tuning by the one protocol (``papergym.tuning``) on the problem's validation MDPs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import squareform

from papergym.envs.abstraction.core import canonical
from papergym.tuning import LogUniform, Tuned, choose

# epsilon (times V_range) searched by the clustering agents: from a hundredth of the
# perturbation's reward noise at delta = 0.01 to three times the largest old grid value
EPS_RANGE = LogUniform(1e-3, 0.3)


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


def tuned_routine(agent: Tuned, view: Any, make_routine: Callable[[Any], Any]) -> Any:
    """The routine of the configuration the tuning protocol picks (``papergym.tuning``): the
    agent's defaults first, then its own draws from its search space, ``view.tuning_runs`` in
    all (none when the config says ``tune: false``); each scored by the problem on its
    validation MDPs (``view.validation_score``), the best kept, ties to the earliest (the
    default first). The runs go in candidate order at every seed, so the problem's record of
    them names the configuration chosen here even when several tie (whole blocks of epsilon
    often reach the reference abstraction)."""
    budget = int(getattr(view, "tuning_runs", 0)) if agent.config.tune else 0  # type: ignore[attr-defined]
    configs = agent.tuning_candidates(budget, view)
    if len(configs) == 1:
        return make_routine(configs[0])
    scores = [view.validation_score(make_routine(c), c.model_dump()) for c in configs]
    return make_routine(configs[choose(scores)])
