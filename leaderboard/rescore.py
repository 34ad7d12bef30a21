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


def published_rows(benchmark: str, root: Path = PUBLISHED) -> list[Any]:
    """The stored rows of a published benchmark (empty when it has none)."""
    from .store import Row

    path = root / benchmark / "trials.jsonl"
    if not path.is_file():
        return []
    with path.open() as fh:
        return [Row(**json.loads(line)) for line in fh if line.strip()]


def power_plan(spec: Any, rows: list[Any], tier: str = "standard",
               target: float = 0.8) -> list[str]:
    """Per paper claim evaluated at ``tier``: a warning when it declares no sesoi, else its
    power at the sesoi with the tier's seeds and the seeds it needs for ``target`` power, the
    spread of its units taken from ``rows`` (e.g. the published ones)."""
    from papergym.benchmarks.spec import claim_units

    from .claims import evaluate_claims
    from .power import n_for_power, power_at

    lines, missing = [], []
    declared = any(c.sesoi is not None for c in spec.claims)
    verdicts = {v.id: v for v in evaluate_claims(spec, tier, rows)} if rows and declared else {}
    for claim in spec.claims:
        if claim.role != "paper" or tier not in claim.tiers:
            continue
        if claim.sesoi is None:
            missing.append(claim.id)
            continue
        v = verdicts.get(claim.id)
        section = spec.section(claim.problem)
        seeds = len(section.tiers[tier].seed_list()) if tier in section.tiers else 0
        units = claim_units(spec, claim, tier)[0]
        if v is None or v.unit_sd is None or not seeds or not units:
            lines.append(f"{claim.id}: sesoi {claim.sesoi:g}; no stored units at {tier} to "
                         "estimate their spread")
            continue
        per_seed = units / seeds
        efficiency = 3 / math.pi if "Hodges-Lehmann" in v.effect_name else 1.0
        baselines = max(1, len(claim.baselines))
        now = power_at(claim.sesoi, v.unit_sd, units, claim.alpha, baselines, efficiency,
                       baselines * 2.0 ** -units < claim.alpha)
        needed = n_for_power(claim.sesoi, v.unit_sd, target, claim.alpha, baselines, efficiency)
        need = (f"{math.ceil(needed / per_seed)} seeds for {target:.0%}" if needed
                else f"no seed count reaches {target:.0%}")
        lines.append(f"{claim.id}: power {now:.0%} at sesoi {claim.sesoi:g} with {seeds} seeds "
                     f"(sd {v.unit_sd:.3g} per {v.unit}); {need}")
    if missing:
        lines.append(f"warning: no sesoi on {len(missing)} paper claims (power not declared): "
                     + ", ".join(missing))
    return lines


# Claim fields that change no test: a claim whose other fields changed after the first publish
# is post hoc.
NOT_A_CHANGE = frozenset({"statement", "family", "sesoi", "post_hoc", "post_hoc_reason"})


def _tested(claim: dict[str, Any]) -> dict[str, Any]:
    """A claim's fields that define its test (``units.average_seeds`` left out: verdicts v2
    refused it where seeds differ, an engine change, not the claim's)."""
    out = {k: v for k, v in claim.items() if k not in NOT_A_CHANGE}
    if isinstance(out.get("units"), dict):
        out["units"] = {k: v for k, v in out["units"].items() if k != "average_seeds"}
    return out


def post_hoc_candidates(benchmark: str, repo: Path | None = None) -> tuple[str | None,
                                                                           list[str]]:
    """(the commit that first published ``benchmark``, the claims added or changed since,
    as "id: added" / "id: changed (fields)", not counting those marked post_hoc), from the
    git history of ``repo`` (default: the checkout this module lives in). (None, []) without
    git history of the benchmark."""
    import subprocess

    import yaml

    repo = repo or Path(__file__).resolve().parent.parent
    published = f"leaderboard/published/{benchmark}/claims.json"
    spec_path = f"benchmarks/specs/{benchmark}.yaml"

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
        return done.stdout if done.returncode == 0 else ""

    first = git("log", "--diff-filter=A", "--format=%H", "--", published).split()
    if not first:
        return None, []
    then = yaml.safe_load(git("show", f"{first[-1]}:{spec_path}") or "{}") or {}
    now = yaml.safe_load((repo / spec_path).read_text()) or {}
    before = {c["id"]: c for c in then.get("claims", []) if isinstance(c, dict)}
    out = []
    for claim in now.get("claims", []):
        if claim.get("post_hoc"):
            continue
        old = before.get(claim["id"])
        if old is None:
            out.append(f"{claim['id']}: added")
            continue
        old, new = _tested(old), _tested(claim)
        fields = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
        if fields:
            out.append(f"{claim['id']}: changed ({', '.join(fields)})")
    return first[-1], out
