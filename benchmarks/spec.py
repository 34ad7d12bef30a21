"""Benchmark specs: YAML files validated by pydantic, expanded into trials.

A spec is data (lm-evaluation-harness's habit): adding a benchmark needs no code change to
the harness. The schema, in YAML::

    name: performative                 # the benchmark's name (`papergym run performative`)
    family: performative               # the family folder it belongs to
    paper: {key: anagnostides2026, title: "...", url: "..."}
    problems:                          # one section per problem scored in this benchmark
      - name: affine
        problem: papergym/PerformativeAffine-v0
        metric: {name: gap_reduction, direction: max}
        secondary: [success, deployments]
        tiers:
          smoke:
            seeds: 2                   # seeds 0..1 (or an explicit list)
            timeout_s: 60              # per trial
            kwargs: {T: 50}            # shared by every cell
            grid: {family: [contractive], d: [2, 3]}   # cells = product of the grid ...
            cells: [{d: 5, rho: 0.9}]                   # ... plus explicit cells
        agents:
          - rrm                        # bare id: default config
          - {id: rgd, config: {eta_grid: [0.1, 0.5]}, tuned: "eta on train instances"}
    claims: [...]                      # see papergym.leaderboard.claims

A malformed spec raises :class:`SpecError` with one line naming the file and the field.
Reading is bounded (``benchmarks/safeyaml.py``: size, depth, aliases, duplicate keys); names
that become folders or links (benchmark, section, agent labels, claim ids) match
``papergym.safe.NAME_PATTERN``; seeds are non-negative training seeds below 10^6, at most
``MAX_SEEDS`` per tier. :func:`check_spec` then checks the spec against the registries (problems,
their declared arguments and metrics, agents) before any trial runs.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    ValidationError,
    field_validator,
    model_validator,
)

from papergym.problem import EVAL_SEED_OFFSET, TIERS
from papergym.safe import check_name

from . import safeyaml

Tier = Literal["smoke", "standard", "full"]
SPEC_DIR = Path(__file__).parent / "specs"


class SpecError(ValueError):
    """A benchmark spec that cannot be used; the message names the file and the field."""


# Caps that keep a spec's size honest: seeds per tier, cells per tier (grid product + cells).
MAX_SEEDS = 1000
MAX_CELLS = 10_000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class PaperSpec(_Strict):
    key: str
    title: str
    url: str = ""


class NormalizeSpec(_Strict):
    """Normalized score = (x - low) / (high - low); each end a number or an agent label."""

    low: float | str
    high: float | str


class MetricSpec(_Strict):
    name: str
    direction: Literal["max", "min"]
    normalize: NormalizeSpec | None = None


class TierSpec(_Strict):
    seeds: StrictInt | list[StrictInt] = 3  # strict: `seeds: true` is not one seed
    timeout_s: float = Field(default=600.0, gt=0)
    kwargs: dict[str, Any] = Field(default_factory=dict)
    grid: dict[str, list[Any]] = Field(default_factory=dict)
    cells: list[dict[str, Any]] = Field(default_factory=list)

    @field_validator("seeds", mode="before")
    @classmethod
    def _integer_seeds(cls, v: Any) -> Any:
        values = v if isinstance(v, list) else [v]
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in values):
            raise ValueError(f"seeds is a number of seeds or a list of integer seeds, got {v!r}"
                             if not isinstance(v, list) or len(v) <= 10 else
                             "seeds is a number of seeds or a list of integer seeds")
        return v

    @field_validator("seeds")
    @classmethod
    def _positive_seeds(cls, v: int | list[int]) -> int | list[int]:
        return check_seeds(v)

    @field_validator("grid")
    @classmethod
    def _non_empty_axes(cls, v: dict[str, list[Any]]) -> dict[str, list[Any]]:
        for axis, values in v.items():
            if not values:
                raise ValueError(f"grid axis {axis!r} has no values")
        return v

    @model_validator(mode="after")
    def _bounded_cells(self) -> TierSpec:
        n = len(self.cells) + (math.prod(len(values) for values in self.grid.values())
                               if self.grid else 0)
        if n > MAX_CELLS:
            raise ValueError(f"grid and cells make {n:,} cells; at most {MAX_CELLS:,} per tier")
        return self

    def seed_list(self) -> list[int]:
        return list(range(self.seeds)) if isinstance(self.seeds, int) else list(self.seeds)

    def expand_cells(self) -> list[dict[str, Any]]:
        """The problem kwargs of every cell: shared kwargs, grid product, explicit cells."""
        cells: list[dict[str, Any]] = []
        if self.grid:
            axes = list(self.grid)
            for values in itertools.product(*(self.grid[a] for a in axes)):
                cells.append({**self.kwargs, **dict(zip(axes, values))})
        cells.extend({**self.kwargs, **cell} for cell in self.cells)
        return cells or [dict(self.kwargs)]


def check_seeds(v: int | list[int]) -> int | list[int]:
    """A seed count in 1..MAX_SEEDS, or a non-empty list of distinct training seeds."""
    if isinstance(v, int):
        if not 1 <= v <= MAX_SEEDS:
            raise ValueError(f"a number of seeds must be between 1 and {MAX_SEEDS}, got {v}")
        return v
    if not v or len(set(v)) != len(v):
        raise ValueError("must be a non-empty list of distinct seeds")
    if len(v) > MAX_SEEDS:
        raise ValueError(f"at most {MAX_SEEDS} seeds, got {len(v)}")
    bad = [s for s in v if not 0 <= s < EVAL_SEED_OFFSET]
    if bad:
        raise ValueError(f"seeds are training seeds in [0, {EVAL_SEED_OFFSET:,}); got {bad[:5]}")
    return v


SafeName = Annotated[str, AfterValidator(check_name)]  # it names a folder, a link, a row


class AgentEntry(_Strict):
    id: str
    config: dict[str, Any] = Field(default_factory=dict)
    label: SafeName | None = None
    tiers: list[Tier] | None = None
    tuned: str | None = None  # how the agent tunes itself on train_view, shown in tables

    @field_validator("id")
    @classmethod
    def _safe_id(cls, v: str) -> str:
        family, sep, bare = v.rpartition("/")
        if sep:
            check_name(family)
        check_name(bare)
        return v

    @property
    def name(self) -> str:
        return self.label or self.id


class ProblemSection(_Strict):
    name: SafeName
    problem: str
    metric: MetricSpec
    secondary: list[str] = Field(default_factory=list)
    tiers: dict[Tier, TierSpec] = Field(min_length=1)
    agents: list[AgentEntry] = Field(min_length=1)


    @field_validator("agents", mode="before")
    @classmethod
    def _bare_ids(cls, v: Any) -> Any:
        if isinstance(v, list):
            return [{"id": a} if isinstance(a, str) else a for a in v]
        return v

    @model_validator(mode="after")
    def _unique_names(self) -> ProblemSection:
        names = [a.name for a in self.agents]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"agents: names {dupes} appear twice; give variants a distinct label")
        return self


class ClaimSpec(_Strict):
    """A paper's claim as a testable comparison; evaluated by papergym.leaderboard.claims.

    kind: ``compare`` (agent vs baseline(s), paired over units), ``threshold`` (a statistic
    of one agent's metric against a value), ``rate`` (the share of units meeting a
    condition against a required share) or ``trend`` (the sign of a metric's rank
    correlation with a cell argument ``axis``, per seed, sign-tested over seeds).
    """

    id: SafeName
    statement: str
    problem: str  # section name
    kind: Literal["compare", "threshold", "rate", "trend"]
    tiers: list[Tier] = Field(default_factory=lambda: list(TIERS))
    agent: str
    metric: str | None = None  # defaults to the section's primary metric
    direction: Literal["max", "min"] | None = None  # required for a compare on another metric
    where: dict[str, Any] = Field(default_factory=dict)  # cell kwargs filter
    unit: Literal["trial", "instance"] = "trial"
    alpha: float = Field(default=0.05, gt=0, lt=1)
    # compare
    baseline: str | list[str] | None = None
    expect: Literal["better", "no_worse"] = "better"
    test: Literal["wilcoxon", "sign"] = "wilcoxon"  # sign = exact McNemar for 0/1 metrics
    margin: float = 0.0
    min_ratio: float | None = None  # also require median(baseline / agent) >= this (costs)
    # threshold
    stat: Literal["iqm", "mean", "median", "max", "min"] = "iqm"
    op: Literal[">=", "<=", ">", "<"] | None = None
    value: float | None = None
    # rate
    at_least: float | None = Field(default=None, ge=0, le=1)
    at_most: float | None = Field(default=None, ge=0, le=1)
    # trend
    axis: str | None = None
    trend: Literal["increasing", "decreasing"] | None = None

    @model_validator(mode="after")
    def _fields_for_kind(self) -> ClaimSpec:
        if self.kind == "compare" and not self.baseline:
            raise ValueError("a compare claim needs baseline")
        if self.kind in ("threshold", "rate") and (self.op is None or self.value is None):
            raise ValueError(f"a {self.kind} claim needs op and value")
        if self.kind == "rate" and (self.at_least is None) == (self.at_most is None):
            raise ValueError("a rate claim needs exactly one of at_least, at_most")
        if self.kind == "trend" and (self.axis is None or self.trend is None):
            raise ValueError("a trend claim needs axis and trend (increasing | decreasing)")
        return self

    @property
    def baselines(self) -> list[str]:
        if self.baseline is None:
            return []
        return [self.baseline] if isinstance(self.baseline, str) else list(self.baseline)


class BenchmarkSpec(_Strict):
    name: SafeName
    family: SafeName
    version: int = 1
    paper: PaperSpec
    description: str = ""
    imports: list[str] = Field(default_factory=list)  # modules or .py files defining problems
    problems: list[ProblemSection]
    claims: list[ClaimSpec] = Field(default_factory=list)

    @model_validator(mode="after")
    def _references_resolve(self) -> BenchmarkSpec:
        sections = {p.name: p for p in self.problems}
        if len(sections) != len(self.problems):
            raise ValueError("problems: section names must be unique")
        for i, claim in enumerate(self.claims):
            section = sections.get(claim.problem)
            if section is None:
                raise ValueError(
                    f"claims.{i}.problem: {claim.problem!r} is not a section; "
                    f"sections are {sorted(sections)}"
                )
            other_metric = claim.metric not in (None, section.metric.name)
            if claim.kind == "compare" and other_metric and claim.direction is None:
                raise ValueError(
                    f"claims.{i}.direction: {claim.id} compares on {claim.metric!r}, not the "
                    f"primary metric; say whether it is to be maximized or minimized (max | min)"
                )
            names = {a.name for a in section.agents}
            for who in [claim.agent, *claim.baselines]:
                if who not in names:
                    raise ValueError(
                        f"claims.{i} ({claim.id}): agent {who!r} is not in section "
                        f"{claim.problem!r}; its agents are {sorted(names)}"
                    )
        return self

    def section(self, name: str) -> ProblemSection:
        for p in self.problems:
            if p.name == name:
                return p
        raise KeyError(name)


def load_spec(path: str | Path) -> BenchmarkSpec:
    """Read and validate one spec file; every failure is a one-line :class:`SpecError`."""
    path = Path(path)
    try:
        raw = safeyaml.load(path)
    except FileNotFoundError:
        raise SpecError(f"{path}: no such benchmark spec") from None
    except (safeyaml.SpecTooLarge, UnicodeDecodeError, OSError) as err:
        reason = err if isinstance(err, safeyaml.SpecTooLarge) else f"{path}: cannot read: {err}"
        raise SpecError(str(reason).splitlines()[0]) from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise SpecError(f"{path}{where}: not valid YAML: {problem}") from None
    if not isinstance(raw, dict):
        raise SpecError(f"{path}: a benchmark spec must be a mapping, got {type(raw).__name__}")
    try:
        return BenchmarkSpec.model_validate(raw)
    except ValidationError as err:
        first = err.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(top level)"
        more = f" (and {err.error_count() - 1} more problems)" if err.error_count() > 1 else ""
        message = " ".join(str(first["msg"]).split())  # one line, whatever the validator said
        message = message.removeprefix("Value error, ")
        head, sep, rest = message.partition(": ")
        if field == "(top level)" and sep and " " not in head:  # "claims.0.problem: ..."
            field, message = head, rest
        raise SpecError(f"{path}: field {field}: {message}{more}") from None


def spec_paths() -> dict[str, Path]:
    """Built-in benchmark specs by name (the file stem)."""
    return {p.stem: p for p in sorted(SPEC_DIR.glob("*.yaml"))}


def find_spec(name_or_path: str) -> BenchmarkSpec:
    """A benchmark by registered name, or a path to a YAML file."""
    candidate = Path(name_or_path)
    if candidate.suffix in (".yaml", ".yml") or candidate.is_file():
        return load_spec(candidate)
    paths = spec_paths()
    if name_or_path not in paths:
        known = ", ".join(paths) or "(none)"
        raise SpecError(f"unknown benchmark {name_or_path!r}; registered benchmarks: {known}")
    return load_spec(paths[name_or_path])
