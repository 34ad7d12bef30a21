"""Scoring: pure functions from stored rows to point estimates and intervals (rliable's habit).

Per agent and problem section, the primary metric forms a (seeds x cells) matrix; the
interquartile mean and its 95% stratified-bootstrap interval (2,000 resamples by default,
fixed random state) summarize it. The probability of improvement over each baseline and a
normalized score (where the spec defines references) come with intervals too.

The bootstraps are rliable's (``rly.get_interval_estimates``, percentile method), computed
for all resamples at once in numpy instead of one Python call per resample: the same
resampling indices drawn from the same legacy ``RandomState`` stream in the same order (seeds
resampled within each cell column; for a pair, the first array's indices then the second's),
the same statistics and the same percentiles, so every number equals rliable's
(tests/core/test_scoring.py checks equality).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .numbers import fmt
from .store import Row

BOOTSTRAP_REPS = 2000
CONFIDENCE = 0.95


def cell_key(kwargs: dict[str, Any]) -> str:
    return json.dumps(kwargs, sort_keys=True, default=str)


def score_matrix(rows: list[Row], metric: str) -> tuple[np.ndarray, list[int], list[str]]:
    """(seeds x cells) matrix of ``metric`` over ok rows; seeds missing any cell are dropped."""
    cells = sorted({cell_key(r.problem_kwargs) for r in rows})
    seeds = sorted({r.seed for r in rows})
    matrix = np.full((len(seeds), len(cells)), np.nan)
    for r in rows:
        if r.ok and metric in r.metrics:
            matrix[seeds.index(r.seed), cells.index(cell_key(r.problem_kwargs))] = r.metrics[metric]
    complete = ~np.isnan(matrix).any(axis=1)
    return matrix[complete], [s for s, c in zip(seeds, complete) if c], cells


def iqm(scores: np.ndarray) -> float:
    """Interquartile mean of all scores: rliable's ``aggregate_iqm`` (scipy's 25% trimmed mean),
    in plain numpy because the bootstrap calls it thousands of times."""
    flat = np.sort(np.asarray(scores, dtype=float).ravel())
    cut = int(0.25 * flat.size)
    return float(flat[cut : flat.size - cut].mean())


def poi(scores_x: np.ndarray, scores_y: np.ndarray) -> float:
    """rliable's probability of improvement P(X > Y) + P(X = Y)/2, averaged over tasks
    (the Mann–Whitney U statistic per task column), vectorized over all run pairs."""
    x, y = scores_x[:, None, :], scores_y[None, :, :]
    per_task = ((x > y) + 0.5 * (x == y)).mean(axis=(0, 1))
    return float(per_task.mean())


def _percentile_interval(estimates: np.ndarray) -> tuple[float, float]:
    """arch's percentile interval, as rliable calls it (``size=0.95``, two-tailed)."""
    alpha = (1.0 - CONFIDENCE) / 2
    low, high = np.percentile(estimates, [100 * alpha, 100 * (1.0 - alpha)])
    return float(low), float(high)


def _resampled(scores: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``scores`` (runs x cells) at bootstrap row indices (reps x runs x cells), per column:
    rliable's stratified bootstrap resamples runs within each cell."""
    return scores[rows, np.arange(scores.shape[1])]


def iqm_of_rows(samples: np.ndarray) -> np.ndarray:
    """:func:`iqm` of each row of a (reps x n) array (same sort, same slice, same mean)."""
    ordered = np.sort(samples, axis=-1)
    cut = int(0.25 * ordered.shape[-1])
    return ordered[:, cut : ordered.shape[-1] - cut].mean(axis=-1)


def interval_estimates(
    score_dict: dict[str, np.ndarray], reps: int = BOOTSTRAP_REPS, seed: int = 0
) -> dict[str, tuple[float, float, float]]:
    """IQM and 95% stratified-bootstrap CI per key: ``{name: (iqm, low, high)}``.

    rliable draws every key's resamples from one stream (``np.random.seed(seed)``, then
    ``np.random.choice(runs, (runs, cells))`` per resample, key after key); so does this."""
    usable = {k: np.asarray(v, dtype=float) for k, v in score_dict.items() if np.size(v)}
    stream = np.random.RandomState(seed)
    out = {}
    for key, scores in usable.items():
        runs = scores.shape[0]
        rows = stream.randint(0, runs, size=(reps, *scores.shape))
        estimates = iqm_of_rows(_resampled(scores, rows).reshape(reps, -1))
        out[key] = (iqm(scores), *_percentile_interval(estimates))
    return out


def performance_profiles(
    score_dict: dict[str, np.ndarray], taus: np.ndarray, reps: int = BOOTSTRAP_REPS, seed: int = 0
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """rliable's score distributions (``create_performance_profile``): per key, the fraction
    of runs x cells scoring above each threshold tau, and its 95% stratified-bootstrap band
    (2 x len(taus)). Resamples as :func:`interval_estimates` (one stream, key after key)."""
    taus = np.asarray(taus, dtype=float)
    stream = np.random.RandomState(seed)
    alpha = (1.0 - CONFIDENCE) / 2
    profiles, bands = {}, {}
    for key, scores in score_dict.items():
        scores = np.asarray(scores, dtype=float)
        rows = stream.randint(0, scores.shape[0], size=(reps, *scores.shape))
        ordered = np.sort(_resampled(scores, rows).reshape(reps, -1), axis=-1)
        size = ordered.shape[1]
        # share above tau = (size - #scores <= tau) / size, per resample and threshold
        at_most = np.stack([np.searchsorted(row, taus, side="right") for row in ordered])
        estimates = (size - at_most) / size
        profiles[key] = (scores.reshape(-1)[:, None] > taus[None, :]).mean(axis=0)
        bands[key] = np.percentile(estimates, [100 * alpha, 100 * (1.0 - alpha)], axis=0)
    return profiles, bands


def _poi_of_resamples(x: np.ndarray, y: np.ndarray, rows_x: np.ndarray,
                      rows_y: np.ndarray) -> np.ndarray:
    """:func:`poi` of every resample pair, without materializing runs x runs per resample.

    Per cell j, a resample is a multiset of the original runs; with c_x, c_y the counts of
    each original run and W_j[i, k] = [x_ij > y_kj] + [x_ij = y_kj] / 2, the Mann-Whitney
    share is c_x^T W_j c_y / (n_x n_y): a sum of halves, exact in floating point, hence equal
    to the mean over the resampled pairs."""
    reps, n_x, cells = rows_x.shape
    n_y = rows_y.shape[1]

    def counts(rows: np.ndarray, n: int) -> np.ndarray:  # (cells, reps, n)
        flat = (np.arange(cells)[None, None, :] * reps + np.arange(reps)[:, None, None]) * n + rows
        return np.bincount(flat.ravel(), minlength=cells * reps * n).reshape(cells, reps, n)

    xc, yc = x.T[:, :, None], y.T[:, None, :]  # (cells, n_x, 1), (cells, 1, n_y)
    wins = (xc > yc) + 0.5 * (xc == yc)  # (cells, n_x, n_y)
    paired = counts(rows_x, n_x).astype(float) @ wins  # (cells, reps, n_y): integer-valued
    per_cell = (paired * counts(rows_y, n_y)).sum(axis=-1) / (n_x * n_y)  # (cells, reps)
    return np.ascontiguousarray(per_cell.T).mean(axis=1)  # row-wise, as poi sums each resample


def probability_of_improvement(
    x: np.ndarray, y: np.ndarray, direction: str, reps: int = BOOTSTRAP_REPS, seed: int = 0
) -> tuple[float, float, float]:
    """P(X better than Y) with its 95% stratified-bootstrap CI (ties count one half).

    rliable's independent stratified bootstrap: per resample, rows of X within each cell,
    then rows of Y, from ``np.random.seed(seed)``."""
    n = min(len(x), len(y))
    if n == 0:
        return (float("nan"),) * 3
    sign = 1.0 if direction == "max" else -1.0
    a, b = sign * np.asarray(x[:n], dtype=float), sign * np.asarray(y[:n], dtype=float)
    rows = np.random.RandomState(seed).randint(0, n, size=(reps, 2, *a.shape))
    estimates = _poi_of_resamples(a, b, rows[:, 0], rows[:, 1])
    return (poi(a, b), *_percentile_interval(estimates))


def normalized_scores(
    rows_by_agent: dict[str, list[Row]], metric: str, low: float | str, high: float | str
) -> dict[str, np.ndarray]:
    """(x - low) / (high - low) per (cell, seed); each end a number or an agent's value there."""

    def reference(end: float | str) -> dict[tuple[str, int], float]:
        if isinstance(end, (int, float)):
            return {}
        return {
            (cell_key(r.problem_kwargs), r.seed): r.metrics[metric]
            for r in rows_by_agent.get(end, []) if r.ok and metric in r.metrics
        }

    lows, highs = reference(low), reference(high)
    out: dict[str, np.ndarray] = {}
    for agent, rows in rows_by_agent.items():
        normalized: list[Row] = []
        for r in rows:
            if not (r.ok and metric in r.metrics):
                continue
            unit = (cell_key(r.problem_kwargs), r.seed)
            lo = low if isinstance(low, (int, float)) else lows.get(unit)
            hi = high if isinstance(high, (int, float)) else highs.get(unit)
            if lo is None or hi is None or hi == lo:
                continue
            clone = Row(**{**r.as_dict(), "metrics": {metric: (r.metrics[metric] - lo) / (hi - lo)}})
            normalized.append(clone)
        out[agent] = score_matrix(normalized, metric)[0]
    return out


@dataclass
class AgentScore:
    agent: str
    role: str
    agent_id: str
    tuned: str | None
    n_ok: int
    n_failed: int
    iqm: float = float("nan")
    ci: tuple[float, float] = (float("nan"), float("nan"))
    mean: float = float("nan")
    secondary: dict[str, float] = field(default_factory=dict)
    normalized: tuple[float, float, float] | None = None
    poi: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    rank: int | None = None
    # some row used an oracle / privileged mode (granted to references only): never ranked
    privileged: bool = False


def score_section(
    section: Any, rows: list[Row], reps: int = BOOTSTRAP_REPS
) -> list[AgentScore]:
    """The leaderboard of one problem section: one AgentScore per agent, ranked ones first."""
    metric, direction = section.metric.name, section.metric.direction
    by_agent: dict[str, list[Row]] = {a.name: [] for a in section.agents}
    for r in rows:
        by_agent.setdefault(r.agent, []).append(r)
    entries = {a.name: a for a in section.agents}
    shaped = {a: score_matrix(rs, metric) for a, rs in by_agent.items()}
    matrices = {a: m for a, (m, _, _) in shaped.items()}
    cells = {a: c for a, (_, _, c) in shaped.items()}
    estimates = interval_estimates(matrices, reps=reps)
    normalized = {}
    if section.metric.normalize is not None:
        norm = section.metric.normalize
        normalized = interval_estimates(
            normalized_scores(by_agent, metric, norm.low, norm.high), reps=reps
        )
    scores: list[AgentScore] = []
    for agent, rs in by_agent.items():
        if not rs:
            continue
        ok = [r for r in rs if r.ok]
        entry = entries.get(agent)
        score = AgentScore(
            agent=agent, role=rs[0].agent_role, agent_id=rs[0].agent_id,
            tuned=entry.tuned if entry else None, n_ok=len(ok), n_failed=len(rs) - len(ok),
            privileged=any(r.provenance.get("privileged") for r in rs),
        )
        if agent in estimates:
            iqm, lo, hi = estimates[agent]
            score.iqm, score.ci = iqm, (lo, hi)
            score.mean = float(np.mean(matrices[agent]))
        for name in section.secondary:
            values = [r.metrics[name] for r in ok if name in r.metrics]
            if values:
                score.secondary[name] = float(np.mean(values))
        score.normalized = normalized.get(agent)
        scores.append(score)
    _rank_and_compare(scores, matrices, cells, direction, reps)
    return scores


def _rank_and_compare(
    scores: list[AgentScore],
    matrices: dict[str, np.ndarray],
    cells: dict[str, list[str]],
    direction: str,
    reps: int,
) -> None:
    ranked = [s for s in scores
              if s.role != "reference" and not s.privileged and np.isfinite(s.iqm)]
    ranked.sort(key=lambda s: s.iqm, reverse=direction == "max")
    # Agents whose IQMs print the same share a rank (1, 1, 3: competition ranking), so no
    # tie is broken by the order in which agents were listed or submitted.
    for i, s in enumerate(ranked):
        tied = i > 0 and fmt(s.iqm) == fmt(ranked[i - 1].iqm)
        s.rank = ranked[i - 1].rank if tied else i + 1
    baselines = [s for s in ranked if s.role == "baseline"]
    for s in ranked:
        for b in baselines:
            if b.agent != s.agent and cells[b.agent] == cells[s.agent]:
                s.poi[b.agent] = probability_of_improvement(
                    matrices[s.agent], matrices[b.agent], direction, reps=reps
                )
    order = {id(s): i for i, s in enumerate(ranked)}
    scores.sort(key=lambda s: (s.rank is None, order.get(id(s), 0), s.agent))
