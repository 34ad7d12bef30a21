"""A benchmark's report: scores, claim verdicts and provenance gathered from the store.

The renderers (terminal, Markdown, HTML) only format a :class:`BenchmarkReport`; none of them
computes a number.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .claims import SectionCheck, Verdict, evaluate_claims
from .fairness import section_checks
from .numbers import fmt, fmt_ci  # noqa: F401  (re-exported: the renderers' one formatter)
from .scoring import AgentScore, score_section
from .store import Row

TIER_ORDER = ("smoke", "standard", "full")


@dataclass
class SectionReport:
    """One section's rows; its scores (IQM, intervals, probabilities of improvement) are
    computed on first use, so reading only the claims never pays for them."""

    section: Any
    rows: list[Row]
    check: SectionCheck | None = None  # the reference's margin over the trivial agent
    paper_scale: dict[str, Any] = field(default_factory=dict)  # the paper's budgets
    tier_scale: dict[str, dict[str, Any]] = field(default_factory=dict)  # tier -> budgets
    _scores: list[AgentScore] | None = field(default=None, repr=False)

    @property
    def scores(self) -> list[AgentScore]:
        if self._scores is None:
            self._scores = score_section(self.section, self.rows)
        return self._scores

    @property
    def scale_rows(self) -> list[tuple[str, Any, dict[str, Any]]]:
        """(budget, paper's value, {tier: value}) for every budget the spec names."""
        names = list(self.paper_scale)
        for budgets in self.tier_scale.values():
            names += [n for n in budgets if n not in names]
        return [(n, self.paper_scale.get(n), {t: b[n] for t, b in self.tier_scale.items() if n in b})
                for n in names]

    @property
    def baselines(self) -> list[str]:
        return [s.agent for s in self.scores if s.role == "baseline" and s.rank is not None]

    def mean_curves(self) -> dict[str, dict[str, tuple[np.ndarray, np.ndarray]]]:
        """curve name -> agent -> (x, mean y) over that agent's trials (on a common x grid)."""
        out: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {}
        names = sorted({c for r in self.rows if r.ok for c in r.curves})
        for name in names:
            per_agent: dict[str, list[list[list[float]]]] = {}
            for r in self.rows:
                if r.ok and r.curves.get(name):
                    per_agent.setdefault(r.agent, []).append(r.curves[name])
            out[name] = {}
            for agent, curves in per_agent.items():
                grid = np.unique(np.concatenate([np.asarray(c)[:, 0] for c in curves]))
                ys = [np.interp(grid, np.asarray(c)[:, 0], np.asarray(c)[:, 1]) for c in curves]
                out[name][agent] = (grid, np.mean(ys, axis=0))
        return out


@dataclass
class BenchmarkReport:
    spec: Any
    tier: str
    sections: list[SectionReport]
    verdicts: list[Verdict]
    provenance: dict[str, Any] = field(default_factory=dict)
    power: list[Any] = field(default_factory=list)  # benchmarks.spec.PowerRow at this tier

    @property
    def n_trials(self) -> int:
        return sum(len(s.rows) for s in self.sections)

    @property
    def expected_trials(self) -> int:
        return self.provenance.get("expected_trials", self.n_trials)


def build_report(spec: Any, tier: str, trials: list[Any], rows: list[Row]) -> BenchmarkReport:
    """Score every section and evaluate every claim over the rows of ``trials``."""
    from papergym.benchmarks.spec import power_table

    checks = section_checks(spec, tier, rows)
    sections = []
    for section in spec.problems:
        if tier not in section.tiers:
            continue
        section_rows = [r for r in rows if r.section == section.name]
        tier_scale = {t: dict(ts.budgets) for t, ts in section.tiers.items() if ts.budgets}
        sections.append(SectionReport(section, section_rows,
                                      check=checks.get(section.name),
                                      paper_scale=dict(spec.scale.get(section.name, {})),
                                      tier_scale=tier_scale))
    return BenchmarkReport(
        spec=spec, tier=tier, sections=sections,
        verdicts=evaluate_claims(spec, tier, rows, checks),
        provenance=summarize_provenance(rows, expected=len(trials)),
        power=[row for row in power_table(spec) if row.tier == tier],
    )


def summarize_provenance(rows: list[Row], expected: int) -> dict[str, Any]:
    if not rows:
        return {"expected_trials": expected, "stored_trials": 0}
    shas = Counter(
        f"{r.provenance.get('git_sha', 'unknown')[:12]}{'+dirty' if r.provenance.get('git_dirty') else ''}"
        for r in rows
    )
    hosts = Counter(r.provenance.get("host", "?") for r in rows)
    latest = max(rows, key=lambda r: r.created)
    return {
        "expected_trials": expected,
        "stored_trials": len(rows),
        "failed_trials": sum(not r.ok for r in rows),
        "git": dict(shas),
        "hosts": dict(hosts),
        "platform": latest.provenance.get("platform"),
        "python": latest.provenance.get("python"),
        "cpu_count": latest.provenance.get("cpu_count"),
        "versions": latest.provenance.get("versions", {}),
        "trial_wall_s_total": sum(r.provenance.get("wall_s", 0.0) for r in rows),
        "trial_cpu_s_total": sum(r.provenance.get("cpu_s", 0.0) for r in rows),
        "peak_rss_mib_max": max(r.provenance.get("peak_rss_mib", 0.0) for r in rows),
        "first_created": min(r.created for r in rows),
        "last_created": latest.created,
    }


def fmt_units(verdict: Verdict) -> str:
    """Units behind a verdict: those paired, and those the spec declares at the tier."""
    if verdict.verdict in ("not run at this tier",):
        return "–"
    declared = f" of {verdict.n_declared}" if verdict.n_declared not in (None, verdict.n_units) else ""
    if getattr(verdict, "n_pairs", None) is not None:  # correlation: runs and pooled pairs
        return f"{verdict.n_units}{declared} runs, {verdict.n_pairs} pairs"
    return f"{verdict.n_units}{declared}"


def fmt_design(verdict: Verdict) -> str:
    """The design behind a verdict: its unit of analysis (with the seeds, ICC and design
    effect of clustered items), family, smallest effect of interest and power there."""
    if verdict.verdict in ("not run at this tier",) or getattr(verdict, "unit", None) is None:
        return "–"
    parts = [f"unit {verdict.unit}"]
    if verdict.unit == "seed" and verdict.n_clusters is not None:
        parts[0] += f" (n={verdict.n_clusters})"
        if verdict.icc is not None:
            parts.append(f"ICC {verdict.icc:.2f}, design effect {verdict.design_effect:.2f}")
    if verdict.family and verdict.family != verdict.id:
        parts.append(f"family {verdict.family}")
    if verdict.sesoi is not None:
        parts.append(f"sesoi {fmt(verdict.sesoi)}")
    if isinstance(verdict.power, float):
        parts.append(f"power {verdict.power:.0%}")
    elif verdict.power:
        parts.append(f"power {verdict.power}")
    if verdict.post_hoc:
        parts.append("post hoc")
    return "; ".join(parts)


def fmt_tally(verdicts: list[Verdict]) -> str:
    """The paper claims' tally: raw, by family, Benjamini-Hochberg-adjusted holds, post hoc."""
    from .claims import tally
    from .families import tally_v2

    raw = tally(verdicts)
    extra = tally_v2(verdicts)
    def counts(c: dict[str, int]) -> str:
        return ", ".join(f"{n} {k}" for k, n in c.items() if n) or "none"
    late = extra["post_hoc"]
    return (f"paper claims: {counts(raw)}; by family: {counts(extra['tally_families'])}; "
            f"holds after Benjamini-Hochberg: {extra['bh_holds']}"
            + (f"; post hoc (counted apart): {counts(late)}" if late else ""))


def fmt_check(check: SectionCheck | None) -> str:
    """One line: does the section discriminate (reference vs trivial)."""
    if check is None or check.status == "not declared":
        return "Discrimination: no trivial/reference agents declared."
    if check.effect is None:
        return f"Discrimination: **{check.status}** ({check.detail})."
    level = f"{100 * check.ci_level:g}% CI" if check.ci_level else "CI"
    return (f"Discrimination: **{check.status}**: `{check.reference}` over `{check.trivial}` "
            f"by {fmt_ci(check.effect, check.ci)} ({level}, Hodges-Lehmann, n={check.n_units} "
            "paired units).")
