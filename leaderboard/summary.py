"""What a reader wants first from a report: who leads each section, who is tied with the
leader, and how the paper's claims came out. Pure functions over a BenchmarkReport; the
terminal, HTML and JSON renderers all take these numbers from here.

Rank groups: the leader opens group 1 and every ranked agent whose 95% interval overlaps the
leader's joins it (their order inside the group is not resolved by the data); the best agent
left opens group 2, and so on. Overlapping intervals are a conservative reading (two
intervals may overlap while the difference is still significant), so "tied" means "not
separated by this run", never "equal".
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .report import BenchmarkReport, SectionReport

VERDICT_ORDER = ("holds", "fails", "inconclusive", "underpowered", "not evaluable",
                 "not run at this tier", "no data")


def _overlaps(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return bool(a[0] <= b[1] and b[0] <= a[1])


def rank_groups(sec: SectionReport) -> dict[str, int]:
    """agent -> rank group (1 = tied with the leader) for the ranked agents of a section."""
    ranked = sorted((s for s in sec.scores if s.rank is not None and np.isfinite(s.iqm)),
                    key=lambda s: s.rank)
    groups: dict[str, int] = {}
    group = 0
    for s in ranked:
        if s.agent in groups:
            continue
        group += 1
        groups[s.agent] = group
        for other in ranked:
            if other.agent not in groups and np.all(np.isfinite(other.ci)) and \
                    np.all(np.isfinite(s.ci)) and _overlaps(s.ci, other.ci):
                groups[other.agent] = group
    return groups


@dataclass
class SectionSummary:
    section: str
    problem: str
    metric: str
    direction: str
    leader: str | None
    iqm: float | None
    ci: tuple[float, float] | None
    tied: list[str] = field(default_factory=list)
    failed_trials: int = 0


@dataclass
class BenchmarkSummary:
    benchmark: str
    tier: str
    stored_trials: int
    expected_trials: int
    failed_trials: int
    sections: list[SectionSummary]
    claims: dict[str, int]
    claims_counted: str  # "paper claims" or "claims" (when the spec names no roles)
    tally_families: dict[str, int] = field(default_factory=dict)  # families of paper claims
    bh_holds: int | None = None  # paper holds after Benjamini-Hochberg over the benchmark

    def as_dict(self) -> dict[str, Any]:
        from dataclasses import asdict

        return asdict(self)


def claim_role(verdict: Any) -> str:
    return getattr(verdict, "role", None) or "paper"


def summarize(report: BenchmarkReport) -> BenchmarkSummary:
    sections = []
    for sec in report.sections:
        groups = rank_groups(sec)
        leader = next((s for s in sec.scores if s.rank == 1), None)
        sections.append(SectionSummary(
            section=sec.section.name, problem=sec.section.problem,
            metric=sec.section.metric.name, direction=sec.section.metric.direction,
            leader=leader.agent if leader else None,
            iqm=float(leader.iqm) if leader else None,
            ci=(float(leader.ci[0]), float(leader.ci[1])) if leader else None,
            tied=[a for a, g in groups.items() if g == 1 and leader and a != leader.agent],
            failed_trials=sum(not r.ok for r in sec.rows),
        ))
    roles = {claim_role(v) for v in report.verdicts}
    paper = [v for v in report.verdicts if claim_role(v) == "paper"]
    counts = Counter(v.verdict for v in paper)
    ordered = {k: counts[k] for k in VERDICT_ORDER if counts.get(k)}
    ordered.update({k: n for k, n in counts.items() if k not in ordered})
    prov = report.provenance
    return BenchmarkSummary(
        benchmark=report.spec.name, tier=report.tier,
        stored_trials=prov.get("stored_trials", 0), expected_trials=prov.get("expected_trials", 0),
        failed_trials=prov.get("failed_trials", 0), sections=sections, claims=ordered,
        claims_counted="paper claims" if roles - {"paper"} else "claims",
        **_families(report.verdicts),
    )


def _families(verdicts: list[Any]) -> dict[str, Any]:
    from .families import tally_v2

    extra = tally_v2(verdicts)
    return {"tally_families": {k: n for k, n in extra["tally_families"].items() if n},
            "bh_holds": extra["bh_holds"]}
