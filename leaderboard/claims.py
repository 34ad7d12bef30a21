"""Claims: each paper's headline claim, written in its spec, evaluated from stored rows.

Verdicts are computed, never written by hand: ``holds``, ``fails`` or ``inconclusive`` at the
tier that was run (``not run at this tier`` / ``no data`` otherwise), each with an effect size
and a 95% interval. The tests behind each kind are documented in docs/contract.md.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from .scoring import BOOTSTRAP_REPS, cell_key
from .store import Row

OPS = {">=": operator.ge, "<=": operator.le, ">": operator.gt, "<": operator.lt}


@dataclass
class Verdict:
    id: str
    statement: str
    kind: str
    verdict: str
    effect: float | None = None
    ci: tuple[float, float] | None = None
    p_value: float | None = None
    n_units: int = 0
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def evaluate_claims(spec: Any, tier: str, rows: list[Row]) -> list[Verdict]:
    """Every claim of ``spec`` against the rows of its current trials at ``tier``."""
    verdicts = []
    for claim in spec.claims:
        if tier not in claim.tiers:
            verdicts.append(Verdict(claim.id, claim.statement, claim.kind,
                                    "not run at this tier",
                                    detail=f"evaluated at {', '.join(claim.tiers)}"))
            continue
        section = spec.section(claim.problem)
        section_rows = [r for r in rows if r.section == section.name and r.tier == tier]
        verdicts.append(evaluate_claim(claim, section, section_rows))
    return verdicts


def evaluate_claim(claim: Any, section: Any, rows: list[Row]) -> Verdict:
    metric = claim.metric or section.metric.name
    direction = claim.direction or section.metric.direction
    rows = [r for r in rows if _matches(r, claim.where)]
    verdict = Verdict(claim.id, claim.statement, claim.kind, "no data")
    agent_units = unit_values(rows, claim.agent, metric, claim.unit)
    if not agent_units:
        verdict.detail = f"no stored results for {claim.agent!r} on {metric!r}"
        return verdict
    if claim.kind == "compare":
        return _compare(claim, rows, metric, direction, agent_units, verdict)
    if claim.kind == "trend":
        return _trend(claim, rows, metric, verdict)
    values = np.array(list(agent_units.values()))
    verdict.n_units = len(values)
    if claim.kind == "threshold":
        return _threshold(claim, values, verdict)
    return _rate(claim, values, verdict)


def _matches(row: Row, where: dict[str, Any]) -> bool:
    resolved = row.provenance.get("resolved_problem_kwargs", row.problem_kwargs)
    for key, wanted in where.items():
        value = resolved.get(key)
        if isinstance(wanted, list):
            if value not in wanted:
                return False
        elif value != wanted:
            return False
    return True


def unit_values(rows: list[Row], agent: str, metric: str, unit: str) -> dict[tuple, float]:
    """``metric`` of ``agent`` per unit: (cell, seed) for trials, plus instance for instances."""
    out: dict[tuple, float] = {}
    for r in rows:
        if r.agent != agent or not r.ok:
            continue
        cell = cell_key(r.problem_kwargs)
        if unit == "trial":
            if metric in r.metrics:
                out[(cell, r.seed)] = r.metrics[metric]
        else:
            for u in r.units:
                if metric in u:
                    out[(cell, r.seed, str(u.get("instance")))] = float(u[metric])
    return out


def _rowwise_iqm(samples: np.ndarray) -> np.ndarray:
    ordered = np.sort(samples, axis=-1)
    cut = int(0.25 * ordered.shape[-1])
    return ordered[..., cut : ordered.shape[-1] - cut].mean(axis=-1)


# Statistics over the last axis, so one call evaluates every bootstrap resample at once.
STATS = {"iqm": _rowwise_iqm, "mean": lambda x: np.mean(x, axis=-1),
         "median": lambda x: np.median(x, axis=-1), "max": lambda x: np.max(x, axis=-1),
         "min": lambda x: np.min(x, axis=-1)}


def bootstrap_ci(values: np.ndarray, stat: str = "mean", reps: int = BOOTSTRAP_REPS,
                 seed: int = 0) -> tuple[float, float]:
    """Percentile 95% interval of ``stat`` over ``reps`` resamples of the units (seeded)."""
    if len(values) == 1:
        v = float(STATS[stat](values))
        return v, v
    rng = np.random.default_rng(seed)
    samples = values[rng.integers(0, len(values), size=(reps, len(values)))]
    estimates = STATS[stat](samples)
    return float(np.percentile(estimates, 2.5)), float(np.percentile(estimates, 97.5))


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


def _one_sided_p(diffs: np.ndarray, test: str) -> tuple[float, float]:
    """p-values for "agent better" and "baseline better" on paired differences."""
    nonzero = diffs[diffs != 0]
    if nonzero.size == 0:
        return 1.0, 1.0
    if test == "sign":
        k, n = int((nonzero > 0).sum()), int(nonzero.size)
        return (stats.binomtest(k, n, 0.5, alternative="greater").pvalue,
                stats.binomtest(k, n, 0.5, alternative="less").pvalue)
    return (float(stats.wilcoxon(diffs, alternative="greater", zero_method="wilcox").pvalue),
            float(stats.wilcoxon(diffs, alternative="less", zero_method="wilcox").pvalue))


def _compare(claim: Any, rows: list[Row], metric: str, direction: str,
             agent_units: dict[tuple, float], verdict: Verdict) -> Verdict:
    sign = 1.0 if direction == "max" else -1.0
    per_baseline = []
    for baseline in claim.baselines:
        base_units = unit_values(rows, baseline, metric, claim.unit)
        shared = sorted(set(agent_units) & set(base_units))
        if not shared:
            verdict.detail = f"no paired units between {claim.agent!r} and {baseline!r}"
            return verdict
        a = np.array([agent_units[u] for u in shared])
        b = np.array([base_units[u] for u in shared])
        diffs = sign * (a - b)  # positive = the agent is better
        p_better, p_worse = _one_sided_p(diffs, claim.test)
        ratio = None
        if claim.min_ratio is not None:
            with np.errstate(divide="ignore", invalid="ignore"):
                r = b / a if direction == "min" else a / b
            ratio = float(np.median(r[np.isfinite(r)])) if np.isfinite(r).any() else None
        per_baseline.append((baseline, diffs, p_better, p_worse, ratio))
    adj_better = holm([p for _, _, p, _, _ in per_baseline])
    adj_worse = holm([p for _, _, _, p, _ in per_baseline])
    outcomes, details = [], []
    for (baseline, diffs, _, _, ratio), pb, pw in zip(per_baseline, adj_better, adj_worse):
        lo, hi = bootstrap_ci(diffs)
        if claim.expect == "better":
            ratio_ok = claim.min_ratio is None or (ratio is not None and ratio >= claim.min_ratio)
            if pb < claim.alpha and ratio_ok:
                outcome = "holds"
            elif pw < claim.alpha or (pb < claim.alpha and not ratio_ok):
                outcome = "fails"
            else:
                outcome = "inconclusive"
        else:  # no_worse: the CI of the mean paired difference against -margin
            outcome = ("holds" if lo >= -claim.margin
                       else "fails" if hi < -claim.margin else "inconclusive")
        outcomes.append(outcome)
        ratio_text = f", median ratio {ratio:.3g}" if ratio is not None else ""
        details.append(f"vs {baseline}: mean diff {np.mean(diffs):+.4g} [{lo:+.4g}, {hi:+.4g}], "
                       f"p={pb:.3g} (Holm){ratio_text}, n={len(diffs)} → {outcome}")
    # The headline effect is against the baseline that decided the verdict: the first that
    # fails it, else the first left inconclusive, else the first.
    deciding = next((i for i, o in enumerate(outcomes) if o == "fails"),
                    next((i for i, o in enumerate(outcomes) if o == "inconclusive"), 0))
    first = per_baseline[deciding]
    verdict.effect = float(np.mean(first[1]))
    verdict.ci = bootstrap_ci(first[1])
    verdict.p_value = float(max(adj_better))
    verdict.n_units = int(min(len(d) for _, d, *_ in per_baseline))
    verdict.verdict = ("fails" if "fails" in outcomes
                       else "holds" if all(o == "holds" for o in outcomes) else "inconclusive")
    verdict.detail = f"effect vs {first[0]}; " + "; ".join(details)
    return verdict


def _threshold(claim: Any, values: np.ndarray, verdict: Verdict) -> Verdict:
    point = float(STATS[claim.stat](values))
    check = OPS[claim.op]
    verdict.effect = point
    if claim.stat in ("max", "min"):
        verdict.ci = (point, point)
        verdict.verdict = "holds" if check(point, claim.value) else "fails"
    else:
        lo, hi = bootstrap_ci(values, claim.stat)
        verdict.ci = (lo, hi)
        inside = [check(lo, claim.value), check(hi, claim.value)]
        verdict.verdict = "holds" if all(inside) else "fails" if not any(inside) else "inconclusive"
    verdict.detail = (f"{claim.stat}({claim.agent}.{claim.metric or 'primary'}) = {point:.4g} "
                      f"[{verdict.ci[0]:.4g}, {verdict.ci[1]:.4g}] {claim.op} {claim.value:g}, "
                      f"n={len(values)}")
    return verdict


def _rate(claim: Any, values: np.ndarray, verdict: Verdict) -> Verdict:
    hits = int(sum(OPS[claim.op](v, claim.value) for v in values))
    n = len(values)
    ci = stats.binomtest(hits, n).proportion_ci(confidence_level=0.95, method="wilson")
    lo, hi = float(ci.low), float(ci.high)
    verdict.effect, verdict.ci = hits / n, (lo, hi)
    if claim.at_least is not None:
        verdict.verdict = ("holds" if lo >= claim.at_least
                           else "fails" if hi < claim.at_least else "inconclusive")
        need = f">= {claim.at_least:g}"
    else:
        verdict.verdict = ("holds" if hi <= claim.at_most
                           else "fails" if lo > claim.at_most else "inconclusive")
        need = f"<= {claim.at_most:g}"
    verdict.detail = (f"share with {claim.metric or 'primary'} {claim.op} {claim.value:g}: "
                      f"{hits}/{n} = {hits / n:.3f}, Wilson 95% [{lo:.3f}, {hi:.3f}], needs {need}")
    return verdict


def _trend(claim: Any, rows: list[Row], metric: str, verdict: Verdict) -> Verdict:
    """Per seed: Spearman correlation of ``metric`` with the cell argument ``axis``; across
    seeds: an exact one-sided sign test of the correlations' signs."""
    by_seed: dict[int, list[tuple[float, float]]] = {}
    for r in rows:
        if r.agent != claim.agent or not r.ok or metric not in r.metrics:
            continue
        resolved = r.provenance.get("resolved_problem_kwargs", r.problem_kwargs)
        if claim.axis in resolved:
            by_seed.setdefault(r.seed, []).append((float(resolved[claim.axis]), r.metrics[metric]))
    correlations = []
    for points in by_seed.values():
        xs, ys = zip(*points)
        if len(set(xs)) > 2 and len(set(ys)) > 1:
            correlations.append(float(stats.spearmanr(xs, ys).statistic))
    if not correlations:
        verdict.detail = f"no seed has 3+ distinct {claim.axis} values with varying {metric}"
        return verdict
    rho = np.array(correlations)
    sign = 1.0 if claim.trend == "increasing" else -1.0
    agree, disagree = int((sign * rho > 0).sum()), int((sign * rho < 0).sum())
    n = agree + disagree
    p_right = stats.binomtest(agree, n, 0.5, alternative="greater").pvalue if n else 1.0
    p_wrong = stats.binomtest(disagree, n, 0.5, alternative="greater").pvalue if n else 1.0
    verdict.effect, verdict.ci = float(np.median(rho)), bootstrap_ci(rho, "median")
    verdict.p_value, verdict.n_units = float(p_right), len(rho)
    verdict.verdict = ("holds" if p_right < claim.alpha
                       else "fails" if p_wrong < claim.alpha else "inconclusive")
    verdict.detail = (f"Spearman({claim.axis}, {metric}) per seed: "
                      f"{', '.join(f'{c:+.3f}' for c in correlations)}; {agree}/{n} {claim.trend}, "
                      f"sign test p={p_right:.3g}")
    return verdict
