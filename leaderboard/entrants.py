"""Who each ranked entry is and what it may spend: pure functions over a section's rows.

A *submission* is an agent run from a plug-in file (``--agent path.py:Class``): its rows carry
``provenance["plugin"] = {"source_sha256": ...}`` (set where rows are made,
``benchmarks/runner.py:make_row``), so every renderer can mark it with its own badge and the
hash of the source that produced it, whatever role the plug-in declared.

A *budget* is what the problem meters for a trial (``provenance["budget"]``, the problem's
``Budget.as_dict()``: ``{name: {"limit": ..., "used": ...}}``): the limits a submitter must
fit in, and the most any of the agent's trials used.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .numbers import fmt

SHA256 = re.compile(r"[0-9a-f]{64}")
HASH_SHOWN = 12  # hex digits of a source hash printed beside a submission's name


def submission_hashes(rows: Iterable[Any]) -> dict[str, str]:
    """agent -> sha256 of its plug-in source, for every agent whose rows came from a plug-in."""
    out: dict[str, str] = {}
    for r in rows:
        plugin = (r.provenance or {}).get("plugin")
        sha = plugin.get("source_sha256") if isinstance(plugin, dict) else None
        if isinstance(sha, str) and SHA256.fullmatch(sha):  # imported rows are data, not trusted
            out.setdefault(r.agent, sha)
    return out


def short_hash(sha: str) -> str:
    return sha[:HASH_SHOWN]


@dataclass(frozen=True)
class Meter:
    """One metered resource of one agent: its limit(s) over the agent's trials and the most used."""

    name: str
    limits: tuple[float, ...]  # distinct limits over the agent's trials (cells may differ)
    used_max: float | None

    def limit_text(self) -> str:
        if not self.limits:
            return "unlimited"
        if len(self.limits) == 1:
            return fmt(self.limits[0])
        return f"{fmt(min(self.limits))}–{fmt(max(self.limits))}"

    def text(self) -> str:
        used = "" if self.used_max is None else f" (used ≤ {fmt(self.used_max)})"
        return f"{self.name} ≤ {self.limit_text()}{used}"


def budgets(rows: Iterable[Any]) -> dict[str, list[Meter]]:
    """agent -> the resources its problem metered, with their limits and the most used, from
    the budget record of each of its trials (failed trials included: the limit is the same)."""
    limits: dict[str, dict[str, set[float]]] = {}
    used: dict[str, dict[str, float]] = {}
    for r in rows:
        record = (r.provenance or {}).get("budget") or {}
        if not isinstance(record, dict):
            continue
        agent_limits = limits.setdefault(r.agent, {})
        for name, entry in record.items():
            if not isinstance(entry, dict):
                continue
            agent_limits.setdefault(name, set())
            if isinstance(entry.get("limit"), (int, float)):
                agent_limits[name].add(float(entry["limit"]))
            if isinstance(entry.get("used"), (int, float)):
                top = used.setdefault(r.agent, {})
                top[name] = max(top.get(name, 0.0), float(entry["used"]))
    return {agent: [Meter(name, tuple(sorted(values)), used.get(agent, {}).get(name))
                    for name, values in sorted(per.items())]
            for agent, per in limits.items() if per}


def budget_text(meters: list[Meter]) -> str:
    return "; ".join(m.text() for m in meters) if meters else "–"


def plain_label(agent: str, hashes: dict[str, str], tuned: bool = False) -> str:
    """An agent's name for the text renderers (terminal, Markdown): a submission with its badge
    and source hash, a tuned agent marked as such."""
    label = agent + (" (tuned)" if tuned else "")
    sha = hashes.get(agent)
    return f"{label} [submission {short_hash(sha)}]" if sha else label
