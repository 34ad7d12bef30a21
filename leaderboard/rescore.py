"""Re-score a published benchmark from its stored trials with the current verdict engine.

``papergym rescore [BENCHMARK ...]`` reads ``leaderboard/published/<bench>/trials.jsonl``,
evaluates the current spec's claims at the published tier on exactly those rows (not only
those whose trial key the current code would expect: the published rows are what the
published verdicts were computed from, and the previous engine reproduces all 255 of them
this way), and compares them with the published ``claims.json``: every verdict that changed, with the
old and new effect, interval, units and the new detail (which says why), and the paper-claim
tally before and after (raw, by family, Benjamini-Hochberg-adjusted). Nothing under
``leaderboard/published/`` is written: publishing stays an explicit step.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .claims import tally
from .families import tally_v2

PUBLISHED = Path(__file__).resolve().parent / "published"


@dataclass
class Rescored:
    benchmark: str
    tier: str
    old: list[dict[str, Any]]
    new: list[dict[str, Any]]
    changed: list[tuple[dict[str, Any] | None, dict[str, Any]]] = field(default_factory=list)

    def tallies(self) -> dict[str, dict[str, Any]]:
        """Paper-claim tallies before and after: raw, by family, BH-adjusted holds."""
        return {when: {"raw": tally(entries), **tally_v2(entries)}
                for when, entries in (("before", self.old), ("after", self.new))}


def rescore(benchmark: str, root: Path = PUBLISHED, tier: str | None = None) -> Rescored:
    """The published verdicts of ``benchmark`` and the current engine's, on the same rows."""
    from papergym.benchmarks.spec import find_spec

    from .claims import evaluate_claims
    from .store import Row

    folder = root / benchmark
    old = json.loads((folder / "claims.json").read_text())
    with (folder / "trials.jsonl").open() as fh:
        rows = [Row(**json.loads(line)) for line in fh if line.strip()]
    tier = tier or (rows[0].tier if rows else "standard")
    new = [v.as_dict() for v in evaluate_claims(find_spec(benchmark), tier, rows)]
    before = {d["id"]: d for d in old}
    out = Rescored(benchmark, tier, old, new)
    for d in new:
        was = before.get(d["id"])
        if was is None or was["verdict"] != d["verdict"]:
            out.changed.append((was, d))
    return out


def _ci(d: dict[str, Any]) -> str:
    effect, ci = d.get("effect"), d.get("ci")
    if effect is None:
        return "–"

    def num(x: Any) -> str:
        if x is None:
            return "nan"
        return f"{x:+.3g}" if math.isfinite(x) else ("-inf" if x < 0 else "+inf")

    return f"{num(effect)} [{num(ci[0])}, {num(ci[1])}]" if ci else num(effect)


def _units(d: dict[str, Any]) -> str:
    unit = d.get("unit") or "unit"
    return f"n={d.get('n_units')} {unit}" + ("s" if d.get("n_units") != 1 else "")


def describe(result: Rescored) -> list[str]:
    """Lines for a terminal or a report: the changed verdicts, then the tallies."""
    lines = [f"{result.benchmark} ({result.tier}): {len(result.changed)} of {len(result.new)} "
             "verdicts changed"]
    for was, now in result.changed:
        old = (f"{was['verdict']} {_ci(was)} n={was.get('n_units')}" if was is not None
               else "(new claim)")
        lines.append(f"  {now['id']} [{now.get('role', 'paper')}]: {old} -> {now['verdict']} "
                     f"{_ci(now)} {_units(now)}; {str(now.get('detail', ''))[:500]}")
    for when, t in result.tallies().items():
        raw = ", ".join(f"{n} {k}" for k, n in t["raw"].items() if n) or "none"
        fam = ", ".join(f"{n} {k}" for k, n in t["tally_families"].items() if n) or "none"
        lines.append(f"  tally {when}: paper claims {raw}; families {fam}; holds after BH "
                     f"{t['bh_holds']}")
    return lines


def published_benchmarks(root: Path = PUBLISHED) -> list[str]:
    return sorted(p.parent.name for p in root.glob("*/trials.jsonl")
                  if (p.parent / "claims.json").is_file())
