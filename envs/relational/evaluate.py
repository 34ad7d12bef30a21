"""The evaluator's pieces: few-shot context draws and ROC-AUC (the problem computes every metric)."""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata


def auc(y: np.ndarray, p: np.ndarray) -> float:
    """ROC-AUC = P(score of a random positive > a random negative), ties counting 1/2 (the
    Mann-Whitney U over both classes' average ranks). 0.5 when a class is missing."""
    y = np.asarray(y).astype(bool)
    n1, n0 = int(y.sum()), int((~y).sum())
    if n1 == 0 or n0 == 0:
        return 0.5
    ranks = rankdata(np.asarray(p, dtype=float))
    return float((ranks[y].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def stratified_shots(y: np.ndarray, pool: np.ndarray, shots: int, rng: np.random.Generator) -> np.ndarray:
    """``shots`` rows of ``pool``, stratified by class with >= 2 rows of each class."""
    pool = np.asarray(pool)
    if shots > len(pool):
        raise ValueError(f"{shots} shots from a pool of {len(pool)} rows")
    by_class = [pool[y[pool] == c] for c in (0, 1)]
    if min(len(b) for b in by_class) < 2:
        raise ValueError("each class needs >= 2 rows in the pool")
    k1 = int(round(shots * len(by_class[1]) / len(pool)))
    k1 = min(max(k1, 2), shots - 2, len(by_class[1]))
    k0 = shots - k1
    if k0 > len(by_class[0]):
        k0, k1 = len(by_class[0]), shots - len(by_class[0])
    chosen = np.concatenate([rng.choice(by_class[0], size=k0, replace=False),
                             rng.choice(by_class[1], size=k1, replace=False)])
    return rng.permutation(chosen)
