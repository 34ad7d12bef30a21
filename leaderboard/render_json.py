"""JSON renderer: a BenchmarkReport as plain data (``papergym leaderboard --json``).

Non-finite numbers become ``null`` so the output is strict JSON that ``jq`` and browsers read.
"""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

from .report import BenchmarkReport
from .summary import rank_groups, summarize


def _clean(value: Any) -> Any:
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _clean(dataclasses.asdict(value))
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        return _clean(value.item())
    return value


def report_dict(report: BenchmarkReport) -> dict[str, Any]:
    spec = report.spec
    sections = []
    for sec in report.sections:
        groups = rank_groups(sec)
        metric = sec.section.metric
        sections.append({
            "section": sec.section.name, "problem": sec.section.problem,
            "metric": metric.name, "direction": metric.direction,
            "scores": [{**dataclasses.asdict(s), "group": groups.get(s.agent)} for s in sec.scores],
            "check": sec.check.as_dict() if sec.check is not None else None,
        })
    return _clean({
        "benchmark": spec.name, "paper": spec.paper.title, "tier": report.tier,
        "sections": sections, "claims": [v.as_dict() for v in report.verdicts],
        "summary": summarize(report).as_dict(), "provenance": report.provenance,
    })


def dumps(data: Any) -> str:
    return json.dumps(_clean(data), indent=2, default=str, allow_nan=False)
