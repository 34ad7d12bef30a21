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


def test_power_plan_gives_the_seeds_for_80_percent_power_at_the_sesoi():
    from papergym.benchmarks.spec import find_spec
    from papergym.leaderboard.power import n_for_power, power_at
    from papergym.leaderboard.rescore import power_plan, published_rows

    spec = find_spec("kgqa")
    rows = published_rows("kgqa")
    assert power_plan(spec, rows)[-1].startswith("warning: no sesoi on 8 paper claims")
    claims = [c.model_copy(update={"sesoi": 0.02}) if c.id == "C3b" else c for c in spec.claims]
    # C3b: 5 seeds, the per-seed mean differences vary little: 5 seeds are what the floor needs
    plan = power_plan(spec.model_copy(update={"claims": claims}), rows)
    line = next(x for x in plan if x.startswith("C3b:"))
    assert "with 5 seeds (sd " in line and "per seed)" in line
    seeds_needed = int(line.split("; ")[-1].split()[0])
    sd = float(line.split("(sd ")[1].split()[0])
    fewer = seeds_needed - 1  # below 80% power, or the sign-flip floor 2^-n above alpha
    assert power_at(0.02, sd, seeds_needed, 0.05) >= 0.8
    assert power_at(0.02, sd, fewer, 0.05) < 0.8 or 2.0 ** -fewer >= 0.05
    assert n_for_power(0.02, sd) == seeds_needed  # one unit per seed: one cell, clustered
