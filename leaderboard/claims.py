"""Claims: each paper's headline claim, written in its spec, evaluated from stored rows.

Verdicts are computed, never written by hand. Each is a one-sided level-``alpha`` decision, and
the effect printed beside it is the estimator of the statistic that was tested, with the
two-sided ``1 - 2 alpha`` interval whose ends are the one-sided ``1 - alpha`` bounds (90% at
the default alpha 0.05). Verdicts:

- ``holds``: the test rejects in the claimed direction *and* the bound on the claimed side
  lies beyond the claim's margin;
- ``fails``: the same, in the other direction;
- ``inconclusive``: neither, with enough units that either was possible;
- ``underpowered``: the units at hand cannot give ``holds`` even if every one agreed
  (papergym.leaderboard.power), or an inconclusive claim has under 50% power at its sesoi;
- ``not evaluable``: a claim it ``requires`` did not hold, or (for a ``paper`` claim) its
  section is non-discriminative, or the stored rows do not have the units the spec declares;
- ``not run at this tier`` / ``no data``: nothing to evaluate (for ``correlation``: fewer runs
  or pairs than the claim's ``min_runs`` / ``min_pairs``).

Items of one trial share its trained artifact: with ``unit: instance`` the seed is the unit
(papergym.leaderboard.clustered) unless the section declares ``independent_items``. Each
verdict also carries its design (unit, seeds, ICC, design effect, family, sesoi, power).

Pure statistics over rows: no store, no rendering. The tests behind each kind are documented
in docs/contract.md.
"""

from __future__ import annotations

import functools
import math
import operator
import statistics
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .clustered import cluster_means, icc_oneway, sign_flip
from .power import (
    agresti_min,
    agresti_min_centre,
    best_case,
    needed_n,
    newcombe,
    power_at,
    wilson,
)
from .scoring import BOOTSTRAP_REPS, cell_key
from .store import Row

OPS = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt}
VERDICTS = ("holds", "fails", "inconclusive", "underpowered", "not evaluable")
NOT_EVALUATED = ("not run at this tier", "no data")
HELD = ("holds", "holds, not specific")  # what satisfies a `requires`
ROLES = ("paper", "sanity", "diagnostic")
RESAMPLE_SEEDS_FROM = 5  # correlation: bootstrap over seeds from 5 (2^-5 < 0.05), else runs
THRESHOLD_BOOTSTRAP_FROM = 20  # a median threshold uses the percentile bootstrap from here
HL_MAX_UNITS = 6000  # n(n+1)/2 Walsh averages are held in memory: 18M at this size


@dataclass
class Verdict:
    id: str
    statement: str
    kind: str
    verdict: str
    role: str = "paper"
    effect: float | None = None
    effect_name: str = ""  # the estimator behind ``effect`` (e.g. "Hodges-Lehmann shift")
    ci: tuple[float, float] | None = None
    ci_level: float | None = None  # two-sided coverage of ``ci``
    p_value: float | None = None
    n_units: int = 0
    n_declared: int | None = None  # the units the spec declares at this tier (power check)
    n_pairs: int | None = None  # correlation: the (x, y) pairs pooled over the n_units runs
    best_p: float | None = None  # the best p (or bound) those units could reach
    requires: list[str] = field(default_factory=list)
    detail: str = ""
    # verdicts v2: the design behind the numbers (docs/contract.md)
    family: str | None = None  # the headline this claim states with others (tally unit)
    sesoi: float | None = None  # smallest effect of interest, on the effect's scale
    power: float | str | None = None  # at the sesoi, or why none ("not declared")
    unit: str | None = None  # "seed" (clustered items), "trial" or "item"
    n_clusters: int | None = None  # independent units (seeds) behind n_units items
    icc: float | None = None  # share of the item variance between seeds (clustered only)
    design_effect: float | None = None  # 1 + (items per seed - 1) * icc
    post_hoc: bool = False  # added or changed after the benchmark's first publish
    p_worse: float | None = None  # the other side's p (Holm over a family's fails)
    unit_sd: float | None = None  # standard deviation of the tested units (power at the sesoi)
    # fairness (papergym.leaderboard.fairness): the keys held matched, the control (an agent
    # label or "none"), why none, and the verdict of the claim with the control in its place
    matched: list[str] = field(default_factory=list)
    control: str | None = None
    control_reason: str | None = None
    control_verdict: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class SectionCheck:
    """Does a section measure anything: its reference's margin over its trivial agent."""

    section: str
    trivial: str | None
    reference: str | None
    status: str  # discriminative | non-discriminative | underpowered | no data | not declared
    effect: float | None = None
    ci: tuple[float, float] | None = None
    ci_level: float | None = None
    n_units: int = 0
    detail: str = ""
    # fairness (papergym.leaderboard.fairness): the method's margin over the trivial agent
    # ({effect, ci_low, ci_high, beats}) and baselines indistinguishable from the trivial agent
    method: str | None = None
    method_vs_trivial: dict[str, Any] | None = None
    possibly_broken_baselines: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def tally(entries: list[dict[str, Any]] | list[Verdict]) -> dict[str, int]:
    """Counts of ``paper`` claims by verdict (every key of VERDICTS, plus ``other`` for
    claims not evaluated); sanity and diagnostic claims are not counted, nor post-hoc claims
    (counted apart: papergym.leaderboard.families)."""
    dicts = [e.as_dict() if isinstance(e, Verdict) else e for e in entries]
    counts = Counter(d["verdict"] for d in dicts if d.get("role", "paper") == "paper"
                     and not d.get("post_hoc", False))
    out = {v: counts.get(v, 0) for v in VERDICTS}
    out["other"] = sum(counts.values()) - sum(out.values())
    return out


# ---------------------------------------------------------------------------------------------
# Evaluating a spec's claims


def evaluate_claims(spec: Any, tier: str, rows: list[Row],
                    checks: dict[str, SectionCheck] | None = None) -> list[Verdict]:
    """Every claim of ``spec`` against the rows of its current trials at ``tier``, in spec
    order; ``requires`` and non-discriminative sections gate verdicts to ``not evaluable``."""
    from .fairness import section_checks, with_control  # (fairness imports this module)

    checks = section_checks(spec, tier, rows) if checks is None else checks
    by_id = {c.id: c for c in spec.claims}
    done: dict[str, Verdict] = {}

    def visit(claim: Any) -> Verdict:
        if claim.id in done:
            return done[claim.id]
        check = checks.get(claim.problem)
        verdict = _evaluate_at_tier(spec, tier, rows, claim)
        verdict = with_control(spec, tier, rows, claim, verdict, _evaluate_at_tier, check)
        if (verdict.verdict not in NOT_EVALUATED and claim.role == "paper" and check is not None
                and check.status == "non-discriminative"):
            verdict = _not_evaluable(verdict, f"section {claim.problem} is non-discriminative "
                                              f"({check.reference} vs {check.trivial})")
        unmet = [f"{r} ({visit(by_id[r]).verdict})" for r in claim.requires
                 if visit(by_id[r]).verdict not in HELD]
        if unmet and verdict.verdict != "not run at this tier":
            verdict = _not_evaluable(verdict, "requires " + ", ".join(unmet))
        done[claim.id] = verdict
        return verdict

    return [visit(c) for c in spec.claims]


def _not_evaluable(verdict: Verdict, why: str) -> Verdict:
    was = verdict.verdict
    verdict.verdict = "not evaluable"
    verdict.detail = f"{why}; would be {was}: {verdict.detail}" if was != "not evaluable" \
        else f"{why}; {verdict.detail}"
    return verdict


def _evaluate_at_tier(spec: Any, tier: str, rows: list[Row], claim: Any) -> Verdict:
    if tier not in claim.tiers:
        return Verdict(claim.id, claim.statement, claim.kind, "not run at this tier",
                       role=claim.role, requires=list(claim.requires),
                       detail=f"evaluated at {', '.join(claim.tiers)}")
    from papergym.benchmarks.spec import claim_units

    section = spec.section(claim.problem)
    section_rows = [r for r in rows if r.section == section.name and r.tier == tier]
    tier_spec = section.tiers.get(tier)
    verdict = evaluate_claim(claim, section, section_rows, tier_spec=tier_spec)
    verdict.n_declared = claim_units(spec, claim, tier)[0]
    return verdict


def evaluate_claim(claim: Any, section: Any, rows: list[Row], tier_spec: Any = None) -> Verdict:
    """One claim over the rows of its section at one tier. ``tier_spec`` (the section's
    TierSpec) supplies the declared units per trial, checked against the rows."""
    metric = claim.metric or section.metric.name
    direction = claim.direction or section.metric.direction
    rows = [r for r in rows if _matches(r, claim.where)]
    verdict = Verdict(claim.id, claim.statement, claim.kind, "no data", role=claim.role,
                      requires=list(claim.requires))
    _describe_design(claim, section, verdict)
    mismatch = (_unit_count_mismatch(claim, tier_spec, rows, metric)
                or _seeds_differ(claim, rows, metric))
    if claim.kind == "trend":
        verdict = _trend(claim, rows, metric, verdict)
    elif claim.kind == "rate_trend":
        verdict = (rate_trend_by_seed(claim, rows, metric, verdict) if verdict.unit == "seed"
                   else _rate_trend(claim, rows, metric, verdict))
    elif claim.kind == "rank":
        verdict = (rank_by_seed(claim, rows, metric, direction, verdict)
                   if verdict.unit == "seed" else _rank(claim, rows, metric, direction, verdict))
    elif claim.kind in ("compare", "interaction"):
        from papergym.benchmarks.spec import margin_test_refusal

        verdict = _compare(claim, rows, metric, direction, verdict, verdict.unit == "seed",
                           margin_test_refusal(claim, section))
    elif claim.kind == "correlation":
        verdict = _correlation(claim, rows, verdict)
    else:
        units = unit_values(rows, claim.agent, metric, claim)
        if not units:
            verdict.detail = f"no stored results for {claim.agent!r} on {metric!r}"
            return verdict
        values = np.array(list(units.values()))
        verdict.n_units = len(values)
        if verdict.unit == "seed":  # one value per trained artifact: the mean of its items
            clusters = [key[:2] for key in units]
            verdict.icc, verdict.design_effect = icc_oneway(values, clusters)
            if claim.kind == "rate":  # the share of each seed's items that meet the condition
                values = np.array([OPS[claim.op](v, claim.value) for v in values], dtype=float)
            values = cluster_means(values, clusters)[0]
            verdict.n_units = verdict.n_clusters = len(values)
        verdict = (_threshold if claim.kind == "threshold" else _rate)(claim, values, verdict)
    if mismatch and verdict.verdict not in NOT_EVALUATED:
        verdict = _not_evaluable(verdict, mismatch)
    return verdict


def _describe_design(claim: Any, section: Any, verdict: Verdict) -> None:
    """The claim's family, sesoi, post-hoc mark and unit of analysis on its verdict."""
    verdict.family = claim.family_id if hasattr(claim, "family_id") else None
    verdict.sesoi = getattr(claim, "sesoi", None)
    verdict.post_hoc = bool(getattr(claim, "post_hoc", False))
    if claim.kind in ("compare", "interaction", "threshold", "rate", "rank", "rate_trend") \
            and claim.unit == "instance":
        averaged = claim.units is not None and claim.units.average_seeds
        independent = bool(getattr(section, "independent_items", False))
        verdict.unit = "item" if averaged or independent else "seed"
    else:
        verdict.unit = "trial" if claim.unit == "trial" else "item"
    if verdict.sesoi is None and claim.role == "paper":
        verdict.power = "not declared"


def _seeds_differ(claim: Any, rows: list[Row], metric: str) -> str:
    """A message if ``units.average_seeds`` would average items whose values differ between
    seeds: then each seed scored them with its own artifact, and the seed is the unit."""
    if (claim.unit == "trial" or claim.units is None or not claim.units.average_seeds
            or claim.kind not in ("compare", "interaction", "threshold", "rate", "rank")):
        return ""
    for agent in (claim.agent, *claim.baselines):
        if agent is None:
            continue
        per_seed: dict[tuple, set[float]] = {}
        for r in rows:
            if r.agent == agent and r.ok:
                for name, value in _instance_rows(r, claim, metric).items():
                    per_seed.setdefault((cell_key(r.problem_kwargs), name), set()).add(value)
        differ = sum(1 for v in per_seed.values() if len(v) > 1)
        if differ:
            return (f"units.average_seeds: {agent}'s {metric!r} differs between seeds on "
                    f"{differ} of {len(per_seed)} items, so each seed scored them with its own "
                    "artifact; drop average_seeds (the seed is then the unit)")
    return ""


def _matches(row: Row, where: dict[str, Any]) -> bool:
    resolved = row.provenance.get("resolved_problem_kwargs", row.problem_kwargs)
    return _fields_match({**resolved, **row.problem_kwargs}, where)


def _fields_match(values: dict[str, Any], where: dict[str, Any]) -> bool:
    for key, wanted in where.items():
        value = values.get(key)
        if isinstance(wanted, list):
            if value not in wanted:
                return False
        elif value != wanted:
            return False
    return True


def _instance_rows(row: Row, claim: Any, metric: str) -> dict[str, float]:
    """The units of one trial, filtered by ``units.where`` and averaged per ``units.group_by``."""
    spec = getattr(claim, "units", None)
    where = spec.where if spec is not None else {}
    group_by = spec.group_by if spec is not None else None
    groups: dict[str, list[float]] = {}
    for u in row.units:
        if metric not in u or not _fields_match(u, where):
            continue
        name = str(u.get(group_by) if group_by else u.get("instance"))
        groups.setdefault(name, []).append(float(u[metric]))
    return {name: float(np.mean(v)) for name, v in groups.items()}


def unit_values(rows: list[Row], agent: str, metric: str, claim: Any,
                at: dict[str, Any] | None = None, drop: frozenset[str] = frozenset()
                ) -> dict[tuple, float]:
    """``metric`` of ``agent`` per unit: (cell, seed) for trials, plus the instance (or the
    ``units.group_by`` value) for instance units. ``at`` filters cells; the kwargs in ``drop``
    leave the cell key, so that units pair across the cells they distinguish."""
    out: dict[tuple, float] = {}
    for r in rows:
        if r.agent != agent or not r.ok or (at and not _matches(r, at)):
            continue
        cell = cell_key({k: v for k, v in r.problem_kwargs.items() if k not in drop})
        if claim.unit == "trial":
            if metric in r.metrics:
                out[(cell, r.seed)] = r.metrics[metric]
        else:
            for name, value in _instance_rows(r, claim, metric).items():
                out[(cell, r.seed, name)] = value
    spec = getattr(claim, "units", None)
    if claim.unit != "trial" and spec is not None and spec.average_seeds:
        pooled: dict[tuple, list[float]] = {}
        for (cell, _, name), value in out.items():
            pooled.setdefault((cell, name), []).append(value)
        return {key: float(np.mean(v)) for key, v in pooled.items()}
    return out


def _unit_count_mismatch(claim: Any, tier_spec: Any, rows: list[Row], metric: str) -> str:
    """A message if a trial's stored units differ from the count the spec declares."""
    if claim.unit == "trial" or tier_spec is None:
        return ""
    agents = {claim.agent, *claim.baselines}
    for r in rows:
        if r.agent not in agents or not r.ok:
            continue
        declared = claim_units_per_trial(claim, tier_spec, r.problem_kwargs)
        if declared is None:
            continue
        got = len(_instance_rows(r, claim, metric))
        # a claim's units.per_trial is a floor (a filter's count may vary with the seed's
        # draw, e.g. the mismatched share of a question set); the tier's count is exact
        floor = claim.units is not None and claim.units.per_trial is not None
        if got < declared or (got != declared and not floor):
            return (f"trial {r.agent} seed {r.seed} {cell_key(r.problem_kwargs)} stores {got} "
                    f"units of {metric!r}, the spec declares {'at least ' if floor else ''}"
                    f"{declared}")
    return ""


def claim_units_per_trial(claim: Any, tier_spec: Any, cell: dict[str, Any]) -> int | None:
    """Units one trial contributes to ``claim`` in ``cell``, as the spec declares them."""
    if claim.unit == "trial":
        return 1
    if claim.units is not None and claim.units.per_trial is not None:
        return claim.units.per_trial
    if claim.units is not None and claim.units.where:
        return None  # a filter inside a trial: only units.per_trial can declare the count
    name = claim.units.group_by if claim.units is not None and claim.units.group_by else "instance"
    return tier_spec.units_in(cell, name)


# ---------------------------------------------------------------------------------------------
# Statistics


def walsh_averages(d: np.ndarray) -> np.ndarray:
    """All n(n+1)/2 Walsh averages (d_i + d_j) / 2, i <= j."""
    i, j = np.triu_indices(len(d))
    return (d[i] + d[j]) / 2.0


def hodges_lehmann(d: np.ndarray) -> float:
    """The Hodges–Lehmann shift: the median of the Walsh averages."""
    return float(np.median(walsh_averages(d)))


# The null distributions the verdicts need, in numpy and the standard library: importing
# scipy.stats costs a second of every `papergym claims` call. tests/core/test_claims.py checks
# each against scipy.stats; the rarer tests (Spearman, Friedman) still import it where used.
_SQRT2 = math.sqrt(2.0)


def norm_sf(z: float) -> float:
    """P(Z > z) for a standard normal Z (erfc keeps the far tail's precision)."""
    return 0.5 * math.erfc(z / _SQRT2)


def norm_cdf(z: float) -> float:
    return 0.5 * math.erfc(-z / _SQRT2)


def binom_half_sf(k: int, n: int) -> float:
    """P(X >= k) for X ~ Binomial(n, 1/2): exact integer counts, one rounding at the end."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    return sum(math.comb(n, i) for i in range(k, n + 1)) / 2 ** n


def average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n of ``x``, ties given the mean of the ranks they span."""
    x = np.asarray(x, dtype=float)
    order = np.argsort(x, kind="mergesort")
    ordered = x[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    ends = np.r_[starts[1:], len(x)]  # ranks starts+1 .. ends share their mean
    ranks = np.empty(len(x))
    ranks[order] = np.repeat((starts + ends + 1) / 2.0, ends - starts)
    return ranks


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rho: Pearson's correlation of the average ranks (nan if either is constant)."""
    rx, ry = average_ranks(x) - (len(x) + 1) / 2.0, average_ranks(y) - (len(y) + 1) / 2.0
    scale = math.sqrt(float(rx @ rx) * float(ry @ ry))
    return float(rx @ ry) / scale if scale > 0 else math.nan


@functools.lru_cache(maxsize=64)
def _signed_rank_counts(n: int) -> np.ndarray:
    """Number of subsets of {1..n} with each sum t = 0..n(n+1)/2: the null of T+ times 2^n
    (exact in float64 up to n = 50)."""
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1.0
    for k in range(1, n + 1):
        counts[k:] = counts[k:] + counts[:-k].copy()
    counts.flags.writeable = False
    return counts


def _signed_rank_cdf(n: int) -> np.ndarray:
    """P(T+ <= t) for t = 0..n(n+1)/2 under the null (exact, by counting subsets)."""
    return np.cumsum(_signed_rank_counts(n)) / 2.0 ** n


def walsh_rank(n: int, alpha: float, exact: bool) -> int:
    """k such that the k-th smallest Walsh average is the one-sided 1 - alpha lower bound of
    the shift (Hollander & Wolfe 1999, sec. 3.3): k - 1 = max{t : P(T+ <= t) <= alpha}.
    Zero when even t = 0 is too likely (no bound: 2^-n > alpha)."""
    if exact:
        cdf = _signed_rank_cdf(n)
        return int(np.sum(cdf <= alpha))
    big_n = n * (n + 1) / 2
    sd = math.sqrt(n * (n + 1) * (2 * n + 1) / 24.0)
    t = math.floor(big_n / 2 - 0.5 + statistics.NormalDist().inv_cdf(alpha) * sd)
    return max(0, t + 1)


def hl_interval(d: np.ndarray, alpha: float) -> tuple[float, float, float]:
    """Hodges–Lehmann shift with its exact Walsh-average order-statistic bounds, each one-sided
    at ``alpha`` (exact signed-rank quantiles for n <= 50 without ties, normal otherwise)."""
    n = len(d)
    if n > HL_MAX_UNITS:
        raise ValueError(f"{n} paired units exceed the {HL_MAX_UNITS} the exact Hodges-Lehmann "
                         "interval handles; group the units (units.group_by)")
    walsh = np.sort(walsh_averages(d))
    absolute = np.abs(d)
    exact = n <= 50 and np.all(absolute > 0) and len(np.unique(absolute)) == n
    k = walsh_rank(n, alpha, exact)
    point = float(np.median(walsh)) + 0.0  # + 0.0 turns -0.0 into 0.0
    if k == 0:
        return point, -math.inf, math.inf
    return point, float(walsh[k - 1]) + 0.0, float(walsh[len(walsh) - k]) + 0.0


def _rowwise_iqm(samples: np.ndarray) -> np.ndarray:
    ordered = np.sort(samples, axis=-1)
    cut = int(0.25 * ordered.shape[-1])
    return ordered[..., cut : ordered.shape[-1] - cut].mean(axis=-1)


# Statistics over the last axis, so one call evaluates every bootstrap resample at once.
STATS = {"iqm": _rowwise_iqm, "mean": lambda x: np.mean(x, axis=-1),
         "median": lambda x: np.median(x, axis=-1), "max": lambda x: np.max(x, axis=-1),
         "min": lambda x: np.min(x, axis=-1)}


def bootstrap_ci(values: np.ndarray, stat: str = "mean", reps: int = BOOTSTRAP_REPS,
                 seed: int = 0, alpha: float = 0.025) -> tuple[float, float]:
    """Percentile bounds of ``stat`` over ``reps`` resamples of the units (seeded), each
    one-sided at ``alpha``."""
    if len(values) == 1:
        v = float(STATS[stat](values))
        return v, v
    rng = np.random.default_rng(seed)
    samples = values[rng.integers(0, len(values), size=(reps, len(values)))]
    estimates = STATS[stat](samples)
    return (float(np.percentile(estimates, 100 * alpha)),
            float(np.percentile(estimates, 100 * (1 - alpha))))


def holm(p_values: list[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in the input order."""
    m = len(p_values)
    order = np.argsort(p_values)
    adjusted = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted.tolist()


ENUMERATE_UP_TO = 16  # tied signed ranks: exact over all 2^n sign flips up to this n


def _signed_rank_p(d: np.ndarray) -> tuple[float, float]:
    """One-sided p-values of the signed-rank statistic of ``d`` for "shift > 0" and
    "shift < 0". Zeros are ranked and count against the side tested: for "shift > 0" the
    statistic is the rank sum of the positive differences, which is the count of positive
    Walsh averages, the count whose order statistics are the Hodges-Lehmann bounds (the null
    gives every rank, zeros' included, a random sign, as the interval does). So the test
    rejects at the target exactly when the interval's bound lies beyond it: a zero difference
    counts the same in both (it used to be dropped from the test and kept in the interval).
    Exact without ties or zeros up to n = 50, exact by enumerating sign flips of the mid-ranks
    up to n = 16, normal with tie correction beyond."""
    n = len(d)
    ranks = average_ranks(np.abs(d))
    positive, negative = ranks[d > 0].sum(), ranks[d < 0].sum()
    total = ranks.sum()
    ties = len(np.unique(ranks)) < n or bool(np.any(d == 0))
    if n <= 50 and not ties:  # integer ranks: T+ = t exactly
        t, counts = int(round(positive)), _signed_rank_counts(n)
        return float(counts[t:].sum() / 2.0 ** n), float(counts[:t + 1].sum() / 2.0 ** n)
    if n <= ENUMERATE_UP_TO:
        flips = (np.arange(2 ** n)[:, None] >> np.arange(n)) & 1
        totals = flips @ ranks
        eps = 1e-9 * total
        return (float(np.mean(totals >= positive - eps)),
                float(np.mean(totals <= total - negative + eps)))
    # normal approximation with the tie correction (no continuity correction), as scipy's
    # wilcoxon(method="asymptotic")
    _, tied = np.unique(ranks, return_counts=True)
    var = (n * (n + 1) * (2 * n + 1) - 0.5 * float((tied * (tied * tied - 1.0)).sum())) / 24.0
    centre, sd = n * (n + 1) / 4.0, math.sqrt(var)
    return norm_sf((positive - centre) / sd), norm_cdf((total - negative - centre) / sd)


def _one_sided_p(diffs: np.ndarray, test: str) -> tuple[float, float]:
    """p-values for "shift > 0" and "shift < 0" of paired differences: the sign test (McNemar)
    counts the nonzero ones; the signed-rank test ranks the zeros (``_signed_rank_p``)."""
    nonzero = diffs[diffs != 0]
    if nonzero.size == 0:
        return 1.0, 1.0
    if test == "sign":
        k, n = int((nonzero > 0).sum()), int(nonzero.size)
        return binom_half_sf(k, n), binom_half_sf(n - k, n)  # P(X >= k), P(X <= k)
    return _signed_rank_p(diffs)


@dataclass
class _Paired:
    """One baseline's paired differences (positive = the agent is better) and their test."""

    baseline: str
    diffs: np.ndarray
    effect: float
    lo: float
    hi: float
    p_better: float
    p_worse: float
    ratio: float | None = None
    n_items: int | None = None  # clustered: the items behind the cluster means in ``diffs``
    ratio_upper: float | None = None  # min_ratio: the median ratio's upper bound
    item_mean: float | None = None  # clustered: the mean over items, conditional on the models
    icc: float | None = None
    design_effect: float | None = None


ZERO_SHARE_MAX = 0.2  # a Wilcoxon margin test is refused above this share of zero differences


def _paired(claim: Any, baseline: str, diffs: np.ndarray, target: float,
            ratio: float | None, keys: list[tuple] | None = None,
            estimand: str = "shift") -> _Paired:
    """Estimate and test the tested statistic against ``target`` (the margin boundary).
    ``estimand``: ``cluster`` (the mean of the per-seed means of ``diffs``, grouped by the
    (cell, seed) of ``keys``: sign-flip test and its interval), ``proportion`` (the paired
    proportion difference) or ``shift`` (Hodges-Lehmann with its signed-rank test)."""
    if estimand == "cluster":
        clusters = [key[:2] for key in keys or []]
        means, _ = cluster_means(diffs, clusters)
        got = sign_flip(means, claim.alpha, target)
        icc, deff = icc_oneway(diffs, clusters)
        return _Paired(baseline, means, got.mean, got.lo, got.hi, got.p_better, got.p_worse,
                       ratio, n_items=len(diffs), icc=icc, design_effect=deff,
                       item_mean=float(np.mean(diffs)) if np.all(np.isfinite(diffs)) else None)
    if estimand == "proportion":
        wins, losses = int((diffs > 0).sum()), int((diffs < 0).sum())
        effect, lo, hi = agresti_min(wins, losses, len(diffs), claim.alpha)
        if target == 0:  # the exact sign test (McNemar on 0/1 metrics)
            p_better, p_worse = _one_sided_p(diffs, "sign")
        else:  # against a margin: the z test whose dual is the Agresti–Min bound
            centre, se = agresti_min_centre(wins, losses, len(diffs))
            z = (centre - target) / se if se > 0 else math.copysign(math.inf, centre - target)
            p_better, p_worse = norm_sf(z), norm_cdf(z)
    else:
        effect, lo, hi = hl_interval(diffs, claim.alpha)
        p_better, p_worse = _one_sided_p(diffs - target, "wilcoxon")
    return _Paired(baseline, diffs, effect, lo, hi, p_better, p_worse, ratio)


def compared_values(rows: list[Row], who: str, metric: str, claim: Any, sign: float,
                    at: dict[str, Any] | None, drop: frozenset[str],
                    ref: str | None = None) -> dict[tuple, float]:
    """The values a compare claim pairs for ``who``: its metric per unit; with ``censored``,
    -sign * inf where the event never happened (the unit set is the flag's); with ``ref``,
    its metric minus ``ref``'s on the units both have."""
    units = unit_values(rows, who, metric, claim, at, drop)
    if getattr(claim, "censored", None):
        flags = unit_values(rows, who, claim.censored, claim, at, drop)
        worst = -sign * math.inf
        units = {u: (worst if flag == 0 else units[u]) for u, flag in flags.items()
                 if flag == 0 or u in units}
    if ref is not None:
        base = unit_values(rows, ref, metric, claim, at, drop)
        units = {u: v - base[u] for u, v in units.items() if u in base}
    return units


def _difference(a: float, b: float, sign: float) -> float:
    """sign * (a - b); two equal infinities (both censored) tie."""
    return 0.0 if a == b else sign * (a - b)


def _paired_units(claim: Any, rows: list[Row], metric: str, sign: float, baseline: str,
                  agent_at: dict[str, Any] | None, base_at: dict[str, Any] | None,
                  drop: frozenset[str]) -> dict[tuple, tuple[float, float, float]] | str:
    """unit -> (oriented difference, agent value, baseline value) on the units both share,
    or a message saying why there are none."""
    a_units = compared_values(rows, claim.agent, metric, claim, sign, agent_at, drop,
                              getattr(claim, "agent_ref", None))
    b_units = compared_values(rows, baseline, metric, claim, sign, base_at, drop,
                              getattr(claim, "baseline_ref", None))
    if not a_units:
        return f"no stored results for {claim.agent!r} on {metric!r}"
    shared = sorted(set(a_units) & set(b_units))
    if not shared:
        return f"no paired units between {claim.agent!r} and {baseline!r}"
    return {u: (_difference(a_units[u], b_units[u], sign), a_units[u], b_units[u])
            for u in shared}


def _estimand(claim: Any, clustered: bool, a: np.ndarray | None, b: np.ndarray | None) -> str:
    """``cluster`` for items clustered by seed; ``proportion`` for the sign test or a 0/1
    metric (declared ``binary`` or every compared value 0 or 1); else ``shift``."""
    if clustered:
        return "cluster"
    if claim.test == "sign" or getattr(claim, "binary", False):
        return "proportion"
    if a is not None and b is not None and not getattr(claim, "agent_ref", None) \
            and np.isin(a, (0.0, 1.0)).all() and np.isin(b, (0.0, 1.0)).all():
        return "proportion"
    return "shift"


def _compare(claim: Any, rows: list[Row], metric: str, direction: str,
             verdict: Verdict, clustered: bool = False, refused: str = "") -> Verdict:
    sign = 1.0 if direction == "max" else -1.0
    target = claim.margin if claim.expect == "better" else -claim.margin
    if refused:
        verdict.verdict, verdict.detail = "not evaluable", f"refused: {refused}"
        return verdict
    per_baseline: list[_Paired] = []
    estimand = "cluster" if clustered else "shift"
    censored_notes: list[str] = []
    for baseline in claim.baselines:
        if claim.kind == "interaction":
            # The gain at one set of cells minus the gain at the other, per shared unit.
            drop = frozenset(claim.larger_at) | frozenset(claim.than_at)
            gains = [_paired_units(claim, rows, metric, sign, baseline, at, at, drop)
                     for at in (claim.larger_at, claim.than_at)]
            if isinstance(gains[0], str) or isinstance(gains[1], str):
                verdict.detail = gains[0] if isinstance(gains[0], str) else str(gains[1])
                return verdict
            shared = sorted(set(gains[0]) & set(gains[1]))
            if not shared:
                verdict.detail = "no units shared by the two sets of cells of the interaction"
                return verdict
            diffs = np.array([gains[0][u][0] - gains[1][u][0] for u in shared])
            estimand = _estimand(claim, clustered, None, None)
            per_baseline.append(_paired(claim, baseline, diffs, target, None, shared, estimand))
            continue
        drop = frozenset(claim.agent_at) | frozenset(claim.baseline_at)
        got = _paired_units(claim, rows, metric, sign, baseline, claim.agent_at or None,
                            claim.baseline_at or None, drop)
        if isinstance(got, str):
            verdict.detail = got
            return verdict
        diffs, a, b = (np.array(x) for x in zip(*got.values()))
        estimand = _estimand(claim, clustered, a, b)
        ratio = ratio_upper = None
        if claim.min_ratio is not None:
            with np.errstate(divide="ignore", invalid="ignore"):
                r = b / a if direction == "min" else a / b
            # censored: a ratio with one side never reached is 0 or inf (ranked, kept); two
            # censored sides give nan (no information) and are left out
            keep = ~np.isnan(r) if getattr(claim, "censored", None) else np.isfinite(r)
            # the claimed side is the lower bound of the median ratio (distribution-free)
            ratio = median_bounds(r[keep], claim.alpha)[0] if keep.any() else None
            ratio_upper = median_bounds(r[keep], claim.alpha)[1] if keep.any() else None
        if estimand == "shift" and target != 0 and np.mean(diffs == 0) > ZERO_SHARE_MAX:
            verdict.verdict = "not evaluable"
            verdict.detail = (f"vs {baseline}: {np.mean(diffs == 0):.0%} of the paired "
                              f"differences are zero (more than {ZERO_SHARE_MAX:.0%}): a "
                              "signed-rank test against a margin counts every tie as a win; "
                              "declare binary: true or use test: sign (paired proportions)")
            return verdict
        per_baseline.append(_paired(claim, baseline, diffs, target, ratio, list(got),
                                    estimand))
        per_baseline[-1].ratio_upper = ratio_upper
        if getattr(claim, "censored", None):
            censored_notes.append(
                f"never reached ({claim.censored} = 0): {claim.agent} {int(np.isinf(a).sum())}"
                f"/{len(a)}, {baseline} {int(np.isinf(b).sum())}/{len(b)}")
    adj_better = holm([p.p_better for p in per_baseline])
    adj_worse = holm([p.p_worse for p in per_baseline])
    n = int(min(len(p.diffs) for p in per_baseline))
    power = best_case("compare", n, test="sign" if estimand == "proportion" else "wilcoxon",
                      baselines=len(per_baseline), alpha=claim.alpha, expect=claim.expect,
                      margin=claim.margin)
    outcomes, details = [], []
    name = {"proportion": "paired proportion difference", "shift": "Hodges-Lehmann shift",
            "cluster": "mean over seeds of the per-seed mean difference"}[estimand]
    if claim.kind == "interaction":
        name += " of the difference of differences"
    if getattr(claim, "agent_ref", None):
        name += f" of the changes from {claim.agent_ref} / {claim.baseline_ref}"
    for p, pb, pw in zip(per_baseline, adj_better, adj_worse):
        ratio_ok = claim.min_ratio is None or (p.ratio is not None and p.ratio >= claim.min_ratio)
        ratio_below = (claim.min_ratio is not None and p.ratio_upper is not None
                       and p.ratio_upper < claim.min_ratio)
        if pb < claim.alpha and p.lo > target and ratio_ok:
            outcome = "holds"
        elif (pw < claim.alpha and p.hi < target) or ratio_below:
            outcome = "fails"
        else:
            outcome = "inconclusive"
        outcomes.append(outcome)
        ratio_text = (f", median ratio bounds [{p.ratio:.3g}, {p.ratio_upper:.3g}]"
                      if p.ratio is not None and p.ratio_upper is not None else "")
        units = (f"n={len(p.diffs)} seeds ({p.n_items} items)" if p.n_items is not None
                 else f"n={len(p.diffs)}")
        details.append(f"vs {p.baseline}: {_num(p.effect)} [{_num(p.lo)}, {_num(p.hi)}], "
                       f"p={pb:.3g} (Holm){ratio_text}, {units} → {outcome}")
    # The headline effect is against the baseline that decided the verdict: the first that
    # fails it, else the first left inconclusive, else the first.
    deciding = next((i for i, o in enumerate(outcomes) if o == "fails"),
                    next((i for i, o in enumerate(outcomes) if o == "inconclusive"), 0))
    first = per_baseline[deciding]
    verdict.effect, verdict.ci = first.effect, (first.lo, first.hi)
    verdict.effect_name, verdict.ci_level = name, 1 - 2 * claim.alpha
    verdict.p_value = float(max(adj_better))
    verdict.p_worse = float(min(adj_worse))
    verdict.n_units, verdict.best_p = n, power.best
    if estimand == "cluster":
        verdict.n_clusters = n
        verdict.icc, verdict.design_effect = first.icc, first.design_effect
        if first.icc is not None:
            details.append(f"items per seed share ICC {first.icc:.3f}, design effect "
                           f"{first.design_effect:.2f} ({first.n_items} items count as "
                           f"{first.n_items / first.design_effect:.1f})")
        if first.item_mean is not None:
            details.append(f"item level, conditional on these trained models: mean difference "
                           f"{_num(first.item_mean)} over {first.n_items} items")
    verdict.verdict = ("fails" if "fails" in outcomes
                       else "holds" if all(o == "holds" for o in outcomes) else "inconclusive")
    _judge_power(claim, verdict, power, n, first.diffs, len(per_baseline),
                 3 / math.pi if estimand == "shift" else 1.0, details)
    side = f"> {target:g}" + ("" if claim.expect == "better" else " (no worse within the margin)")
    verdict.detail = (f"{name} vs {first.baseline}; holds needs p < {claim.alpha:g} and the "
                      f"lower bound {side}; " + "; ".join(details + censored_notes))
    return verdict


UNDERPOWERED_BELOW = 0.5  # power at the sesoi under which an inconclusive claim is underpowered


def _judge_power(claim: Any, verdict: Verdict, power: Any, n: int, units: Any, baselines: int,
                 efficiency: float, details: list[str]) -> None:
    """An inconclusive claim whose ``n`` units cannot reach alpha even unanimously is
    ``underpowered``; so is one whose power at the sesoi (at the spread of the tested
    ``units``) is below UNDERPOWERED_BELOW."""
    if verdict.verdict == "inconclusive" and not power.reachable:
        verdict.verdict = "underpowered"
        details.append(f"underpowered: {power.describe()}")
    units = np.asarray(units, dtype=float)
    if n >= 2 and np.all(np.isfinite(units)):  # censored units have no spread
        verdict.unit_sd = float(np.std(units, ddof=1))
        _power_at_sesoi(claim, verdict, n, baselines, power.reachable, efficiency, details)


def _power_at_sesoi(claim: Any, verdict: Verdict, n: int, baselines: int, reachable: bool,
                    efficiency: float, details: list[str]) -> None:
    """Power at the claim's sesoi with the units at hand and their spread; an inconclusive
    claim below UNDERPOWERED_BELOW becomes ``underpowered``."""
    sesoi = getattr(claim, "sesoi", None)
    if sesoi is None or verdict.unit_sd is None:
        return
    verdict.power = power_at(sesoi, verdict.unit_sd, n, claim.alpha, baselines, efficiency,
                             reachable)
    details.append(f"power {verdict.power:.0%} at sesoi {sesoi:g} (sd {verdict.unit_sd:.3g}, "
                   f"n={n})")
    if verdict.verdict == "inconclusive" and verdict.power < UNDERPOWERED_BELOW:
        verdict.verdict = "underpowered"


def _num(x: float) -> str:
    return f"{x:+.4g}" if math.isfinite(x) else ("-inf" if x < 0 else "+inf")


def median_bounds(values: np.ndarray, alpha: float) -> tuple[float, float]:
    """Distribution-free bounds of the median, each one-sided at ``alpha``: the order
    statistics x_(k) and x_(n+1-k) with k the largest such that P(Binomial(n, 1/2) <= k - 1)
    <= alpha (-inf / +inf when 2^-n > alpha)."""
    x = np.sort(np.asarray(values, dtype=float))
    n = len(x)
    cdf = np.cumsum([math.comb(n, i) for i in range(n + 1)]) / 2.0 ** n
    k = int(np.sum(cdf <= alpha))  # P(Bin <= k - 1) <= alpha for k = 1..this
    if k == 0:
        return -math.inf, math.inf
    return float(x[k - 1]), float(x[n - k])


def t_bounds(values: np.ndarray, alpha: float, trim: float = 0.0) -> tuple[float, float, float]:
    """(estimate, lower, upper): the mean with Student-t bounds (``trim`` 0), or the trimmed
    mean with Yuen's (1974) bounds from the winsorized variance (``trim`` 0.25: the IQM), each
    one-sided at ``alpha``; infinite bounds with fewer than 2 values left after trimming."""
    from scipy import stats
    from scipy.stats import mstats

    x = np.sort(np.asarray(values, dtype=float))
    n = len(x)
    g = int(math.floor(trim * n))
    h = n - 2 * g
    estimate = float(x[g:n - g].mean())
    if h < 2:
        return estimate, -math.inf, math.inf
    winsorized = np.asarray(mstats.winsorize(x, limits=(g / n, g / n)) if g else x)
    se = float(np.std(winsorized, ddof=1)) / ((h / n) * math.sqrt(n))
    half = float(stats.t.ppf(1 - alpha, h - 1)) * se
    return estimate, estimate - half, estimate + half


def _threshold(claim: Any, values: np.ndarray, verdict: Verdict) -> Verdict:
    """The claim's statistic with a one-sided bound on each side: Student t (mean), Yuen's
    trimmed t (iqm), order statistics of the median (percentile bootstrap from n = 20), none
    for max / min. ``holds`` when the bound on the claimed side meets the value."""
    point = float(STATS[claim.stat](values))
    check = OPS[claim.op]
    verdict.effect, verdict.effect_name = point, claim.stat
    n = len(values)
    method = ""
    if claim.stat in ("max", "min"):
        verdict.ci = (point, point)
        verdict.verdict = "holds" if check(point, claim.value) else "fails"
    else:
        if claim.stat in ("mean", "iqm"):
            point, lo, hi = t_bounds(values, claim.alpha, 0.0 if claim.stat == "mean" else 0.25)
            method = "Student t" if claim.stat == "mean" else "Yuen trimmed-mean t"
        elif n >= THRESHOLD_BOOTSTRAP_FROM:
            lo, hi = bootstrap_ci(values, claim.stat, alpha=claim.alpha)
            method = "percentile bootstrap"
        else:
            lo, hi = median_bounds(values, claim.alpha)
            method = "order statistics"
        verdict.effect = point
        verdict.ci, verdict.ci_level = (lo, hi), 1 - 2 * claim.alpha
        inside = [check(lo, claim.value), check(hi, claim.value)]
        verdict.verdict = "holds" if all(inside) else "fails" if not any(inside) else "inconclusive"
        if verdict.verdict == "inconclusive" and not math.isfinite(lo):
            verdict.verdict = "underpowered"
    units = "seeds" if verdict.unit == "seed" else "units"
    notes: list[str] = []
    if n >= 2 and claim.stat in ("mean", "iqm"):
        verdict.unit_sd = float(np.std(values, ddof=1))
        _power_at_sesoi(claim, verdict, n, 1, True, 1.0, notes)
    verdict.detail = (f"{claim.stat}({claim.agent}.{claim.metric or 'primary'}) = {point:.4g} "
                      f"[{verdict.ci[0]:.4g}, {verdict.ci[1]:.4g}] {claim.op} {claim.value:g}, "
                      f"n={n} {units}" + (f" ({method})" if method else "")
                      + "".join(f"; {note}" for note in notes))
    return verdict


def clopper_pearson(hits: int, n: int, alpha: float) -> tuple[float, float]:
    """Clopper-Pearson (exact binomial) bounds of a proportion, each one-sided at ``alpha``."""
    from scipy import stats

    lo = float(stats.beta.ppf(alpha, hits, n - hits + 1)) if hits > 0 else 0.0
    hi = float(stats.beta.ppf(1 - alpha, hits + 1, n - hits)) if hits < n else 1.0
    return lo, hi


def _rate(claim: Any, values: np.ndarray, verdict: Verdict) -> Verdict:
    """The share of units meeting the condition, decided on its Clopper-Pearson bound (Wilson
    shown beside); clustered items: the mean over seeds of each seed's share, decided on the
    sign-flip bound of those shares."""
    n = len(values)
    required = claim.at_least if claim.at_least is not None else claim.at_most
    need = f">= {claim.at_least:g}" if claim.at_least is not None else f"<= {claim.at_most:g}"
    if verdict.unit == "seed":
        got = sign_flip(values, claim.alpha, required)
        share, lo, hi = got.mean, got.lo, got.hi
        shown = (f"mean over {n} seeds of each seed's share {share:.3f}, sign-flip "
                 f"{100 * (1 - 2 * claim.alpha):g}% [{lo:.3f}, {hi:.3f}]")
        power = best_case("compare", n, alpha=claim.alpha)
    else:
        hits = int(sum(OPS[claim.op](v, claim.value) for v in values))
        share = hits / n
        lo, hi = clopper_pearson(hits, n, claim.alpha)
        wl, wh = wilson(hits, n, claim.alpha)
        shown = (f"{hits}/{n} = {share:.3f}, Clopper-Pearson {100 * (1 - 2 * claim.alpha):g}% "
                 f"[{lo:.3f}, {hi:.3f}] (Wilson [{wl:.3f}, {wh:.3f}])")
        power = best_case("rate", n, alpha=claim.alpha, at_least=claim.at_least,
                          at_most=claim.at_most)
    verdict.effect, verdict.ci = share, (lo, hi)
    verdict.effect_name = ("mean share of items per seed" if verdict.unit == "seed"
                           else "share of units")
    verdict.ci_level = 1 - 2 * claim.alpha
    verdict.best_p = power.best
    if claim.at_least is not None:
        verdict.verdict = ("holds" if lo >= claim.at_least
                           else "fails" if hi < claim.at_least else "inconclusive")
    else:
        verdict.verdict = ("holds" if hi <= claim.at_most
                           else "fails" if lo > claim.at_most else "inconclusive")
    verdict.detail = (f"share with {claim.metric or 'primary'} {claim.op} {claim.value:g}: "
                      f"{shown}, needs {need}")
    if verdict.verdict == "inconclusive" and not power.reachable:
        verdict.verdict = "underpowered"
        verdict.detail += f"; underpowered: {power.describe()}"
    return verdict


def _trend(claim: Any, rows: list[Row], metric: str, verdict: Verdict) -> Verdict:
    """Per seed: Spearman correlation of ``metric`` with the cell argument ``axis``; across
    seeds: an exact one-sided sign test of the correlations' signs, whose statistic (the
    share of seeds agreeing minus the share disagreeing) is the effect."""
    by_seed: dict[int, list[tuple[float, float]]] = {}
    for r in rows:
        if r.agent != claim.agent or not r.ok or metric not in r.metrics:
            continue
        resolved = {**r.provenance.get("resolved_problem_kwargs", {}), **r.problem_kwargs}
        if claim.axis in resolved:
            by_seed.setdefault(r.seed, []).append((float(resolved[claim.axis]), r.metrics[metric]))
    correlations = []
    for points in by_seed.values():
        xs, ys = zip(*points)
        if len(set(xs)) > 2 and len(set(ys)) > 1:
            correlations.append(spearman(np.asarray(xs), np.asarray(ys)))
    if not correlations:
        verdict.detail = f"no seed has 3+ distinct {claim.axis} values with varying {metric}"
        return verdict
    rho = np.array(correlations)
    sign = 1.0 if claim.trend == "increasing" else -1.0
    agree, disagree = int((sign * rho > 0).sum()), int((sign * rho < 0).sum())
    n = len(rho)
    informative = agree + disagree
    p_right = binom_half_sf(agree, informative) if informative else 1.0
    p_wrong = binom_half_sf(disagree, informative) if informative else 1.0
    effect, lo, hi = agresti_min(agree, disagree, n, claim.alpha)
    power = best_case("trend", n, alpha=claim.alpha)
    verdict.effect, verdict.ci, verdict.ci_level = effect, (lo, hi), 1 - 2 * claim.alpha
    verdict.effect_name = "share of seeds agreeing minus disagreeing"
    verdict.p_value, verdict.n_units, verdict.best_p = float(p_right), n, power.best
    verdict.verdict = ("holds" if p_right < claim.alpha and lo > 0
                       else "fails" if p_wrong < claim.alpha and hi < 0 else "inconclusive")
    verdict.detail = (f"Spearman({claim.axis}, {metric}) per seed: "
                      f"{', '.join(f'{c:+.3f}' for c in correlations)} (median "
                      f"{np.median(rho):+.3f}); {agree}/{n} {claim.trend}, sign test "
                      f"p={p_right:.3g}")
    if verdict.verdict == "inconclusive" and not power.reachable:
        verdict.verdict = "underpowered"
        verdict.detail += f"; underpowered: {power.describe()}"
    return verdict


def _correlation(claim: Any, rows: list[Row], verdict: Verdict) -> Verdict:
    """Spearman's rho over the (x, y) pairs of every run of ``claim.agents`` pooled, with the
    percentile bootstrap over whole runs (papergym.leaderboard.correlation). ``holds``: the
    bound on the claimed side of ``value`` lies beyond it (op "<": the upper bound below);
    ``fails``: the other bound lies beyond it the other way; ``no data`` below ``min_runs``
    runs or ``min_pairs`` pairs; ``underpowered`` below the runs of the power check."""
    from .correlation import pooled_spearman, run_pairs

    within = claim.within_groups if hasattr(claim, "within_groups") else claim.within
    runs, labels, seeds, per_agent = [], [], [], {}
    for r in rows:
        if r.agent not in claim.agents or not r.ok:
            continue
        pairs = run_pairs(claim.x, claim.y, r.curves, r.metrics)
        if pairs:
            runs.append(pairs)
            labels.append(r.agent if within == "agent" else r.key)
            seeds.append(r.seed)
            per_agent.setdefault(r.agent, []).append(pairs)
    n_runs, n_pairs = len(runs), sum(len(p) for p in runs)
    power = best_case("correlation", n_runs, alpha=claim.alpha, min_n=claim.min_runs)
    needed = needed_n("correlation", alpha=claim.alpha, min_n=claim.min_runs)
    min_runs = max(2, claim.min_runs or 0)
    verdict.n_units, verdict.n_pairs, verdict.best_p = n_runs, n_pairs, power.best
    what = f"Spearman({claim.x.describe()}, {claim.y.describe()})"
    if n_runs < min_runs or n_pairs < claim.min_pairs:
        verdict.detail = (f"{what}: {n_runs} runs with pairs of {', '.join(claim.agents)} "
                          f"({n_pairs} pairs); needs at least {min_runs} runs and "
                          f"{claim.min_pairs} pairs")
        return verdict
    # the bootstrap draws whole seeds (the runs of one seed share its draws, e.g. its base
    # model or data); with fewer seeds than RESAMPLE_SEEDS_FROM it draws runs, and says so
    by_seed = seeds if len(set(seeds)) >= RESAMPLE_SEEDS_FROM else None
    got = pooled_spearman(runs, alpha=claim.alpha, value=claim.value, reps=BOOTSTRAP_REPS,
                          groups=None if within == "none" else labels, clusters=by_seed)
    if not math.isfinite(got.rho) or not math.isfinite(got.lo):
        verdict.detail = f"{what}: undefined (a side is constant over the {n_pairs} pairs)"
        return verdict
    verdict.effect, verdict.ci = got.rho, (got.lo, got.hi)
    verdict.effect_name = ("Spearman rho pooled over runs" if within == "none" else
                           f"mean Spearman rho within each {within} (weighted by pairs)")
    verdict.ci_level = 1 - 2 * claim.alpha
    below = claim.op == "<"
    if (got.hi < claim.value) if below else (got.lo > claim.value):
        verdict.verdict = "holds"
    elif (got.lo > claim.value) if below else (got.hi < claim.value):
        verdict.verdict = "fails"
    else:
        verdict.verdict = "inconclusive"
    inside = None
    if within != "run":  # pooled or per agent: the association inside each run must agree
        from .correlation import within_run_rho

        inside = within_run_rho([np.asarray(p, dtype=float) for p in runs])
        other_side = math.isfinite(inside) and (inside >= claim.value if below
                                                else inside <= claim.value)
        if verdict.verdict == "holds" and other_side:
            verdict.verdict = "inconclusive"
    if verdict.verdict == "holds" and not power.reachable:
        verdict.verdict = "underpowered"  # the bootstrap alone cannot carry so few runs
    elif verdict.verdict == "inconclusive" and not power.reachable:
        verdict.verdict = "underpowered"
    wrong = got.share_above if below else got.share_below
    agents = "; ".join(
        f"{a} {spearman(*np.concatenate([np.asarray(p) for p in runs_]).T):+.3f} "
        f"({len(runs_)} runs, {sum(len(p) for p in runs_)} pairs)"
        for a, runs_ in per_agent.items())
    bound = "upper" if below else "lower"
    pooling = "" if within == "none" else f", within each {within}"
    verdict.detail = (
        f"{what}{pooling} over {n_pairs} pairs of {n_runs} runs: rho {got.rho:+.3f} "
        f"[{got.lo:+.3f}, {got.hi:+.3f}] ({100 * (1 - 2 * claim.alpha):g}% percentile "
        f"bootstrap over {'seeds' if by_seed is not None else 'runs'}, {got.reps} resamples"
        + (f", {got.undefined} undefined left out" if got.undefined else "")
        + f"; share of resamples on the wrong side of {claim.value:g}: {wrong:.3g}); holds "
        f"needs the {bound} bound {claim.op} {claim.value:g}; per agent: {agents}"
        + (f"; within each run {inside:+.3f} (holds is refused when it lies on the other "
           f"side of {claim.value:g})" if inside is not None and math.isfinite(inside) else ""))
    if verdict.verdict == "underpowered":
        verdict.detail += f"; underpowered: {power.describe()}, needs {needed} runs"
    return verdict


def cochran_armitage(hits: list[int], totals: list[int]) -> float:
    """z statistic of the Cochran-Armitage test for a linear trend in proportions over
    ordered levels scored 0, 1, ..., L - 1 (0 when every unit is a hit or none is)."""
    k, n = np.array(hits, dtype=float), np.array(totals, dtype=float)
    scores = np.arange(len(k), dtype=float)
    N, p = n.sum(), k.sum() / n.sum()
    statistic = float(np.sum(k * (scores - np.sum(n * scores) / N)))
    variance = p * (1 - p) * (np.sum(n * scores**2) - np.sum(n * scores) ** 2 / N)
    return statistic / math.sqrt(variance) if variance > 0 else 0.0


def _rate_trend(claim: Any, rows: list[Row], metric: str, verdict: Verdict) -> Verdict:
    """The share of units with ``metric op value`` at each value of the cell argument
    ``axis``: one-sided Cochran-Armitage trend test over the ordered levels; the effect is the
    share at the last level minus the share at the first, with Newcombe's bounds."""
    levels: dict[float, list[bool]] = {}
    check = OPS[claim.op]
    for r in rows:
        if r.agent != claim.agent or not r.ok:
            continue
        resolved = {**r.provenance.get("resolved_problem_kwargs", {}), **r.problem_kwargs}
        if claim.axis not in resolved:
            continue
        values = ([r.metrics[metric]] if claim.unit == "trial" and metric in r.metrics
                  else list(_instance_rows(r, claim, metric).values()) if claim.unit != "trial"
                  else [])
        levels.setdefault(float(resolved[claim.axis]), []).extend(check(v, claim.value)
                                                                  for v in values)
    levels = {x: v for x, v in levels.items() if v}
    if len(levels) < 2:
        verdict.detail = f"fewer than 2 values of {claim.axis} with units of {claim.agent!r}"
        return verdict
    order = sorted(levels)
    hits, totals = [int(sum(levels[x])) for x in order], [len(levels[x]) for x in order]
    sign = 1.0 if claim.trend == "increasing" else -1.0
    z = sign * cochran_armitage(hits, totals)
    p_right, p_wrong = norm_sf(z), norm_cdf(z)
    effect, lo, hi = newcombe(hits[-1], totals[-1], hits[0], totals[0], claim.alpha)
    if sign < 0:
        effect, lo, hi = -effect, -hi, -lo
    n = sum(totals)
    power = best_case("rate_trend", n, alpha=claim.alpha)
    verdict.effect, verdict.ci, verdict.ci_level = effect, (lo, hi), 1 - 2 * claim.alpha
    verdict.effect_name = (f"share at {claim.axis}={order[-1]:g} minus share at "
                           f"{claim.axis}={order[0]:g}" + (" (sign flipped: decreasing)"
                                                            if sign < 0 else ""))
    verdict.p_value, verdict.n_units, verdict.best_p = p_right, n, power.best
    verdict.verdict = ("holds" if p_right < claim.alpha and lo > 0
                       else "fails" if p_wrong < claim.alpha and hi < 0 else "inconclusive")
    shares = []
    for x, k, m in zip(order, hits, totals):
        wl, wh = wilson(k, m, claim.alpha)
        shares.append(f"{claim.axis}={x:g}: {k}/{m} = {k / m:.3f} [{wl:.3f}, {wh:.3f}]")
    verdict.detail = (f"share with {metric} {claim.op} {claim.value:g} by {claim.axis} "
                      f"(Wilson {100 * (1 - 2 * claim.alpha):g}%): " + "; ".join(shares)
                      + f"; Cochran-Armitage z={sign * z:+.3f}, one-sided p={p_right:.3g}")
    if verdict.verdict == "inconclusive" and not power.reachable:
        verdict.verdict = "underpowered"
    return verdict


def _rank(claim: Any, rows: list[Row], metric: str, direction: str, verdict: Verdict) -> Verdict:
    """First places among the agent and its baselines, per (cell, instance) with the metric
    averaged over seeds (values within ``ties_within`` of the best share the first place).
    Tested: a Friedman test of the ranks (3+ policies) and, against each baseline, an exact
    one-sided sign test of the units where only the agent is first vs only the baseline
    (Holm). Effect: the agent's share of first places with Wilson bounds."""
    policies = [claim.agent, *claim.baselines]
    sign = 1.0 if direction == "max" else -1.0
    per_policy = []
    for policy in policies:
        pooled: dict[tuple, list[float]] = {}
        for key, value in unit_values(rows, policy, metric, claim).items():
            pooled.setdefault((key[0], key[-1]), []).append(value)  # (cell, instance)
        if not pooled:
            verdict.detail = f"no stored results for {policy!r} on {metric!r}"
            return verdict
        per_policy.append({u: float(np.mean(v)) for u, v in pooled.items()})
    shared = sorted(set.intersection(*(set(p) for p in per_policy)))
    if not shared:
        verdict.detail = "no (cell, instance) units shared by every policy"
        return verdict
    values = sign * np.array([[p[u] for p in per_policy] for u in shared])  # (n, k)
    first = values >= values.max(axis=1, keepdims=True) - claim.ties_within
    counts = first.sum(axis=0)
    n, m = len(shared), len(claim.baselines)
    friedman_p = None
    if len(policies) >= 3 and np.ptp(values) > 0:
        from scipy import stats  # only rank claims pay for importing scipy.stats

        friedman_p = float(stats.friedmanchisquare(*values.T).pvalue)
    p_better, p_worse, lines = [], [], []
    for j, baseline in enumerate(claim.baselines, start=1):
        wins = int((first[:, 0] & ~first[:, j]).sum())
        losses = int((first[:, j] & ~first[:, 0]).sum())
        diffs = np.array([1.0] * wins + [-1.0] * losses)
        better, worse = _one_sided_p(diffs, "sign")
        p_better.append(better)
        p_worse.append(worse)
        lines.append((baseline, wins, losses))
    adj_better, adj_worse = holm(p_better), holm(p_worse)
    power = best_case("compare", n, test="sign", baselines=m, alpha=claim.alpha)
    lo, hi = wilson(int(counts[0]), n, claim.alpha)
    verdict.effect, verdict.ci = float(counts[0] / n), (lo, hi)
    verdict.effect_name, verdict.ci_level = "share of instances ranked first", 1 - 2 * claim.alpha
    verdict.p_value, verdict.n_units, verdict.best_p = float(max(adj_better)), n, power.best
    friedman_ok = friedman_p is None or friedman_p < claim.alpha
    if friedman_ok and all(p < claim.alpha for p in adj_better):
        verdict.verdict = "holds"
    elif any(p < claim.alpha for p in adj_worse):
        verdict.verdict = "fails"
    else:
        verdict.verdict = "underpowered" if not power.reachable else "inconclusive"
    ranks = np.array([average_ranks(-row) for row in values]).mean(axis=0)
    table = ", ".join(f"{p} {int(c)} (mean rank {r:.2f})" for p, c, r in zip(policies, counts, ranks))
    tests = "; ".join(f"vs {b}: only {claim.agent} first {w}, only {b} first {lo_}, "
                      f"p={pb:.3g} (Holm)" for (b, w, lo_), pb in zip(lines, adj_better))
    friedman = f"Friedman p={friedman_p:.3g}" if friedman_p is not None else "Friedman n/a"
    verdict.detail = (f"{claim.agent} first on {int(counts[0])} of {n} instances; first places: "
                      f"{table}; {friedman}; {tests}")
    if verdict.verdict == "underpowered":
        verdict.detail += f"; underpowered: {power.describe()}"
    return verdict


def rank_by_seed(claim: Any, rows: list[Row], metric: str, direction: str,
                 verdict: Verdict) -> Verdict:
    """A rank claim whose instances are scored by one trained artifact per seed: the seed is
    the unit. Within each (cell, seed), first places are found per instance among the agent
    and its baselines (values within ``ties_within`` of the best share the first place), and
    against each baseline the seed's *net share of first places* is taken: the share of its
    instances where only the agent is first minus the share where only that baseline is.
    The mean of the per-seed net shares is tested by the exact sign-flip test over seeds
    (papergym.leaderboard.clustered), with its inverted interval as the effect's bounds, and
    Holm over the baselines, as a clustered compare.

    Why this design: the claim is pairwise ("first more often than each baseline"), and under
    its null the agent and a baseline are exchangeable within a seed, so the seed's net share
    is symmetric about 0 however its instances depend on each other (they share the seed's
    artifacts): the sign-flip test is exact at any instance count, and its interval is the
    test inverted (one estimand). Pooling instances over seeds (the item-level sign test)
    counts a seed's shared luck once per instance; per-seed Friedman statistics combined would
    test the omnibus "every policy alike" (not the claim) and keep the chi-square reference,
    which assumes the instances of a seed independent. No omnibus gate is needed: Holm over
    the pairwise tests already holds the family-wise error at alpha."""
    policies = [claim.agent, *claim.baselines]
    sign = 1.0 if direction == "max" else -1.0
    per_policy = [unit_values(rows, p, metric, claim) for p in policies]
    for policy, units in zip(policies, per_policy):
        if not units:
            verdict.detail = f"no stored results for {policy!r} on {metric!r}"
            return verdict
    shared = sorted(set.intersection(*(set(p) for p in per_policy)))
    if not shared:
        verdict.detail = "no (cell, seed, instance) units shared by every policy"
        return verdict
    values = sign * np.array([[p[u] for p in per_policy] for u in shared])  # (items, k)
    first = values >= values.max(axis=1, keepdims=True) - claim.ties_within
    clusters = [u[:2] for u in shared]  # (cell, seed): one trained artifact per policy
    shares, sizes = cluster_means(first[:, 0].astype(float), clusters)
    n, m = len(shares), len(claim.baselines)
    tested = []
    for j, baseline in enumerate(claim.baselines, start=1):
        net = (first[:, 0] & ~first[:, j]).astype(float) - (first[:, j] & ~first[:, 0])
        means, _ = cluster_means(net, clusters)
        icc, deff = icc_oneway(net, clusters)
        tested.append((baseline, means, sign_flip(means, claim.alpha, 0.0), icc, deff))
    adj_better = holm([t[2].p_better for t in tested])
    adj_worse = holm([t[2].p_worse for t in tested])
    power = best_case("compare", n, baselines=m, alpha=claim.alpha)
    outcomes, lines = [], []
    for (baseline, _, got, _, _), pb, pw in zip(tested, adj_better, adj_worse):
        outcome = ("holds" if pb < claim.alpha and got.lo > 0
                   else "fails" if pw < claim.alpha and got.hi < 0 else "inconclusive")
        outcomes.append(outcome)
        lines.append(f"vs {baseline}: {_num(got.mean)} [{_num(got.lo)}, {_num(got.hi)}], "
                     f"p={pb:.3g} (Holm) → {outcome}")
    deciding = next((i for i, o in enumerate(outcomes) if o == "fails"),
                    next((i for i, o in enumerate(outcomes) if o == "inconclusive"), 0))
    baseline, means, got, icc, deff = tested[deciding]
    verdict.effect, verdict.ci, verdict.ci_level = got.mean, (got.lo, got.hi), 1 - 2 * claim.alpha
    verdict.effect_name = ("mean over seeds of the net share of first places (only the agent "
                           "first minus only the baseline first)")
    verdict.p_value, verdict.p_worse = float(max(adj_better)), float(min(adj_worse))
    verdict.n_units = verdict.n_clusters = n
    verdict.best_p, verdict.icc, verdict.design_effect = power.best, icc, deff
    verdict.verdict = ("fails" if "fails" in outcomes
                       else "holds" if all(o == "holds" for o in outcomes) else "inconclusive")
    details = [f"{claim.agent} first on a share {float(shares.mean()):.3f} of the instances "
               f"(per seed: {', '.join(f'{s:.2f}' for s in shares)}; {int(sizes.sum())} "
               f"instances over {n} seeds)", *lines]
    if icc is not None:
        details.append(f"net first places of one seed share ICC {icc:.3f}, design effect "
                       f"{deff:.2f}")
    _judge_power(claim, verdict, power, n, means, m, 1.0, details)
    verdict.detail = (f"net share of first places vs {baseline}, sign-flip test over seeds; "
                      f"holds needs p < {claim.alpha:g} and the lower bound > 0 against every "
                      "baseline; " + "; ".join(details))
    return verdict


def rate_trend_by_seed(claim: Any, rows: list[Row], metric: str, verdict: Verdict) -> Verdict:
    """A rate_trend claim whose items are scored by one artifact per trial: the seed is the
    unit. Each seed gives, at each axis level, the share of its items with ``metric op value``
    (the cells of one level pooled, as the item-level test pools them); its shares along the
    levels (scored 0..L-1 in order, as Cochran-Armitage scores them) get a least-squares
    line, and the seed's trend is
    its fitted change from the first level to the last (with two levels: the last share minus
    the first). The mean of these per-seed changes is tested by the exact sign-flip test over
    seeds, with its inverted interval (papergym.leaderboard.clustered).

    This is the cluster-level analogue of Cochran-Armitage (its statistic is the linear-score
    contrast of the shares): under no trend a seed's line is as likely to fall as to rise,
    whatever the items of one trial share. Pooling all items into one Cochran-Armitage test
    counts each trial's shared luck once per item. Seeds are matched across levels by their
    number, as the ``trend`` kind does; a seed with fewer than two levels is left out."""
    check = OPS[claim.op]
    trials: dict[int, dict[float, list[bool]]] = {}  # seed -> level -> hits
    for r in rows:
        if r.agent != claim.agent or not r.ok:
            continue
        resolved = {**r.provenance.get("resolved_problem_kwargs", {}), **r.problem_kwargs}
        if claim.axis not in resolved:
            continue
        hits = [check(v, claim.value) for v in _instance_rows(r, claim, metric).values()]
        if hits:
            trials.setdefault(r.seed, {}).setdefault(float(resolved[claim.axis]),
                                                     []).extend(hits)
    order = sorted({x for per in trials.values() for x in per})
    if len(order) < 2:
        verdict.detail = f"fewer than 2 values of {claim.axis} with units of {claim.agent!r}"
        return verdict
    score = {x: float(i) for i, x in enumerate(order)}
    sign = 1.0 if claim.trend == "increasing" else -1.0
    changes, flat_hits, flat_trials = [], [], []
    for cluster, per in trials.items():
        for x, hits in per.items():
            flat_hits += hits
            flat_trials += [(cluster, x)] * len(hits)
        if len(per) < 2:
            continue
        xs = np.array([score[x] for x in per])
        shares = np.array([np.mean(h) for h in per.values()])
        slope = np.sum((xs - xs.mean()) * (shares - shares.mean())) / np.sum((xs - xs.mean()) ** 2)
        changes.append(sign * slope * (len(order) - 1))
    if not changes:
        verdict.detail = f"no seed of {claim.agent!r} has units at 2 values of {claim.axis}"
        return verdict
    means = np.array(changes)
    got = sign_flip(means, claim.alpha, 0.0)
    n = len(means)
    power = best_case("compare", n, alpha=claim.alpha)
    verdict.effect, verdict.ci, verdict.ci_level = got.mean, (got.lo, got.hi), 1 - 2 * claim.alpha
    verdict.effect_name = (f"mean over seeds of the fitted change in the share from "
                           f"{claim.axis}={order[0]:g} to {claim.axis}={order[-1]:g}"
                           + (" (sign flipped: decreasing)" if sign < 0 else ""))
    verdict.p_value, verdict.p_worse = got.p_better, got.p_worse
    verdict.n_units = verdict.n_clusters = n
    verdict.best_p = power.best
    verdict.icc, verdict.design_effect = icc_oneway(np.array(flat_hits, dtype=float), flat_trials)
    verdict.verdict = ("holds" if got.p_better < claim.alpha and got.lo > 0
                       else "fails" if got.p_worse < claim.alpha and got.hi < 0
                       else "inconclusive")
    pooled = {x: [h for per in trials.values() for h in per.get(x, [])] for x in order}
    hits, totals = [int(sum(pooled[x])) for x in order], [len(pooled[x]) for x in order]
    z = cochran_armitage(hits, totals)
    details = [f"per-seed changes: {', '.join(_num(c) for c in means)}",
               f"sign-flip p={got.p_better:.3g}",
               "item level, conditional on these trained models: " + "; ".join(
                   f"{claim.axis}={x:g}: {k}/{t}" for x, k, t in zip(order, hits, totals))
               + f", Cochran-Armitage z={z:+.3f}"]
    if verdict.icc is not None:
        details.append(f"items of one trial share ICC {verdict.icc:.3f}, design effect "
                       f"{verdict.design_effect:.2f}")
    _judge_power(claim, verdict, power, n, means, 1, 1.0, details)
    verdict.detail = (f"share with {metric} {claim.op} {claim.value:g} along {claim.axis}, "
                      f"per seed, over {n} seeds; holds needs p < {claim.alpha:g} and the "
                      "lower bound > 0; " + "; ".join(details))
    return verdict


# ---------------------------------------------------------------------------------------------
# Discriminative sections


def discrimination(spec: Any, tier: str, rows: list[Row], alpha: float = 0.05
                   ) -> dict[str, SectionCheck]:
    """Per section: the reference's Hodges–Lehmann margin over the trivial agent on the
    primary metric, in the metric's direction, paired on shared (cell, seed) trials, or on
    (cell, seed, instance) units where the tier declares ``units_per_trial`` for the cell."""
    out = {}
    for section in spec.problems:
        if tier not in section.tiers:
            continue
        trivial, reference = section.trivial, section.reference
        check = SectionCheck(section.name, trivial, reference, "not declared")
        out[section.name] = check
        if trivial is None or reference is None:
            continue
        metric, sign = section.metric.name, 1.0 if section.metric.direction == "max" else -1.0
        mine = [r for r in rows if r.section == section.name and r.tier == tier and r.ok
                and metric in r.metrics]
        ref, triv = (_section_units(mine, who, metric, section.tiers[tier])
                     for who in (reference, trivial))
        shared = sorted(set(ref) & set(triv))
        if not shared:
            check.status, check.detail = "no data", f"no trials shared by {reference} and {trivial}"
            continue
        diffs = sign * np.array([ref[u] - triv[u] for u in shared])
        effect, lo, hi = hl_interval(diffs, alpha)
        check.effect, check.ci, check.ci_level = effect, (lo, hi), 1 - 2 * alpha
        check.n_units = len(diffs)
        if not best_case("compare", len(diffs), alpha=alpha).reachable:
            check.status = "underpowered"
        else:
            check.status = "discriminative" if lo > 0 else "non-discriminative"
        check.detail = (f"{reference} over {trivial} on {metric}: Hodges-Lehmann margin "
                        f"{_num(effect)} [{_num(lo)}, {_num(hi)}], n={len(diffs)} → {check.status}")
    return out


def _section_units(rows: list[Row], agent: str, metric: str, tier_spec: Any
                   ) -> dict[tuple, float]:
    """``metric`` of ``agent`` per trial, or per instance unit where the cell declares them
    and the units carry the metric (a trial-level statistic such as a median over the units,
    alpha* in distill, stays one value per trial)."""
    out: dict[tuple, float] = {}
    for r in rows:
        if r.agent != agent:
            continue
        cell = cell_key(r.problem_kwargs)
        per_unit = [u for u in r.units if metric in u]
        if tier_spec.units_in(r.problem_kwargs) is None or not per_unit:
            out[(cell, r.seed)] = r.metrics[metric]
            continue
        for u in per_unit:
            out[(cell, r.seed, str(u.get("instance")))] = float(u[metric])
    return out


def needed_units(claim: Any, baselines: int | None = None, clustered: bool = False
                 ) -> int | None:
    """The smallest unit count (seeds, for ``clustered`` items) at which ``claim`` could
    hold (power.needed_n)."""
    from papergym.benchmarks.spec import claim_test

    kind, test = claim_test(claim, clustered)
    return needed_n(kind, test=test, baselines=baselines or max(1, len(claim.baselines)),
                    alpha=claim.alpha, expect=claim.expect, margin=claim.margin,
                    at_least=claim.at_least, at_most=claim.at_most,
                    min_n=getattr(claim, "min_runs", None), stat=getattr(claim, "stat", "iqm"),
                    clustered=clustered)
