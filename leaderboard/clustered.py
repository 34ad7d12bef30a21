"""Clustered units: the items of one seed are scored by one trained artifact, so the seed
(the trial) is the independent unit, not the item.

Pure statistics over arrays, like papergym.leaderboard.scoring: no store, no spec.

A claim whose units are the items of several trials (``unit: instance``) is analysed at the
cluster level: each cluster (a (cell, seed) trial, or the pair of trials a paired difference
spans) is summarised by the mean of its item values, and the test and its interval are the
sign-flip permutation test of the mean of those cluster means (Fisher 1935; the interval is
the test inverted, Hartigan's subset-means interval). The permutation test needs no normality
(the cluster means need only be symmetric about the true mean under the null); for balanced
clusters the mean of cluster means is the random-intercept model's estimate of the fixed
effect. ``n <= EXACT_UP_TO`` enumerates all 2^n sign vectors; beyond, ``MC_REPS`` random sign
vectors with a fixed seed (the observed one counted in, so the p-value is valid).

The inversion is exact: with x_i = d_i - m, the statistic sum(s_i x_i) is at least the observed
sum(x_i) exactly when the flipped set F has sum_F x_i <= 0, i.e. mean_F(d) <= m. So
p(m) = (#{F empty} + #{F non-empty: mean_F(d) <= m}) / 2^n rises with m, and the one-sided
level-alpha lower bound is an order statistic of the subset means (the upper bound likewise).
The test at the claim's target rejects exactly when the bound lies beyond the target: the
printed interval and the decision are one statistic.

The intraclass correlation (ICC) of the item values and the design effect 1 + (m - 1) ICC
(Kish 1965; m the mean cluster size) say how much the items of a cluster repeat each other:
the item count divided by the design effect is the effective sample size.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

EXACT_UP_TO = 16  # 2^16 sign vectors: about a millisecond
MC_REPS = 20_000
MC_SEED = 20260  # fixed: the same rows give the same verdict


@dataclass(frozen=True)
class SignFlip:
    """The mean of ``n`` cluster means with its sign-flip test and interval."""

    mean: float
    lo: float  # one-sided level-alpha lower bound (-inf when 2^-n > alpha)
    hi: float
    p_better: float  # H0: mean <= target against mean > target
    p_worse: float  # H0: mean >= target against mean < target
    n: int
    exact: bool


@functools.lru_cache(maxsize=32)
def _all_subsets(n: int) -> np.ndarray:
    """Every non-empty subset of range(n) as a 0/1 row: (2^n - 1, n)."""
    masks = np.arange(1, 2 ** n, dtype=np.int64)
    bits = ((masks[:, None] >> np.arange(n)) & 1).astype(float)
    bits.flags.writeable = False
    return bits


def _subsets(n: int) -> tuple[np.ndarray, int, int]:
    """(non-empty flipped sets as 0/1 rows, sign vectors that flip nothing, all vectors)."""
    if n <= EXACT_UP_TO:
        return _all_subsets(n), 1, 2 ** n
    rng = np.random.default_rng(MC_SEED)
    bits = (rng.random((MC_REPS, n)) < 0.5).astype(float)
    sizes = bits.sum(axis=1)
    empty = int((sizes == 0).sum())
    return bits[sizes > 0], 1 + empty, MC_REPS + 1  # the observed vector counted in


def sign_flip(values: Sequence[float] | np.ndarray, alpha: float, target: float = 0.0
              ) -> SignFlip:
    """The sign-flip permutation test of ``mean(values) > target`` (and ``< target``) with
    its inverted interval, each bound one-sided at ``alpha`` (module docstring)."""
    d = np.asarray(values, dtype=float)
    n = len(d)
    if n == 0:
        return SignFlip(math.nan, -math.inf, math.inf, 1.0, 1.0, 0, True)
    bits, empty, total = _subsets(n)
    means = np.sort((bits @ d) / bits.sum(axis=1))
    scale = max(1.0, float(np.max(np.abs(d))), abs(target))
    tol = 1e-12 * scale
    p_better = (empty + int(np.sum(means <= target + tol))) / total
    p_worse = (empty + int(np.sum(means >= target - tol))) / total
    # the largest count c with c / total < alpha; the bound is the (c - empty + 1)-th mean
    allowed = math.ceil(alpha * total) - 1 - empty
    lo = float(means[allowed]) if 0 <= allowed < len(means) else -math.inf
    hi = float(means[len(means) - 1 - allowed]) if 0 <= allowed < len(means) else math.inf
    mean = float(d.mean())
    mean = 0.0 if abs(mean) <= tol else mean  # no -1e-18 from cancelling sums
    return SignFlip(mean, lo + 0.0, hi + 0.0, min(1.0, p_better),
                    min(1.0, p_worse), n, n <= EXACT_UP_TO)


def cluster_means(values: Sequence[float], clusters: Sequence[Hashable]
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(mean of each cluster's values, each cluster's size), clusters in first-seen order."""
    groups: dict[Hashable, list[float]] = {}
    for c, v in zip(clusters, values):
        groups.setdefault(c, []).append(float(v))
    return (np.array([np.mean(g) for g in groups.values()]),
            np.array([len(g) for g in groups.values()]))


def icc_oneway(values: Sequence[float], clusters: Sequence[Hashable]
               ) -> tuple[float | None, float | None]:
    """(ICC(1), design effect): the one-way ANOVA estimator of the share of the variance
    between clusters (truncated at 0; unbalanced clusters use the n0 of Snedecor & Cochran),
    and 1 + (mean cluster size - 1) * ICC. None where undefined (one cluster, or clusters of
    one item, or no variance)."""
    y = np.asarray(values, dtype=float)
    means, sizes = cluster_means(values, clusters)
    k, n = len(sizes), len(y)
    if k < 2 or n <= k:
        return None, None
    labels = list(dict.fromkeys(clusters))
    index = {c: i for i, c in enumerate(labels)}
    within = y - means[[index[c] for c in clusters]]
    msb = float(np.sum(sizes * (means - y.mean()) ** 2)) / (k - 1)
    msw = float(np.sum(within ** 2)) / (n - k)
    n0 = (n - float(np.sum(sizes ** 2)) / n) / (k - 1)
    if msb + (n0 - 1) * msw <= 0:
        return None, None
    icc = max(0.0, (msb - msw) / (msb + (n0 - 1) * msw))
    return icc, 1.0 + (float(sizes.mean()) - 1.0) * icc
