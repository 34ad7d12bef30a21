"""Fair and specific claims: mechanism controls, the method against the trivial agent, and
baselines that may be broken (docs/contract.md, "Fair and specific claims").

- **Control.** A claim that names ``control: <label>`` is evaluated a second time with the
  control (the method with the claimed mechanism removed, randomised or untrained) in the
  agent's place. When both hold, the claim is ``holds, not specific``: it would hold without
  the mechanism, so it is not tallied as a hold. The control's verdict is kept beside the
  method's (``control_verdict``).
- **Method beats trivial.** Beside the reference-vs-trivial check of a section, its method's
  margin over the trivial agent on the primary metric, paired on the same units, with the
  verdicts' design (``method_vs_trivial``: effect, interval, ``beats``, ``unit``): per trial,
  the Hodges-Lehmann shift with its Walsh interval; where a trial stores items scored by one
  trained artifact, the seed is the unit, as for a ``unit: instance`` claim: the mean over seeds
  of each seed's mean item difference, with the sign-flip interval
  (papergym.leaderboard.clustered). Items count as units only where the section declares
  ``independent_items``.
- **Strawman guard.** On a section where the method beats trivial, a baseline whose margin
  over the trivial agent has an interval containing zero is listed in
  ``possibly_broken_baselines``: a baseline that learned nothing makes any method look good.

Pure functions over the spec and rows, like papergym.leaderboard.claims.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from .claims import SectionCheck, Verdict, _section_units, discrimination, hl_interval
from .clustered import cluster_means, sign_flip
from .power import best_case
from .store import Row

NOT_SPECIFIC = "holds, not specific"
UNBEATEN = "the section's method does not beat its trivial agent"
UNSHOWN = "the section's method cannot be shown to beat its trivial agent with these units"


def _unbeaten(margin: dict[str, Any]) -> str:
    """Why a section's method is not shown to beat trivial: the margin's interval reaches zero,
    or too few units (seeds) could reach alpha even if every one favoured the method."""
    return UNSHOWN if margin.get("underpowered") else UNBEATEN


def with_control(spec: Any, tier: str, rows: list[Row], claim: Any, verdict: Verdict,
                 evaluate: Callable[[Any, str, list[Row], Any], Verdict],
                 check: SectionCheck | None = None) -> Verdict:
    """``verdict`` with the claim's fairness fields, and ``holds, not specific`` where the
    claim also holds with its control in the agent's place (``evaluate(spec, tier, rows,
    claim)`` is the engine's evaluation of one claim). A paper claim of a section whose method
    does not beat the trivial agent (``check``) says so first in its detail."""
    verdict.matched = list(claim.matched)
    verdict.control = claim.control
    verdict.control_reason = claim.control_reason
    margin = check.method_vs_trivial if check is not None else None
    if claim.role == "paper" and margin is not None and not margin["beats"]:
        verdict.detail = (f"{_unbeaten(margin)}: {margin['agent']} over {margin['trivial']} "
                          f"{margin['effect']:.4g} [{margin['ci_low']:.4g}, "
                          f"{margin['ci_high']:.4g}]; {verdict.detail}")
    if claim.control in (None, "none"):
        return verdict
    controlled = evaluate(spec, tier, rows, claim.model_copy(update={"agent": claim.control}))
    verdict.control_verdict = controlled.verdict
    if verdict.verdict == "holds" and controlled.verdict == "holds":
        verdict.verdict = NOT_SPECIFIC
        effect = "" if controlled.effect is None else f" (effect {controlled.effect:.4g})"
        verdict.detail = (f"the control {claim.control} passes the claim too{effect}: the claim "
                          f"does not need the mechanism; {verdict.detail}")
    return verdict


def section_method(section: Any, claims: list[Any], rows: list[Row]) -> str | None:
    """The section's method: its ``method:`` label, else the agent of role ``method`` (from
    the rows) named most often as ``agent`` by the section's paper claims, else the only one."""
    if section.method is not None:
        return section.method
    methods = {r.agent for r in rows if r.section == section.name and r.agent_role == "method"}
    named = Counter(c.agent for c in claims if c.problem == section.name and c.role == "paper"
                    and c.agent in methods)
    if named:
        return max(sorted(named), key=lambda a: named[a])
    return next(iter(methods)) if len(methods) == 1 else None


def margin_over(rows: list[Row], who: str, trivial: str, metric: str, sign: float,
                tier_spec: Any, alpha: float = 0.05, independent_items: bool = False
                ) -> dict[str, Any] | None:
    """``who``'s margin over ``trivial`` in the metric's direction, paired on shared units,
    with its two-sided 1 - 2 alpha interval; ``beats`` when the lower bound is above zero with
    enough units to reach alpha (None without shared units).

    Per-trial units: the Hodges-Lehmann shift and its Walsh interval (``unit: trial``). Item
    units of trained artifacts: the items of a (cell, seed) pair are averaged first and the
    seeds are the units, tested by sign flips (``unit: seed``; ``n_units`` seeds, ``n_items``
    items), the statistic of a ``unit: instance`` claim. ``independent_items``: the items are
    the units, as Hodges-Lehmann (``unit: item``)."""
    mine, triv = (_section_units(rows, a, metric, tier_spec) for a in (who, trivial))
    shared = sorted(set(mine) & set(triv))
    if not shared:
        return None
    diffs = sign * np.array([mine[u] - triv[u] for u in shared])
    items = any(len(u) > 2 for u in shared)
    out: dict[str, Any] = {"agent": who, "trivial": trivial, "ci_level": 1 - 2 * alpha}
    if items and not independent_items:
        means, _ = cluster_means(diffs, [u[:2] for u in shared])
        got = sign_flip(means, alpha)
        effect, lo, hi, n = got.mean, got.lo, got.hi, len(means)
        out.update(unit="seed", estimator="mean of per-seed mean differences, sign-flip",
                   n_items=len(diffs))
        reachable = best_case("compare", n, alpha=alpha, clustered=True).reachable
    else:
        effect, lo, hi = hl_interval(diffs, alpha)
        n = len(diffs)
        out.update(unit="item" if items else "trial", estimator="Hodges-Lehmann")
        reachable = best_case("compare", n, alpha=alpha).reachable
    out.update(effect=effect, ci_low=lo, ci_high=hi, n_units=n,
               beats=bool(reachable and lo > 0), underpowered=not reachable)
    return out


def section_checks(spec: Any, tier: str, rows: list[Row], alpha: float = 0.05
                   ) -> dict[str, SectionCheck]:
    """The discrimination checks of every section, each with the method's margin over the
    trivial agent and the baselines that may be broken."""
    checks = discrimination(spec, tier, rows, alpha)
    for section in spec.problems:
        check = checks.get(section.name)
        if check is None or section.trivial is None:
            continue
        metric = section.metric.name
        sign = 1.0 if section.metric.direction == "max" else -1.0
        mine = [r for r in rows if r.section == section.name and r.tier == tier and r.ok
                and metric in r.metrics]
        method = section_method(section, spec.claims, mine)
        check.method = method
        if method is None or method == section.trivial:
            continue
        tier_spec = section.tiers[tier]
        independent = bool(section.independent_items)
        check.method_vs_trivial = margin_over(mine, method, section.trivial, metric, sign,
                                              tier_spec, alpha, independent)
        if not (check.method_vs_trivial or {}).get("beats"):
            continue
        roles = {r.agent: r.agent_role for r in mine}
        for agent in sorted(a for a, role in roles.items() if role == "baseline"):
            if agent in (method, section.trivial, section.reference):
                continue
            margin = margin_over(mine, agent, section.trivial, metric, sign, tier_spec, alpha,
                                 independent)
            if margin is not None and not margin["underpowered"] \
                    and margin["ci_low"] <= 0 <= margin["ci_high"]:
                check.possibly_broken_baselines.append(agent)
    return checks


def method_note(check: SectionCheck | None) -> str:
    """One line on the method against the trivial agent, and the possibly broken baselines."""
    if check is None or check.method_vs_trivial is None:
        return ""
    m = check.method_vs_trivial
    level = f"{100 * m['ci_level']:g}% CI"
    said = ("beats" if m["beats"] else "cannot be shown (too few units) to beat"
            if m.get("underpowered") else "does not beat")
    n = f"n={m['n_units']}"
    if m.get("unit") == "seed":
        n = f"{m['n_units']} seeds, {m['n_items']} items"
    estimator = m.get("estimator", "Hodges-Lehmann")
    line = (f"Method: `{m['agent']}` {said} `{m['trivial']}` by {m['effect']:.4g} "
            f"[{m['ci_low']:.4g}, {m['ci_high']:.4g}] ({level}, {estimator}, {n})")
    if not m["beats"]:
        line += "; the paper claims of this section are marked"
    if check.possibly_broken_baselines:
        line += ("; possibly broken baseline (indistinguishable from the trivial agent): "
                 + ", ".join(f"`{b}`" for b in check.possibly_broken_baselines))
    return line + "."


def claim_fairness(verdict: Verdict) -> str:
    """One cell: the claim's control with its verdict (or ``none`` and why) and its matched
    keys; empty where the spec declares neither."""
    parts = []
    if verdict.control == "none":
        parts.append(f"control: none ({verdict.control_reason})")
    elif verdict.control is not None:
        parts.append(f"control {verdict.control}: {verdict.control_verdict or '–'}")
    if verdict.matched:
        parts.append("matched: " + ", ".join(verdict.matched))
    return "; ".join(parts)


def tuning_note(rows: list[Row], agent: str) -> str:
    """The agent's tuning as the problem recorded it (provenance ``tuning``): the budget, and
    the trials whose chosen value sat at the edge of those tried; empty when none tuned."""
    records = [r.provenance["tuning"] for r in rows
               if r.agent == agent and r.ok and isinstance(r.provenance.get("tuning"), dict)]
    if not records:
        return ""
    budgets = sorted({int(t.get("budget", 0)) for t in records})
    edges = [t for t in records if t.get("at_edge")]
    keys = sorted({k for t in edges for k in t["at_edge"]})
    note = f"{'/'.join(map(str, budgets))} configs tuned"
    if edges:
        note += f"; chosen at the edge of the range tried in {len(edges)} of {len(records)} " \
                f"trials ({', '.join(keys)})"
    return note
