"""A rank correlation pooled over the runs of several agents (claim kind ``correlation``).

Pure statistics over per-run series, like papergym.leaderboard.scoring: no store, no spec.

Each run (one trial: agent, cell, seed) gives a list of (x, y) pairs. A side of a pair is
either one of the trial's metrics (the same value at every anchor) or read from one of its
curves (``[[step, value], ...]``, as ``EvalResult.curves`` stores them) at an anchor step t:

- ``curve`` alone: the curve's value at step t;
- ``window`` and ``stat``: the statistic (min, max, mean, median) of the curve's points with a
  step in [t - window, t), the window that ends just before t; undefined when the window
  starts before the curve's first step (an incomplete window) or holds no point;
- ``lead`` and ``change``: the curve's change from t to t + lead, ``drop`` = v(t) - v(t + lead)
  (positive when the curve falls) or ``gain`` = v(t + lead) - v(t); undefined unless the
  curve has points at both steps (so the rule is read off the curve's own sampling grid).

The anchors are the steps of y's curve (x's when y is a metric); when both sides are
metrics a run gives one pair. An anchor where either side is undefined gives no pair.

The statistic is Spearman's rho over all pairs of all runs pooled. A pooled rho mixes the
association inside runs with the differences between groups of runs (an agent whose runs have
both low x and high y makes a pooled rho negative even where, inside every agent, the two rise
together), so ``groups`` can name a group per run (its agent, or the run itself): the
statistic is then the mean of the Spearman rho inside each group, weighted by the group's
pairs (groups with a constant side left out). Its interval is a seeded percentile bootstrap
over runs: each resample draws whole runs with replacement (a run's pairs stay together, so
the serial dependence inside a run is kept) and recomputes the statistic; resamples in which
it is undefined (a constant side) are left out and counted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

Curve = Sequence[Sequence[float]]
STATS = {"min": np.min, "max": np.max, "mean": np.mean, "median": np.median}


def _average_ranks(x: np.ndarray) -> np.ndarray:
    order = np.argsort(x, kind="mergesort")
    ordered = x[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    ends = np.r_[starts[1:], len(x)]
    ranks = np.empty(len(x))
    ranks[order] = np.repeat((starts + ends + 1) / 2.0, ends - starts)
    return ranks


def spearman_rho(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rho (average ranks for ties); nan if either side is constant or n < 2."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if len(x) < 2:
        return math.nan
    rx = _average_ranks(x) - (len(x) + 1) / 2.0
    ry = _average_ranks(y) - (len(y) + 1) / 2.0
    scale = math.sqrt(float(rx @ rx) * float(ry @ ry))
    return float(rx @ ry) / scale if scale > 0 else math.nan


def _field(side: Any, name: str) -> Any:
    return side.get(name) if isinstance(side, dict) else getattr(side, name, None)


def side_at(side: Any, curves: dict[str, Curve], metrics: dict[str, float],
            t: float | None) -> float | None:
    """One side of a pair at anchor step ``t`` (None: undefined there). ``side`` has the
    fields of benchmarks.spec.SeriesSpec (metric | curve [window, stat] [lead, change])."""
    metric = _field(side, "metric")
    if metric is not None:
        value = metrics.get(metric)
        return float(value) if value is not None and math.isfinite(value) else None
    points = curves.get(_field(side, "curve")) or []
    if t is None or not points:
        return None
    steps = np.array([p[0] for p in points], dtype=float)
    values = np.array([p[1] for p in points], dtype=float)
    window, lead = _field(side, "window"), _field(side, "lead")
    if window is not None:
        if t - window < steps.min():
            return None
        inside = values[(steps >= t - window) & (steps < t)]
        inside = inside[np.isfinite(inside)]
        return float(STATS[_field(side, "stat")](inside)) if inside.size else None
    now = values[steps == t]
    if not now.size or not np.isfinite(now[0]):
        return None
    if lead is None:
        return float(now[0])
    later = values[steps == t + lead]
    if not later.size or not np.isfinite(later[0]):
        return None
    return float(now[0] - later[0]) if _field(side, "change") == "drop" else float(later[0] - now[0])


def run_pairs(x: Any, y: Any, curves: dict[str, Curve], metrics: dict[str, float]
              ) -> list[tuple[float, float]]:
    """The (x, y) pairs of one run (module docstring)."""
    anchor_side = y if _field(y, "curve") is not None else x
    if _field(anchor_side, "curve") is None:
        anchors: list[float | None] = [None]
    else:
        anchors = sorted({float(p[0]) for p in curves.get(_field(anchor_side, "curve")) or []})
    pairs = []
    for t in anchors:
        a, b = side_at(x, curves, metrics, t), side_at(y, curves, metrics, t)
        if a is not None and b is not None:
            pairs.append((a, b))
    return pairs


@dataclass
class Pooled:
    rho: float
    lo: float
    hi: float
    n_runs: int
    n_pairs: int
    reps: int  # bootstrap resamples with a defined rho
    undefined: int  # resamples left out (a constant side)
    share_above: float  # share of the resampled rho at or above the value tested
    share_below: float


def _statistic(runs: list[np.ndarray], groups: Sequence[Any] | None) -> float:
    if groups is None:
        pooled = np.concatenate(runs)
        return spearman_rho(pooled[:, 0], pooled[:, 1])
    by_group: dict[Any, list[np.ndarray]] = {}
    for g, r in zip(groups, runs):
        by_group.setdefault(g, []).append(r)
    rhos, weights = [], []
    for parts in by_group.values():
        pairs = np.concatenate(parts)
        rho = spearman_rho(pairs[:, 0], pairs[:, 1])
        if math.isfinite(rho):
            rhos.append(rho)
            weights.append(len(pairs))
    return float(np.average(rhos, weights=weights)) if rhos else math.nan


def within_run_rho(runs: Sequence[np.ndarray]) -> float:
    """The pairs-weighted mean of the Spearman rho inside each run (nan if none is defined)."""
    return _statistic(list(runs), list(range(len(runs))))


def pooled_spearman(runs: Sequence[Sequence[tuple[float, float]]], alpha: float = 0.05,
                    value: float = 0.0, reps: int = 2000, seed: int = 0,
                    groups: Sequence[Any] | None = None,
                    clusters: Sequence[Any] | None = None) -> Pooled:
    """Spearman's rho over every pair of ``runs`` pooled (or, with ``groups``, one label per
    run, the pairs-weighted mean of the rho inside each group), with the percentile bootstrap
    over runs, or over ``clusters`` (one label per run, e.g. its training seed: a resample
    draws whole seeds, every run of a drawn seed kept); ``lo`` and ``hi`` are each one-sided
    at ``alpha`` (nan when undefined)."""
    keep = [i for i, r in enumerate(runs) if len(r)]
    arrays = [np.asarray(runs[i], dtype=float).reshape(-1, 2) for i in keep]
    labels = None if groups is None else [groups[i] for i in keep]
    n_pairs = sum(len(r) for r in arrays)
    if not arrays:
        return Pooled(math.nan, math.nan, math.nan, 0, 0, 0, 0, math.nan, math.nan)
    rho = _statistic(arrays, labels)
    rng = np.random.default_rng(seed)
    owners = list(range(len(arrays))) if clusters is None else [clusters[i] for i in keep]
    members: dict[Any, list[int]] = {}
    for i, owner in enumerate(owners):
        members.setdefault(owner, []).append(i)
    blocks = list(members.values())
    draws = [[i for b in pick for i in blocks[b]]
             for pick in rng.integers(0, len(blocks), size=(reps, len(blocks)))]
    boot = np.array([_statistic([arrays[i] for i in draw],
                                None if labels is None else [labels[i] for i in draw])
                     for draw in draws])
    boot = boot[np.isfinite(boot)]
    if not boot.size:
        return Pooled(rho, math.nan, math.nan, len(arrays), n_pairs, 0, reps, math.nan,
                      math.nan)
    lo, hi = np.percentile(boot, [100 * alpha, 100 * (1 - alpha)])
    return Pooled(rho, float(lo), float(hi), len(arrays), n_pairs, int(boot.size),
                  reps - int(boot.size), float(np.mean(boot >= value)),
                  float(np.mean(boot <= value)))
