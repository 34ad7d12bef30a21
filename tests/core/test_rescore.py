"""papergym rescore: published rows re-scored with the current engine, every changed verdict
listed, the tallies before and after; nothing under leaderboard/published is written."""

from __future__ import annotations

import json
import shutil

from papergym.leaderboard.claims import tally
from papergym.leaderboard.rescore import PUBLISHED, describe, rescore


def test_rescore_lists_exactly_the_verdicts_that_differ(tmp_path):
    shutil.copytree(PUBLISHED / "kgqa", tmp_path / "kgqa")
    current = rescore("kgqa", root=tmp_path).new
    assert {d["unit"] for d in current if d["id"] in ("C2", "C3b")} == {"seed"}
    flipped = [dict(d) for d in current]
    flipped[0]["verdict"] = "fails" if flipped[0]["verdict"] != "fails" else "holds"
    (tmp_path / "kgqa" / "claims.json").write_text(json.dumps(flipped))
    before = (PUBLISHED / "kgqa" / "claims.json").read_text()
    result = rescore("kgqa", root=tmp_path)
    assert [now["id"] for _, now in result.changed] == [flipped[0]["id"]]
    assert result.tallies()["after"]["raw"] == tally(current)
    lines = describe(result)
    assert lines[0] == f"kgqa (standard): 1 of {len(current)} verdicts changed"
    assert any(line.startswith("  tally after: paper claims") and "holds after BH" in line
               for line in lines)
    assert (PUBLISHED / "kgqa" / "claims.json").read_text() == before
