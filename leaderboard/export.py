"""Stored trial rows as a table: a pandas DataFrame, and files by suffix (.parquet/.csv/.jsonl).

One flat line per trial. Metrics become ``metric.<name>`` columns; the nested fields
(problem kwargs, agent config) stay as JSON strings so every format holds the same table.
Curves, per-instance units and the full provenance are kept in the JSONL form only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .store import Row, export_csv, export_jsonl

FIXED = ("key", "benchmark", "section", "tier", "problem_id", "problem_kwargs", "agent", "agent_id",
         "agent_role", "agent_config", "seed", "status", "error")
FORMATS = (".parquet", ".csv", ".jsonl")


def rows_frame(rows: list[Row]) -> Any:
    """A pandas DataFrame with one line per trial (columns as in ``export_csv``)."""
    import pandas as pd

    metric_names = sorted({m for r in rows for m in r.metrics})
    records = []
    for r in rows:
        record: dict[str, Any] = {}
        for name in FIXED:
            value = getattr(r, name)
            record[name] = json.dumps(value, sort_keys=True) if isinstance(value, dict) else value
        for m in metric_names:
            record[f"metric.{m}"] = r.metrics.get(m, float("nan"))
        record["wall_s"] = r.provenance.get("wall_s")
        record["git_sha"] = r.provenance.get("git_sha")
        record["created"] = pd.Timestamp(r.created, unit="s", tz="UTC")
        records.append(record)
    columns = [*FIXED, *(f"metric.{m}" for m in metric_names), "wall_s", "git_sha", "created"]
    frame = pd.DataFrame.from_records(records, columns=columns)
    return frame.astype({"seed": "int64"}) if len(frame) else frame


def export_rows(rows: list[Row], target: str | Path) -> Path:
    """Write ``rows`` to ``target`` in the format its suffix names; any other suffix is an error."""
    target = Path(target)
    suffix = target.suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"{target}: unknown export format {target.suffix or '(no suffix)'!r}; "
                         f"use one of {', '.join(FORMATS)}")
    target.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".parquet":
        rows_frame(rows).to_parquet(target, engine="pyarrow", index=False)
        return target
    return (export_csv if suffix == ".csv" else export_jsonl)(rows, target)
