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
            memory_mb: 4096            # memory cap per trial process (default: sized to the machine)
            kwargs: {T: 50}            # shared by every cell
            grid: {family: [contractive], d: [2, 3]}   # cells = product of the grid ...
            cells: [{d: 5, rho: 0.9}]                   # ... plus explicit cells
        agents:
          - rrm                        # bare id: default config
          - {id: rgd, config: {eta_grid: [0.1, 0.5]}, tuned: "eta on train instances"}
          - {id: rgd, label: rgd_big, config: {width: 64}, tier_config: {full: {width: 512}}}
    claims: [...]                      # see papergym.leaderboard.claims and docs/contract.md
    scale:                             # the paper's budgets per section (tiers: `budgets:`)
      affine: {deployments: 1000, d: 50}
    departures: ["update rules reconstructed from the paper's text"]

A section may name ``trivial:`` and ``reference:`` agents (its discrimination check), a tier
``units_per_trial`` (what each trial stores in ``EvalResult.units``) and ``budgets`` (shown
next to the paper's ``scale``). Every claim is checked for power at load: at standard and
full a claim that cannot reach its alpha with the tier's units is a :class:`SpecError`.

A malformed spec raises :class:`SpecError` with one line naming the file and the field.
Reading is bounded (``benchmarks/safeyaml.py``: size, depth, aliases, duplicate keys); names
that become folders or links (benchmark, section, agent labels, claim ids) match
``papergym.safe.NAME_PATTERN``; seeds are non-negative training seeds below 10^6, at most
``MAX_SEEDS`` per tier. :func:`check_spec` then checks the spec against the registries (problems,
their declared arguments and metrics, agents) before any trial runs.
"""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import dataclass
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

from papergym.leaderboard.power import Power, best_case, needed_n
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


SafeName = Annotated[str, AfterValidator(check_name)]  # it names a folder, a link, a row


class PaperSpec(_Strict):
    key: str
    title: str
    url: str = ""

    @field_validator("url")
    @classmethod
    def _web_url(cls, v: str) -> str:
        if v and (not v.startswith(("https://", "http://")) or any(c.isspace() for c in v)):
            raise ValueError(f"must be an http(s) address, got {v[:60]!r}")  # it becomes a link
        return v


class NormalizeSpec(_Strict):
    """Normalized score = (x - low) / (high - low); each end a number or an agent label."""

    low: float | str
    high: float | str


def _check_bounds(bounds: tuple[float, float] | None) -> tuple[float, float] | None:
    if bounds is not None and not (math.isfinite(bounds[0]) and math.isfinite(bounds[1])
                                   and bounds[0] < bounds[1]):
        raise ValueError(f"bounded: [low, high], both finite with low < high, got "
                         f"{list(bounds)}")
    return bounds


class MetricSpec(_Strict):
    name: SafeName
    direction: Literal["max", "min"]
    normalize: NormalizeSpec | None = None
    # the metric's range, both ends finite (an accuracy: [0, 1]): its values pile up at the
    # ends, so a signed-rank test against a margin is refused on it (docs/contract.md)
    bounded: tuple[float, float] | None = None

    _bounds = field_validator("bounded")(_check_bounds)


Budget = int | float | str


class TierSpec(_Strict):
    seeds: StrictInt | list[StrictInt] = 3  # strict: `seeds: true` is not one seed
    timeout_s: float = Field(default=600.0, gt=0)
    # address space each of the trial's two processes (agent, problem) may add, in MiB;
    # None: 80% of physical memory / concurrent trials (papergym.isolation.default_memory_mb)
    memory_mb: int | None = Field(default=None, ge=256)
    kwargs: dict[str, Any] = Field(default_factory=dict)
    grid: dict[str, list[Any]] = Field(default_factory=dict)
    cells: list[dict[str, Any]] = Field(default_factory=list)
    # Units each trial stores in EvalResult.units: a count, or the cell kwarg holding it;
    # a mapping names the count per unit kind ("instance", or a claim's units.group_by field).
    units_per_trial: int | str | dict[str, int | str] | None = None
    budgets: dict[str, Budget] = Field(default_factory=dict)  # this tier's scale, per budget

    @field_validator("units_per_trial")
    @classmethod
    def _positive_units(cls, v: Any) -> Any:
        for count in (v.values() if isinstance(v, dict) else [v]):
            if isinstance(count, int) and count < 1:
                raise ValueError("counts must be at least 1")
        return v

    def units_in(self, cell: dict[str, Any], kind: str = "instance") -> int | None:
        """Units of ``kind`` one trial of ``cell`` stores, if declared (None otherwise)."""
        declared = self.units_per_trial
        if isinstance(declared, dict):
            declared = declared.get(kind)
        elif kind != "instance":
            declared = None
        if isinstance(declared, str):
            value = cell.get(declared)
            return int(value) if isinstance(value, int) and not isinstance(value, bool) else None
        return declared

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


class AgentEntry(_Strict):
    id: str
    config: dict[str, Any] = Field(default_factory=dict)
    # per-tier overrides of ``config`` (e.g. the full tier's larger network): the same agent,
    # under the same name, at another scale
    tier_config: dict[Tier, dict[str, Any]] = Field(default_factory=dict)
    label: SafeName | None = None
    tiers: list[Tier] | None = None
    tuned: str | None = None  # how the agent tunes itself on train_view, shown in tables

    def config_at(self, tier: str) -> dict[str, Any]:
        """``config`` with this tier's overrides."""
        return {**self.config, **self.tier_config.get(tier, {})}

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
    trivial: str | None = None  # agent label: the do-nothing / naive end of the scale
    reference: str | None = None  # agent label: what the problem must tell apart from trivial
    departures: list[str] = Field(default_factory=list)  # from the paper, for this section
    # the items of a trial are independent units (not clustered by seed): allowed only when no
    # agent of the section trains or samples a per-seed artifact (Agent.seed_artifact False;
    # benchmarks/spec_checks.py refuses it otherwise)
    independent_items: bool = False

    # fairness: the paper's method, whose margin over `trivial` every report shows (default:
    # the section's agent of role `method` named most often by its paper claims)
    method: str | None = None

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
        if (self.trivial is None) != (self.reference is None):
            raise ValueError("trivial and reference: name both agents or neither")
        for field_name in ("trivial", "reference"):
            label = getattr(self, field_name)
            if label is not None and label not in names:
                raise ValueError(f"{field_name}: {label!r} is not an agent of this section; "
                                 f"its agents are {sorted(names)}")
        return self

    def agent(self, name: str) -> AgentEntry:
        return next(a for a in self.agents if a.name == name)

    def runs_at(self, name: str, tier: str) -> bool:
        entry = self.agent(name)
        return tier in self.tiers and (entry.tiers is None or tier in entry.tiers)


def claim_family(claim_id: str) -> str:
    """The family a claim belongs to when it declares none: its id's stem, the leading letters
    and digits before any lower-case suffix or ``-``/``_`` part (C2b, C2-GCN, C2_units -> C2;
    B1-8 -> B1; U3 -> U3)."""
    import re

    match = re.match(r"[A-Z]*[0-9]+|[A-Za-z]+", claim_id)
    return match.group(0) if match else claim_id


class UnitSpec(_Strict):
    """Which units of a trial a claim pairs over: ``where`` filters ``EvalResult.units`` rows
    by their fields, ``group_by`` averages the metric per value of a field (e.g. per prompt),
    ``per_trial`` declares how many units that leaves per trial at least (checked against the
    rows; the power check counts this floor). ``average_seeds`` averages each unit over the
    seeds first, so that a unit is (cell, instance): for a quantity the seeds only repeat
    (an agent's deterministic rule scored on the problem's fixed held-out items), where
    seeds counted apart would narrow an interval without new evidence."""

    where: dict[str, Any] = Field(default_factory=dict)
    group_by: str | None = None
    per_trial: int | None = Field(default=None, ge=1)
    average_seeds: bool = False


class SeriesSpec(_Strict):
    """One side of a ``correlation`` claim's pairs (papergym.leaderboard.correlation): a
    trial ``metric``, or a ``curve`` read at each anchor step t: its value at t, the ``stat``
    of its points in the ``window`` of steps [t - window, t), or its ``change`` (drop | gain)
    from t to t + ``lead``."""

    metric: str | None = None
    curve: str | None = None
    window: int | None = Field(default=None, ge=1)
    stat: Literal["min", "max", "mean", "median"] | None = None
    lead: int | None = Field(default=None, ge=1)
    change: Literal["drop", "gain"] | None = None

    @model_validator(mode="after")
    def _one_rule(self) -> SeriesSpec:
        if (self.metric is None) == (self.curve is None):
            raise ValueError("name exactly one of metric (a trial metric) and curve (a stored "
                             "curve)")
        if (self.window is None) != (self.stat is None):
            raise ValueError("window and stat go together (the stat of the curve's points in "
                             "the window before each anchor)")
        if (self.lead is None) != (self.change is None):
            raise ValueError("lead and change go together (the curve's drop or gain from each "
                             "anchor to anchor + lead)")
        if self.metric is not None and (self.window is not None or self.lead is not None):
            raise ValueError("window/stat and lead/change read a curve; a metric has one value "
                             "per trial")
        if self.window is not None and self.lead is not None:
            raise ValueError("a side is a windowed stat or a lagged change, not both")
        return self

    def describe(self) -> str:
        if self.metric is not None:
            return self.metric
        if self.window is not None:
            return f"{self.stat} of {self.curve} over [t-{self.window}, t)"
        if self.lead is not None:
            return f"{self.curve} {self.change} from t to t+{self.lead}"
        return f"{self.curve}(t)"


class ClaimSpec(_Strict):
    """A paper's claim as a testable comparison; evaluated by papergym.leaderboard.claims.

    kind: ``compare`` (agent vs baseline(s), paired over units), ``interaction`` (the
    agent's gain over one baseline at the cells ``larger_at`` minus its gain at ``than_at``),
    ``threshold`` (a statistic of one agent's metric against a value), ``rate`` (the share of
    units meeting a condition against a required share), ``trend`` (the sign of a metric's
    rank correlation with a cell argument ``axis``, per seed, sign-tested over seeds),
    ``rate_trend`` (the share of units meeting a condition rises or falls along ``axis``:
    Cochran-Armitage test over its levels, Newcombe interval of the last level's share minus
    the first's), ``rank`` (first places per instance among the agent and its baselines, the metric averaged
    over seeds: Friedman test, and an exact sign test of first places against each baseline) or
    ``correlation`` (Spearman's rho over the (x, y) pairs of every run of ``agents`` pooled,
    x and y read from trial metrics or curves, with a percentile bootstrap over whole runs:
    papergym.leaderboard.correlation). With ``unit: instance`` the items of a seed share its
    trained artifact: rank and rate_trend are then tested over seeds (docs/contract.md) unless
    the section declares ``independent_items``.

    role: ``paper`` (a headline claim of the paper; the only kind tallied), ``sanity`` (a
    precondition or a fact true by construction) or ``diagnostic`` (reported, never tallied).
    ``requires`` lists claims that must hold for this one to be evaluable.
    """

    id: SafeName
    statement: str
    problem: str  # section name
    kind: Literal["compare", "interaction", "threshold", "rate", "trend", "rate_trend", "rank",
                  "correlation"]
    role: Literal["paper", "sanity", "diagnostic"] = "paper"
    requires: list[str] = Field(default_factory=list)
    tiers: list[Tier] = Field(default_factory=lambda: list(TIERS))
    agent: str | None = None  # every kind but correlation (which names agents)
    metric: str | None = None  # defaults to the section's primary metric
    direction: Literal["max", "min"] | None = None  # required for a compare on another metric
    where: dict[str, Any] = Field(default_factory=dict)  # cell kwargs filter
    unit: Literal["trial", "instance"] = "trial"
    units: UnitSpec | None = None  # filter / group the instance units (unit: instance)
    alpha: float = Field(default=0.05, gt=0, lt=0.5)
    # compare
    baseline: str | list[str] | None = None
    expect: Literal["better", "no_worse"] = "better"
    test: Literal["wilcoxon", "sign"] = "wilcoxon"  # sign = exact McNemar for 0/1 metrics
    margin: float = Field(default=0.0, ge=0)  # better: beyond +margin; no_worse: above -margin
    min_ratio: float | None = None  # also require median(baseline / agent) >= this (costs)
    # pairing across cells: the agent at the cells agent_at, the baseline at baseline_at,
    # on the units (other cell kwargs, seed[, instance]) they share
    agent_at: dict[str, Any] = Field(default_factory=dict)
    baseline_at: dict[str, Any] = Field(default_factory=dict)
    # changes instead of levels: the agent's metric minus agent_ref's, against the baseline's
    # minus baseline_ref's, per shared unit (e.g. a method's degradation under compression
    # against a baseline's degradation)
    agent_ref: str | None = None
    baseline_ref: str | None = None
    # censored data: a 0/1 metric saying whether the event happened (e.g. reached_target); a
    # unit where it is 0 has the compared metric at its worst (never reached), whether stored
    # or not, and two such units tie; needs the sign test
    censored: str | None = None
    # interaction
    larger_at: dict[str, Any] = Field(default_factory=dict)
    than_at: dict[str, Any] = Field(default_factory=dict)
    # threshold
    stat: Literal["iqm", "mean", "median", "max", "min"] = "iqm"
    op: Literal[">=", "<=", ">", "<"] | None = None
    value: float | None = None
    # rate
    at_least: float | None = Field(default=None, ge=0, le=1)
    at_most: float | None = Field(default=None, ge=0, le=1)
    # rank: values within this of the best share the first place
    ties_within: float = Field(default=0.0, ge=0)
    # trend, rate_trend (rate_trend also takes op and value: the condition counted)
    axis: str | None = None
    trend: Literal["increasing", "decreasing"] | None = None
    # correlation (also takes op: "<" | ">" and value: the rho it is compared with): Spearman's
    # rho over the (x, y) pairs of every run of `agents` pooled, bootstrapped over runs
    agents: list[str] = Field(default_factory=list)
    x: SeriesSpec | None = None
    y: SeriesSpec | None = None
    min_runs: int | None = Field(default=None, ge=2)  # fewer stored runs: no data
    min_pairs: int = Field(default=10, ge=3)  # fewer pairs: no data
    # none: one rho over all pairs pooled; agent | run: the pairs-weighted mean of the rho
    # inside each agent's runs (or each run), free of differences between the groups
    within: Literal["none", "agent", "run"] | None = None  # None: run for paper claims, else none
    # verdicts v2 (docs/contract.md "Families, power, post hoc"): `family` groups the claims
    # that state one headline (default: the id's stem, see claim_family); `sesoi` is the
    # smallest effect of interest on the estimand's scale (power is computed there); `binary`
    # declares a 0/1 metric (paired proportion difference; inferred when every value is 0/1);
    # `post_hoc` marks a claim added or changed after its benchmark's first publish
    family: SafeName | None = None
    sesoi: float | None = Field(default=None, gt=0)
    binary: bool = False
    # the range of the claim's own `metric` (the section's primary metric declares its range
    # on the section's metric.bounded)
    bounded: tuple[float, float] | None = None
    post_hoc: bool = False
    post_hoc_reason: str | None = None

    _bounds = field_validator("bounded")(_check_bounds)

    @property
    def family_id(self) -> str:
        return self.family or claim_family(self.id)

    @property
    def within_groups(self) -> str:
        """The correlation's grouping: ``within`` as declared, else ``run`` for a paper claim
        (a pooled rho mixes between-agent differences in) and ``none`` otherwise."""
        if self.within is not None:
            return self.within
        return "run" if self.role == "paper" else "none"

    # fairness (docs/contract.md, "Fair and specific claims"): the agent-config keys (or cell
    # kwargs) the compared agents hold equal, checked against their resolved configurations by
    # papergym.benchmarks.matched; the control is the method with the claimed mechanism removed
    # (an agent label), evaluated in the agent's place, or "none" with a one-line reason
    matched: list[str] = Field(default_factory=list)
    control: str | None = None
    control_reason: str | None = None

    @model_validator(mode="after")
    def _fairness_fields(self) -> ClaimSpec:
        if len(set(self.matched)) != len(self.matched):
            raise ValueError(f"matched: keys {self.matched} repeat")
        if self.control is None:
            if self.control_reason is not None:
                raise ValueError("control_reason: explains `control: none`; set control")
            return self
        if self.kind == "correlation":
            raise ValueError("control: a correlation claim names no agent to replace")
        if self.control == self.agent:
            raise ValueError(f"control: {self.control!r} is the claim's own agent; name the "
                             "agent without the mechanism, or `control: none` with a reason")
        reason = (self.control_reason or "").strip()
        if self.control == "none" and (not reason or "\n" in reason):
            raise ValueError("control_reason: `control: none` needs a one-line reason (why the "
                             "claim credits no mechanism, e.g. a pure comparison to a baseline)")
        return self

    @model_validator(mode="after")
    def _fields_for_kind(self) -> ClaimSpec:
        if self.kind == "correlation":
            return self._correlation_fields()
        if self.agent is None:
            raise ValueError(f"agent: a {self.kind} claim needs agent")
        if self.within is not None:
            raise ValueError(f"within: belongs to a correlation claim, not a {self.kind}")
        if self.bounded is not None and self.metric is None:
            raise ValueError("bounded: declares the range of the claim's own metric; the "
                             "section's primary metric declares its range as metric.bounded")
        if self.post_hoc and not self.post_hoc_reason:
            raise ValueError("post_hoc_reason: a post_hoc claim says why it was added or changed "
                             "after the first publish")
        if self.agents or self.x is not None or self.y is not None:
            raise ValueError(f"agents, x and y belong to a correlation claim, not a {self.kind}")
        if self.kind == "rank" and (not self.baseline or self.unit != "instance"):
            raise ValueError("a rank claim needs baseline (the other policies) and unit: instance")
        if self.kind in ("compare", "interaction") and not self.baseline:
            raise ValueError(f"a {self.kind} claim needs baseline")
        if self.kind == "interaction" and (len(self.baselines) != 1 or not self.larger_at
                                           or not self.than_at):
            raise ValueError("an interaction claim needs one baseline, larger_at and than_at")
        if (self.agent_at or self.baseline_at) and self.kind != "compare":
            raise ValueError("agent_at / baseline_at pair cells in a compare claim only")
        if (self.agent_ref is None) != (self.baseline_ref is None) or (
                self.agent_ref is not None and self.kind != "compare"):
            raise ValueError("agent_ref and baseline_ref go together, in a compare claim")
        if self.censored is not None and (self.kind != "compare" or self.test != "sign"):
            raise ValueError("censored: a compare claim with test: sign (censored units are "
                             "ranked, never subtracted)")
        if self.censored is not None and self.agent_ref is not None:
            raise ValueError("censored and agent_ref/baseline_ref cannot be combined")
        if self.units is not None and self.unit != "instance":
            raise ValueError("units: filters and groups instance units; set unit: instance")
        if self.id in self.requires:
            raise ValueError(f"requires: {self.id} cannot require itself")
        if self.kind in ("threshold", "rate", "rate_trend") and (self.op is None
                                                                 or self.value is None):
            raise ValueError(f"a {self.kind} claim needs op and value")
        if self.kind == "rate" and (self.at_least is None) == (self.at_most is None):
            raise ValueError("a rate claim needs exactly one of at_least, at_most")
        if self.kind in ("trend", "rate_trend") and (self.axis is None or self.trend is None):
            raise ValueError(f"a {self.kind} claim needs axis and trend (increasing | decreasing)")
        return self

    def _correlation_fields(self) -> ClaimSpec:
        for name in ("agent", "baseline"):
            if getattr(self, name) is not None:
                raise ValueError(f"{name}: a correlation claim pools the runs of `agents` (a "
                                 "list); it names no agent or baseline")
        if not self.agents or len(set(self.agents)) != len(self.agents):
            raise ValueError("agents: a correlation claim needs a list of distinct agents")
        for name in ("x", "y"):
            if getattr(self, name) is None:
                raise ValueError(f"{name}: a correlation claim needs x and y ({{metric: ...}} "
                                 "or {curve: ..., window and stat | lead and change})")
        if self.op not in ("<", ">"):
            raise ValueError("op: a correlation claim needs op '<' or '>' (the side of value "
                             "the pooled rho is claimed to lie on)")
        if self.value is None or not -1 < self.value < 1:
            raise ValueError("value: a correlation claim needs a value strictly between -1 and "
                             "1 (the rho it is compared with)")
        if self.unit != "trial" or self.units is not None:
            raise ValueError("unit: a correlation claim pools whole runs (unit: trial, no units)")
        for name in ("metric", "direction", "agent_at", "baseline_at", "larger_at", "than_at",
                     "axis", "trend", "agent_ref", "baseline_ref", "censored"):
            if getattr(self, name):
                raise ValueError(f"{name}: not a field of a correlation claim (x and y name "
                                 "what is read)")
        return self

    @property
    def policies(self) -> list[str]:
        """Every agent the claim reads: agent and baselines, or a correlation's agents."""
        if self.kind == "correlation":
            return list(self.agents)
        return [a for a in (self.agent, *self.baselines) if a is not None]

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
    scale: dict[str, dict[str, Budget]] = Field(default_factory=dict)  # the paper's, per section
    departures: list[str] = Field(default_factory=list)  # from the paper, benchmark-wide

    @model_validator(mode="after")
    def _references_resolve(self) -> BenchmarkSpec:
        sections = {p.name: p for p in self.problems}
        if len(sections) != len(self.problems):
            raise ValueError("problems: section names must be unique")
        for name in self.scale:
            if name not in sections:
                raise ValueError(f"scale.{name}: not a section; sections are {sorted(sections)}")
        ids = [c.id for c in self.claims]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"claims: ids {dupes} appear twice")
        for i, claim in enumerate(self.claims):
            for required in claim.requires:
                if required not in ids:
                    raise ValueError(f"claims.{i}.requires: {required!r} is not a claim id")
        self._no_cycles()
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
            refs = [r for r in (claim.agent_ref, claim.baseline_ref) if r is not None]
            for who in [*claim.policies, *refs]:
                if who not in names:
                    raise ValueError(
                        f"claims.{i} ({claim.id}): agent {who!r} is not in section "
                        f"{claim.problem!r}; its agents are {sorted(names)}"
                    )
        return self

    def _no_cycles(self) -> None:
        requires = {c.id: c.requires for c in self.claims}
        state: dict[str, int] = {}

        def visit(cid: str, path: list[str]) -> None:
            if state.get(cid) == 2:
                return
            if state.get(cid) == 1:
                raise ValueError(f"claims: requires form a cycle {' -> '.join(path + [cid])}")
            state[cid] = 1
            for r in requires[cid]:
                visit(r, path + [cid])
            state[cid] = 2

        for cid in requires:
            visit(cid, [])

    @model_validator(mode="after")
    def _fairness_agents_resolve(self) -> BenchmarkSpec:
        sections = {p.name: p for p in self.problems}
        for i, section in enumerate(self.problems):
            if section.method is not None and section.method not in {a.name for a in
                                                                     section.agents}:
                raise ValueError(f"problems.{i}.method: {section.method!r} is not an agent of "
                                 f"section {section.name!r}")
        for i, claim in enumerate(self.claims):
            names = {a.name for a in sections[claim.problem].agents}
            if claim.control not in (None, "none") and claim.control not in names:
                raise ValueError(f"claims.{i}.control ({claim.id}): {claim.control!r} is not an "
                                 f"agent of section {claim.problem!r}; its agents are "
                                 f"{sorted(names)} (or `control: none` with control_reason)")
        return self

    def section(self, name: str) -> ProblemSection:
        for p in self.problems:
            if p.name == name:
                return p
        raise KeyError(name)


# ---------------------------------------------------------------------------------------------
# The power check: can every claim reach its alpha with the units its tiers declare?

# A spec whose paper claims cannot reach their alpha at standard or full is refused before a
# run (benchmarks/spec_checks.py ``check_spec``, after the registry checks);
# ``load_spec(strict_power=True)`` refuses it at load. ``papergym check-specs`` reports every tier.
STRICT_POWER = True
ENFORCED_TIERS = ("standard", "full")


@dataclass(frozen=True)
class PowerRow:
    """One claim (or a section's discrimination check) at one tier."""

    claim: str  # claim id, or "section <name>" for a trivial/reference check
    tier: str
    n: int | None  # units the tier declares (None: not declared or not derivable)
    power: Power | None
    needed: int | None
    note: str = ""
    # the units are seeds (clustered items) or the claim is a threshold: a shortfall there is
    # reported (check-specs, and `underpowered` at evaluation), not refused, until the
    # family's benchmark is re-run with the seeds it needs
    by_seed: bool = False

    @property
    def ok(self) -> bool:
        return self.power is not None and self.power.reachable

    @property
    def refused(self) -> bool:
        """A shortfall that makes the spec unusable (standard and full tiers)."""
        return self.tier in ENFORCED_TIERS and not self.ok and not self.by_seed

    def message(self) -> str:
        if self.n is None:
            return f"{self.claim} at tier {self.tier}: {self.note}"
        need = f"; needs n >= {self.needed}" if self.needed else "; no n reaches it"
        return (f"{self.claim} at tier {self.tier} cannot reach its alpha: "
                f"{self.power.describe() if self.power else self.note}{need}")


def _may_match(cell: dict[str, Any], where: dict[str, Any]) -> bool:
    """Whether a spec cell can satisfy a cell filter (a kwarg the cell leaves to the problem's
    tier defaults counts as matching: the check then errs towards more units)."""
    for key, wanted in where.items():
        if key in cell and (cell[key] not in wanted if isinstance(wanted, list)
                            else cell[key] != wanted):
            return False
    return True


def _reduced(cell: dict[str, Any], drop: set[str]) -> str:
    return json.dumps({k: v for k, v in cell.items() if k not in drop}, sort_keys=True,
                      default=str)


def claim_units(spec: BenchmarkSpec, claim: ClaimSpec, tier: str) -> tuple[int | None, str]:
    """Paired units ``claim`` has at ``tier`` by the spec's declaration: seeds x paired cells x
    units per trial (seeds for a trend). None with the reason when it cannot be derived."""
    from papergym.leaderboard.claims import claim_units_per_trial

    section = spec.section(claim.problem)
    tier_spec = section.tiers.get(tier)
    if tier_spec is None:
        return 0, f"section {section.name} has no tier {tier}"
    refs = [r for r in (claim.agent_ref, claim.baseline_ref) if r is not None]
    for who in [*claim.policies, *refs]:
        if not section.runs_at(who, tier):
            return 0, f"agent {who} does not run at tier {tier}"
    seeds = len(tier_spec.seed_list())
    cells = [c for c in tier_spec.expand_cells() if _may_match(c, claim.where)]
    if claim.kind == "correlation":  # a unit is a run: agents x cells x seeds
        return len(claim.agents) * len(cells) * seeds, ""
    if claim.kind == "trend":
        axis = {json.dumps(c.get(claim.axis), default=str) for c in cells if claim.axis in c}
        return (seeds, "") if len(axis) > 2 else (0, f"fewer than 3 values of {claim.axis}")
    if claim.kind == "rate_trend":
        axis = {json.dumps(c.get(claim.axis), default=str) for c in cells if claim.axis in c}
        if len(axis) < 2:
            return 0, f"fewer than 2 values of {claim.axis}"
    sides = ((claim.larger_at, claim.than_at) if claim.kind == "interaction"
             else (claim.agent_at, claim.baseline_at))
    drop = set(sides[0]) | set(sides[1])
    first = {_reduced(c, drop): c for c in cells if _may_match(c, sides[0])}
    second = {_reduced(c, drop) for c in cells if _may_match(c, sides[1])}
    paired = [cell for key, cell in first.items() if key in second]
    total = 0
    for cell in paired:
        per_trial = claim_units_per_trial(claim, tier_spec, cell)
        if per_trial is None:
            return None, ("units per trial are not declared (the tier's units_per_trial or "
                          "the claim's units.per_trial)")
        total += per_trial
    if claim.kind == "rate_trend" and is_clustered(claim, section):
        return seeds, ""  # the seed is the unit: one trend along the axis per seed
    if is_clustered(claim, section):
        return seeds * len(paired), ""  # the seed (the trained artifact) is the unit
    if claim.kind == "rank" or (claim.units is not None and claim.units.average_seeds):
        return total, ""  # a unit is (cell, instance), its metric averaged over seeds
    return seeds * total, ""


def metric_bounds(claim: ClaimSpec, section: ProblemSection) -> tuple[float, float] | None:
    """The declared range of the metric ``claim`` tests: its own ``bounded``, else the
    section metric's where the claim tests the section's primary metric."""
    if claim.bounded is not None:
        return claim.bounded
    if claim.metric in (None, section.metric.name):
        return section.metric.bounded
    return None


def margin_test_refusal(claim: ClaimSpec, section: ProblemSection) -> str:
    """Why ``claim`` may not run a signed-rank test against its margin ("" when it may): its
    metric is declared bounded. Clustered items (the mean over seeds) and 0/1 metrics
    (paired proportions) do not use that test."""
    bounds = metric_bounds(claim, section)
    if (bounds is None or claim.kind not in ("compare", "interaction") or claim.test != "wilcoxon"
            or claim.margin == 0 or claim.binary or is_clustered(claim, section)):
        return ""
    metric = claim.metric or section.metric.name
    return (f"a Wilcoxon signed-rank test against margin {claim.margin:g} on {metric!r}, "
            f"declared bounded in [{bounds[0]:g}, {bounds[1]:g}]: values at a bound tie, and "
            "the test against a margin counts every tie as a win, so it cannot fail; use "
            "test: sign (the paired proportion difference, its margin on that scale; "
            "binary: true for a 0/1 metric), or unit: instance with the seed as the unit (the "
            "mean difference over seeds), or margin: 0")


def is_clustered(claim: ClaimSpec, section: ProblemSection) -> bool:
    """Whether ``claim``'s units are items clustered by seed: analysed with the seed as the
    independent unit (papergym.leaderboard.clustered)."""
    return (claim.kind in ("compare", "interaction", "threshold", "rate", "rank", "rate_trend")
            and claim.unit == "instance" and not section.independent_items
            and not (claim.units is not None and claim.units.average_seeds))


def claim_test(claim: ClaimSpec, clustered: bool) -> tuple[str, str]:
    """(kind, test) of the best-case power check: a clustered rank or rate_trend claim is the
    sign-flip test over seeds (2^-n, as a compare); an item-level rank claim the sign test."""
    if clustered and claim.kind in ("rank", "rate_trend"):
        return "compare", "wilcoxon"
    kind = "compare" if claim.kind in ("interaction", "rank") else claim.kind
    return kind, "sign" if claim.kind == "rank" else claim.test


def power_table(spec: BenchmarkSpec) -> list[PowerRow]:
    """Every claim at every tier it is evaluated at, and every section's discrimination check
    at every tier, with the best p (or bound) its declared units allow."""
    from papergym.leaderboard.claims import needed_units

    table = []
    for claim in spec.claims:
        for tier in claim.tiers:
            if tier not in spec.section(claim.problem).tiers:
                continue
            n, why = claim_units(spec, claim, tier)
            if n is None:
                table.append(PowerRow(claim.id, tier, None, None, None, why))
                continue
            clustered = is_clustered(claim, spec.section(claim.problem))
            kind, test = claim_test(claim, clustered)
            power = best_case(kind, n, test=test, baselines=max(1, len(claim.baselines)),
                              alpha=claim.alpha, expect=claim.expect, margin=claim.margin,
                              at_least=claim.at_least, at_most=claim.at_most,
                              min_n=claim.min_runs, stat=claim.stat, clustered=clustered)
            table.append(PowerRow(claim.id, tier, n, power, needed_units(claim, clustered=clustered),
                                  why, clustered or claim.kind == "threshold"))
    for section in spec.problems:
        if section.trivial is None or section.reference is None:
            continue
        for tier, tier_spec in section.tiers.items():
            both = all(section.runs_at(a, tier) for a in (section.trivial, section.reference))
            per_cell = sum(tier_spec.units_in(c) or 1 for c in tier_spec.expand_cells())
            n = len(tier_spec.seed_list()) * per_cell if both else 0
            power = best_case("compare", n)
            table.append(PowerRow(f"section {section.name}", tier, n, power,
                                  needed_n("compare"), "" if both else "an agent does not run"))
    return table


def power_errors(spec: BenchmarkSpec) -> list[str]:
    """The rows of :func:`power_table` that make a spec unusable: standard and full tiers."""
    return [row.message() for row in power_table(spec) if row.refused]


def load_spec(path: str | Path, strict_power: bool | None = None) -> BenchmarkSpec:
    """Read and validate one spec file; every failure is a one-line :class:`SpecError`.
    ``strict_power`` makes an underpowered claim at standard or full an error here (the runner
    refuses it in ``check_spec``, after the registry checks)."""
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
        spec = BenchmarkSpec.model_validate(raw)
    except ValidationError as err:
        first = err.errors()[0]
        field = ".".join(str(p) for p in first["loc"]) or "(top level)"
        more = f" (and {err.error_count() - 1} more problems)" if err.error_count() > 1 else ""
        message = " ".join(str(first["msg"]).split())  # one line, whatever the validator said
        message = message.removeprefix("Value error, ")
        head, sep, rest = message.partition(": ")
        if field == "(top level)" and sep and " " not in head:  # "claims.0.problem: ..."
            field, message = head, rest
        elif sep and head.isidentifier():  # a model's check naming its field: "agents: ..."
            field, message = f"{field}.{head}", rest
        raise SpecError(f"{path}: field {field}: {message}{more}") from None
    if strict_power:
        errors = power_errors(spec)
        if errors:
            more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
            raise SpecError(f"{path}: claim {errors[0]}{more}")
    return spec


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
