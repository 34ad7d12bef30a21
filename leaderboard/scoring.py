"""Scoring: pure functions from stored rows to point estimates and intervals (rliable's habit).

Per agent and problem section, the primary metric forms a (seeds x cells) matrix; the
interquartile mean and its 95% stratified-bootstrap interval (rliable, 2,000 resamples by
default, fixed random state) summarize it. The probability of improvement over each
baseline and a normalized score (where the spec defines references) come with intervals too.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .store import Row

BOOTSTRAP_REPS = 2000


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


@contextmanager
def _rliable_seed(seed: int) -> Iterator[None]:
    """rliable 1.2 draws bootstrap indices from numpy's *global* RNG (``np.random.choice``),
    ignoring ``random_state``; seed it for the call and put the caller's state back."""
    saved = np.random.get_state()
    np.random.seed(seed)
    try:
        with warnings.catch_warnings():  # arch deprecates RandomState; rliable passes one
            warnings.simplefilter("ignore", FutureWarning)
            yield
    finally:
        np.random.set_state(saved)


def _iqm(x: np.ndarray) -> np.ndarray:
    return np.array([iqm(x)])


def interval_estimates(
    score_dict: dict[str, np.ndarray], reps: int = BOOTSTRAP_REPS, seed: int = 0
) -> dict[str, tuple[float, float, float]]:
    """IQM and 95% stratified-bootstrap CI per key: ``{name: (iqm, low, high)}``."""
    from rliable import library as rly

    usable = {k: v for k, v in score_dict.items() if v.size}
    if not usable:
        return {}
    with _rliable_seed(seed):
        points, intervals = rly.get_interval_estimates(
            usable, _iqm, reps=reps, random_state=np.random.RandomState(seed)
        )
    return {
        k: (float(points[k][0]), float(intervals[k][0][0]), float(intervals[k][1][0]))
        for k in usable
    }


def probability_of_improvement(
    x: np.ndarray, y: np.ndarray, direction: str, reps: int = BOOTSTRAP_REPS, seed: int = 0
) -> tuple[float, float, float]:
    """P(X better than Y) with its 95% stratified-bootstrap CI (ties count one half)."""
    from rliable import library as rly

    n = min(len(x), len(y))
    if n == 0:
        return (float("nan"),) * 3
    sign = 1.0 if direction == "max" else -1.0
    pair = [sign * x[:n], sign * y[:n]]

    def poi_estimate(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.array([poi(a, b)])

    with _rliable_seed(seed):
        points, intervals = rly.get_interval_estimates(
            {"pair": pair}, poi_estimate, reps=reps, random_state=np.random.RandomState(seed)
        )
    return float(points["pair"][0]), float(intervals["pair"][0][0]), float(intervals["pair"][1][0])


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
    for i, s in enumerate(ranked, start=1):
        s.rank = i
    baselines = [s for s in ranked if s.role == "baseline"]
    for s in ranked:
        for b in baselines:
            if b.agent != s.agent and cells[b.agent] == cells[s.agent]:
                s.poi[b.agent] = probability_of_improvement(
                    matrices[s.agent], matrices[b.agent], direction, reps=reps
                )
    order = {id(s): i for i, s in enumerate(ranked)}
    scores.sort(key=lambda s: (s.rank is None, order.get(id(s), 0), s.agent))
