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
    paper = [c.id for c in spec.claims if c.role == "paper" and not c.post_hoc]
    bare = [c.model_copy(update={"sesoi": None}) if c.id in paper else c for c in spec.claims]
    plan = power_plan(spec.model_copy(update={"claims": bare}), rows)
    assert plan[-1].startswith(f"warning: no sesoi on {len(paper)} paper claims")
    claims = [c.model_copy(update={"sesoi": 0.02}) if c.id == "C3b" else c for c in spec.claims]
    # C3b: 8 seeds (one trained policy each); the per-seed differences vary little
    plan = power_plan(spec.model_copy(update={"claims": claims}), rows)
    line = next(x for x in plan if x.startswith("C3b:"))
    assert "with 8 seeds (sd " in line and "per seed)" in line
    seeds_needed = int(line.split("; ")[-1].split()[0])
    sd = float(line.split("(sd ")[1].split()[0])
    fewer = seeds_needed - 1  # below 80% power, or the sign-flip floor 2^-n above alpha
    assert power_at(0.02, sd, seeds_needed, 0.05) >= 0.8
    assert power_at(0.02, sd, fewer, 0.05) < 0.8 or 2.0 ** -fewer >= 0.05
    assert n_for_power(0.02, sd) == seeds_needed  # one unit per seed: one cell, clustered


def test_claims_added_or_changed_after_the_first_publish_are_post_hoc_candidates(tmp_path):
    import subprocess

    from papergym.leaderboard.rescore import post_hoc_candidates

    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    (tmp_path / "benchmarks" / "specs").mkdir(parents=True)
    (tmp_path / "leaderboard" / "published" / "b").mkdir(parents=True)
    spec = tmp_path / "benchmarks" / "specs" / "b.yaml"
    claim = {"id": "C1", "statement": "x", "kind": "compare", "margin": 0.0}
    spec.write_text(yaml_dump({"claims": [claim]}))
    git("init", "-q")
    git("add", "benchmarks")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "spec")
    assert post_hoc_candidates("b", tmp_path) == (None, [])  # never published
    (tmp_path / "leaderboard" / "published" / "b" / "claims.json").write_text("[]")
    git("add", "leaderboard")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "publish")
    spec.write_text(yaml_dump({"claims": [
        {**claim, "statement": "reworded", "sesoi": 0.1},  # no test changed
        {"id": "C1b", "statement": "split", "kind": "compare"},
        {"id": "C2", "kind": "compare", "post_hoc": True, "post_hoc_reason": "r"}]}))
    first, later = post_hoc_candidates("b", tmp_path)
    assert first is not None and later == ["C1b: added"]
    spec.write_text(yaml_dump({"claims": [{**claim, "margin": 0.05}]}))
    assert post_hoc_candidates("b", tmp_path)[1] == ["C1: changed (margin)"]


def yaml_dump(data):
    import yaml

    return yaml.safe_dump(data)


def test_rescore_out_writes_a_markdown_report_of_tallies_and_changed_verdicts(tmp_path,
                                                                             monkeypatch):
    from papergym import cli
    from papergym.leaderboard import rescore as module
    from papergym.leaderboard.rescore import markdown_report

    shutil.copytree(PUBLISHED / "kgqa", tmp_path / "kgqa")
    current = rescore("kgqa", root=tmp_path).new
    flipped = [dict(d) for d in current]
    flipped[0].update(verdict="fails" if flipped[0]["verdict"] != "fails" else "holds",
                      n_units=999, unit="item")
    (tmp_path / "kgqa" / "claims.json").write_text(json.dumps(flipped))
    result = rescore("kgqa", root=tmp_path)
    text = markdown_report([result], {"kgqa": ("abcdef0123456", ["X1: added"])}, "cmd")
    assert text == markdown_report([result], {"kgqa": ("abcdef0123456", ["X1: added"])},
                                   "cmd")  # no clock: regenerated text is identical
    tallies = result.tallies()
    after = tallies["after"]["raw"]
    assert ("| after, raw | " + " | ".join(str(after[k]) for k in module.TALLY_COLUMNS)) in text
    families = tallies["after"]["tally_families"]
    assert ("| after, by family | " + " | ".join(str(families[k])
                                                for k in module.TALLY_COLUMNS)) in text
    assert (f"Holds after Benjamini-Hochberg: {tallies['before']['bh_holds']} before, "
            f"{tallies['after']['bh_holds']} after.") in text
    changed = [line for line in text.splitlines() if line.startswith(f"| {current[0]['id']} |")]
    assert len(changed) == 1 and f"units 999 -> {current[0]['n_units']}" in changed[0]
    assert changed[0].count(" | ") == 4  # five cells: pipes inside the detail are escaped
    assert f"1 of {len(current)} verdicts changed" in text
    assert "(abcdef0123) and not marked post_hoc: X1: added." in text
    # the command writes the same report, for the published folders
    monkeypatch.setattr(module, "PUBLISHED", tmp_path)
    monkeypatch.setattr(module.rescore, "__defaults__", (tmp_path, None))
    monkeypatch.setattr(module, "post_hoc_candidates", lambda name: (None, []))
    out = tmp_path / "report" / "rescore.md"
    assert cli.main(["rescore", "kgqa", "--out", str(out)]) == 0
    assert out.read_text() == markdown_report([result], {}, f"papergym rescore kgqa --out {out}")
