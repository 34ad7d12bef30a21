"""Matched settings: the keys a claim holds equal between the agents it compares.

A claim's ``matched: [top_p, steps]`` says that the method and its baselines (and its control)
run with the same value of each key, so that the comparison measures the method and not a
setting. :func:`matched_errors` checks it against the registry before any trial runs, at every
tier the claim is evaluated at:

- a key that is an argument of the section's problem (a cell kwarg) is held equal by the
  harness, which runs every agent on the same cells, unless the claim pairs different cells
  (``agent_at`` / ``baseline_at`` setting the key to different values);
- any other key must be a field of every compared agent's ``Config``, and the resolved values
  (the agent's defaults, the spec's ``config``, the tier's ``tier_config``) must be equal.

Pure over the spec and the agent classes: it builds no agent and runs nothing.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from papergym.agent import AgentError


def compared_groups(claim: Any) -> list[list[str]]:
    """The groups of agent labels a claim holds matched: its agent, baselines (or a
    correlation's agents) and control; and, for a change claim, its two reference agents
    (``agent_ref`` against ``baseline_ref``: each side's change is measured from its own)."""
    labels = list(claim.policies)
    if claim.control not in (None, "none"):
        labels.append(claim.control)
    groups = [list(dict.fromkeys(labels))]
    if claim.agent_ref is not None:
        groups.append(list(dict.fromkeys([claim.agent_ref, claim.baseline_ref])))
    return groups


def compared_labels(claim: Any) -> list[str]:
    """Every agent label a claim compares (its groups, flattened)."""
    return list(dict.fromkeys(label for group in compared_groups(claim) for label in group))


def matched_errors(spec: Any, resolve: Callable[[Any, Any, str], dict[str, Any]],
                   arguments: Callable[[Any], set[str]]) -> list[tuple[str, str]]:
    """(field, message) for every matched key that the compared agents do not hold equal.

    ``resolve(section, entry, tier)`` is an agent entry's resolved configuration at a tier
    (a dict); ``arguments(section)`` the names of the section's problem arguments."""
    sections = {s.name: s for s in spec.problems}
    out: list[tuple[str, str]] = []
    for i, claim in enumerate(spec.claims):
        if not claim.matched:
            continue
        section = sections[claim.problem]
        cell_keys = arguments(section)
        tiers = [t for t in claim.tiers if t in section.tiers]
        for j, key in enumerate(claim.matched):
            field = f"claims.{i}.matched.{j}"
            if key in cell_keys:
                a, b = claim.agent_at.get(key), claim.baseline_at.get(key)
                if a is not None and b is not None and a != b:
                    out.append((field, f"claim {claim.id}: {key!r} is matched, but agent_at "
                                       f"sets {key}={a!r} and baseline_at {key}={b!r}"))
                continue
            values: dict[tuple[str, int], dict[str, Any]] = {}  # (tier, group) -> label -> value
            for tier, (g, labels) in itertools.product(tiers, enumerate(compared_groups(claim))):
                for label in labels:
                    entry = section.agent(label)
                    if not section.runs_at(label, tier):
                        continue
                    try:
                        config = resolve(section, entry, tier)
                    except AgentError:
                        continue  # the agent checks report a bad config with its own field
                    if key not in config:
                        out.append((field, f"claim {claim.id}: agent {label!r} ({entry.id}) has "
                                           f"no setting {key!r}, so it cannot be held matched; "
                                           f"its config fields are {', '.join(sorted(config))}"
                                           f" and the problem's arguments "
                                           f"{', '.join(sorted(cell_keys))}"))
                        break
                    values.setdefault((tier, g), {})[label] = config[key]
                else:
                    continue
                break
            for (tier, _), per_agent in values.items():
                if len({_canonical(v) for v in per_agent.values()}) > 1:
                    seen = ", ".join(f"{label}={v!r}" for label, v in per_agent.items())
                    out.append((field, f"claim {claim.id}: the compared agents' resolved "
                                       f"configurations differ on matched key {key!r} at tier "
                                       f"{tier} ({seen}); set one value in the agents' config "
                                       "or drop the key from matched"))
                    break
    return out


def _canonical(value: Any) -> str:
    """A hashable, order-stable form of a config value (lists, dicts, floats as written)."""
    import json

    return json.dumps(value, sort_keys=True, default=repr)


def fairness_warnings(spec: Any) -> list[str]:
    """What a spec leaves undeclared: paper claims naming no ``control`` (an agent, or
    ``none`` with a reason) and paper compare claims holding nothing ``matched``."""
    out = []
    for claim in spec.claims:
        if claim.role != "paper":
            continue
        if claim.control is None and claim.kind != "correlation":
            out.append(f"{claim.id}: names no control (the method without its mechanism, or "
                       "`control: none` with control_reason)")
        if claim.kind in ("compare", "interaction") and not claim.matched:
            out.append(f"{claim.id}: a compare claim that holds no setting matched (matched: "
                       "[...])")
    return out


def edge_warnings(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    """Agents whose tuned choice sat at the edge of the values tried, from stored rows
    (``provenance.tuning.at_edge``): per (section, agent), the keys and the share of trials."""
    seen: dict[tuple[str, str], list[list[str]]] = {}
    for row in rows:
        tuning = (row.get("provenance") or {}).get("tuning")
        if isinstance(tuning, dict):
            seen.setdefault((row["section"], row["agent"]), []).append(tuning.get("at_edge") or [])
    out = []
    for (section, agent), edges in sorted(seen.items()):
        hit = [e for e in edges if e]
        if hit:
            keys = ", ".join(sorted({k for e in hit for k in e}))
            out.append(f"{section}/{agent}: tuned value at the edge of the range tried in "
                       f"{len(hit)} of {len(edges)} trials ({keys}); widen the search space")
    return out
