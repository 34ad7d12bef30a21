"""Which agents of a report are submissions (plug-ins), and which of those a verified bundle
backs: what a renderer needs for a submission's badge, read from the rows alone.

A plug-in's rows name it by file (``agent_id`` ``"file.py:Class"``); rows that ``papergym
verify --store`` imported carry ``provenance["submission"]`` with ``verified`` and the
bundle's SHA-256. An agent counts as verified only when every one of its rows does.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .store import Row


def is_plugin(row: Row) -> bool:
    file, sep, _ = row.agent_id.rpartition(":")
    return bool(sep) and file.endswith(".py")


def submissions(rows: Iterable[Row]) -> dict[str, dict[str, Any]]:
    """``agent label -> {"verified", "bundle_sha256", "code_hash"}`` for every plug-in among
    ``rows`` (built-in agents are absent)."""
    marks: dict[str, list[dict[str, Any]]] = {}
    code: dict[str, set[str]] = {}
    for row in rows:
        if is_plugin(row):
            marks.setdefault(row.agent, []).append(row.provenance.get("submission") or {})
            code.setdefault(row.agent, set()).add(str(row.provenance.get("agent_code_hash", "")))
    result = {}
    for agent, agent_marks in marks.items():
        bundles = {m.get("bundle_sha256") for m in agent_marks}
        verified = all(m.get("verified") is True for m in agent_marks) and len(bundles) == 1
        result[agent] = {"verified": verified,
                         "bundle_sha256": next(iter(bundles)) if verified else None,
                         "code_hash": ", ".join(sorted(code[agent]))}
    return result
