"""The one tuning protocol: every agent that tunes declares a search space and a default, and
gets the same number of evaluated configurations as every other agent of its section.

Agent side (pure functions over plain data):

- an agent declares its **search space**, ``{name: LogUniform | Uniform | Choice}``, and its
  **default configuration** (its ``Config`` defaults: the paper's or the official code's values,
  cited in a comment);
- :func:`candidates` gives it ``budget`` configurations: the default first, always, then
  ``budget - 1`` Latin-hypercube draws (``scipy.stats.qmc``) from a stream seeded by the
  agent's own id, so agents draw their own candidates, not one shared set;
- :func:`grid_candidates`: a finite space no larger than the budget (a few discrete values)
  is evaluated whole, the default first;
- :func:`choose` picks the best validation score, ties to the earliest (the default).

The budget is the section's, not the agent's: the problem's ``tuning_runs`` argument (a tier
kwarg of the section in the spec), which the view grants every agent alike.

Problem side (the harness owns the cache): :func:`cached_score` runs or reads one tuning run.
The cache key is the trial agent's identity (``<agent ref>@<code hash>``, set by the harness
through ``Task.set_agent_role``, never by the agent) plus the canonical configuration the agent
asked for (plain data) plus the problem's setting; the agent never sees or chooses a key, so it
cannot read or plant another agent's score. :class:`TuningRecord` keeps the problem's record of
the runs; its :meth:`TuningRecord.summary` goes into the row's provenance as ``tuning``
(budget, candidates tried with their scores, the chosen configuration, its validation score,
and the numeric keys whose chosen value sits at the edge of the values tried).

Tuning runs train on the problem's tuning seed and score on its validation split only; the
held-out evaluation never enters a tuning score.
"""

from __future__ import annotations

import itertools
import json
import math
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from scipy.stats import qmc


@dataclass(frozen=True)
class LogUniform:
    """A positive number drawn uniformly in log space on [low, high]."""

    low: float
    high: float

    def __post_init__(self) -> None:
        if not 0 < self.low < self.high:
            raise ValueError(f"LogUniform needs 0 < low < high, got [{self.low}, {self.high}]")

    def at(self, u: float) -> float:
        return float(math.exp(math.log(self.low) + u * (math.log(self.high) - math.log(self.low))))


@dataclass(frozen=True)
class Uniform:
    """A number drawn uniformly on [low, high]."""

    low: float
    high: float

    def __post_init__(self) -> None:
        if not self.low < self.high:
            raise ValueError(f"Uniform needs low < high, got [{self.low}, {self.high}]")

    def at(self, u: float) -> float:
        return float(self.low + u * (self.high - self.low))


@dataclass(frozen=True)
class Choice:
    """One of a few options, each equally likely."""

    options: tuple[Any, ...]

    def __post_init__(self) -> None:
        if not self.options:
            raise ValueError("Choice needs at least one option")

    def at(self, u: float) -> Any:
        return self.options[min(int(u * len(self.options)), len(self.options) - 1)]


Dimension = LogUniform | Uniform | Choice


def agent_stream(agent_id: str, search_seed: int = 0) -> np.random.SeedSequence:
    """The seed of an agent's own candidate draws: its id (so agents do not share draws) and
    its ``search_seed``."""
    return np.random.SeedSequence([zlib.crc32(agent_id.encode()), int(search_seed)])


def candidates(default: Mapping[str, Any], space: Mapping[str, Dimension], budget: int,
               seed: np.random.SeedSequence | int) -> list[dict[str, Any]]:
    """``budget`` configurations: ``default`` first, then ``budget - 1`` Latin-hypercube
    draws of ``space`` (every key of a draw from the space, the others from ``default``).
    With a budget below 1 or an empty space: ``[default]``."""
    default = dict(default)
    missing = sorted(set(space) - set(default))
    if missing:
        raise ValueError(f"search space keys {missing} are not in the default configuration "
                         f"({', '.join(sorted(default))})")
    if budget <= 1 or not space:
        return [default]
    rng = np.random.default_rng(seed)
    draws = qmc.LatinHypercube(d=len(space), seed=rng).random(budget - 1)
    names = list(space)
    return [default] + [{**default, **{k: space[k].at(float(u[j])) for j, k in enumerate(names)}}
                        for u in draws]


def grid_candidates(default: Mapping[str, Any], options: Mapping[str, Sequence[Any]]
                    ) -> list[dict[str, Any]]:
    """Every combination of a finite space's ``options``, ``default`` first (it must be one of
    them), then the others in order: the candidates of an agent whose whole space fits the
    section's budget (random draws from a few discrete values would repeat some and miss
    others)."""
    names = list(options)
    default = dict(default)
    outside = [k for k in names if default.get(k) not in tuple(options[k])]
    if outside:
        raise ValueError(f"the default's {outside} are not among the options "
                         f"({', '.join(f'{k}: {list(options[k])}' for k in outside)})")
    grid = [{**default, **dict(zip(names, values))}
            for values in itertools.product(*(tuple(options[k]) for k in names))]
    return [default] + [c for c in grid if c != default]


def choose(scores: Sequence[float]) -> int:
    """The index of the best score; ties (and NaN, scored as -inf) go to the earliest."""
    clean = [s if math.isfinite(s) else -math.inf for s in scores]
    return int(np.argmax(clean))


def at_edge(tried: Sequence[Mapping[str, Any]], chosen: Mapping[str, Any]) -> list[str]:
    """Numeric keys whose chosen value is the smallest or largest of 3+ distinct values
    tried: the best may lie outside the range searched."""
    out = []
    for key, value in chosen.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        values = {c[key] for c in tried if isinstance(c.get(key), (int, float))}
        if len(values) >= 3 and value in (min(values), max(values)):
            out.append(key)
    return sorted(out)


def canonical(config: Mapping[str, Any]) -> str:
    """A configuration as canonical JSON; only plain data (numbers, strings, booleans, None,
    lists) is a configuration."""
    if not isinstance(config, Mapping):
        raise TypeError(f"a tuning configuration is a mapping of settings, got "
                        f"{type(config).__name__}")
    try:
        return json.dumps(dict(config), sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise TypeError(f"a tuning configuration holds plain data only ({err})") from None


@dataclass
class TuningRecord:
    """The problem's record of one trial's tuning runs (configuration, validation score);
    ``direction`` says whether the best score is the largest (``max``) or smallest (``min``,
    an error)."""

    budget: int
    runs: list[tuple[dict[str, Any], float]] = field(default_factory=list)
    direction: str = "max"

    def add(self, config: Mapping[str, Any], score: float) -> None:
        self.runs.append((json.loads(canonical(config)), float(score)))

    def summary(self) -> dict[str, Any] | None:
        """``{budget, candidates, chosen, validation_score, at_edge}``, or None without runs.
        The chosen configuration is the best-scoring run in ``direction`` (ties: the first), as
        :func:`choose` picks it."""
        if not self.runs:
            return None
        tried = [c for c, _ in self.runs]
        sign = 1.0 if self.direction == "max" else -1.0
        best = choose([sign * s for _, s in self.runs])
        return {"budget": self.budget,
                "candidates": [{"config": c, "validation_score": s} for c, s in self.runs],
                "chosen": tried[best], "validation_score": self.runs[best][1],
                "at_edge": at_edge(tried, tried[best])}


def cached_score(namespace: str, setting: Mapping[str, Any], agent: str | None,
                 config: Mapping[str, Any], run: Callable[[], float], code: Sequence[Any]
                 ) -> float:
    """One tuning run's validation score, built once per (problem ``setting``, trial ``agent``
    identity, ``config``) in the harness's cache. ``agent`` comes from the harness
    (``Task.shared_runs.agent``); with none (a view used outside the runner) the run is not
    cached. ``code``: the problem's sources the score depends on."""
    key = canonical(config)
    if agent is None:
        return float(run())
    from papergym import cache

    entry = cache.Entry(namespace, {**dict(setting), "agent": agent, "config": key}, build=run,
                        code=tuple(code))
    return float(cache.get(entry))


class Tuned:
    """Mix-in of an agent that tunes by the protocol: ``search_space`` names the keys searched
    and their ranges; the agent's ``Config`` defaults are the default candidate."""

    search_space: ClassVar[Mapping[str, Dimension]] = {}

    def tuning_space(self, view: Any = None) -> Mapping[str, Dimension]:
        """The space searched (override when it depends on the problem, e.g. its depth)."""
        return self.search_space

    def tuning_candidates(self, budget: int, view: Any = None) -> list[Any]:
        """``budget`` configurations as the agent's ``Config``: its defaults, then its own
        draws."""
        config = self.config  # type: ignore[attr-defined]
        seed = agent_stream(self.qualified_id(), getattr(config, "search_seed", 0))  # type: ignore[attr-defined]
        drawn = candidates(config.model_dump(), self.tuning_space(view), budget, seed)
        return [config.model_copy(update=c) for c in drawn]
