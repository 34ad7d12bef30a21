"""What the command line prints and writes: plain full-width text in pipes, JSON that parses,
readable numbers, export formats by suffix, the notebook API, and the end-of-run summary."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

import papergym
from papergym.cli import main
from papergym.leaderboard.numbers import fmt, fmt_ci
from tests.conftest import TOY_SPEC


@pytest.fixture(scope="module")
def toy_store(tmp_path_factory):
    """The toy benchmark run once (24 trials) through the CLI, with its printed output."""
    folder = tmp_path_factory.mktemp("toy")
    store, out = folder / "s.sqlite", folder / "results"
    proc = subprocess.run([sys.executable, "-m", "papergym.cli", "run", str(TOY_SPEC), "--store",
                           str(store), "--out", str(out), "--workers", "2"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return store, out, proc.stdout


@pytest.mark.parametrize("value, text", [
    (37850.0, "37,850"), (3.785e4, "37,850"), (1234567.8, "1,234,568"), (0.95312, "0.953"),
    (12.345, "12.3"), (999.7, "1,000"), (-1234.4, "-1,234"), (2.0, "2"), (0.00123, "0.00123"),
    (1.2e-5, "1.20e-05"), (0.0, "0"), (float("nan"), "n/a"), (None, "n/a"), (float("-inf"), "-inf"),
])
def test_numbers_have_three_significant_digits_and_separators(value, text):
    assert fmt(value) == text
    assert "e+" not in fmt(value)


def test_interval_uses_the_same_formatter():
    assert fmt_ci(37850.0, (36123.4, 39000.0)) == "37,850 [36,123, 39,000]"


def test_list_in_a_pipe_is_plain_and_untruncated(capsys):
    assert main(["list"]) == 0  # captured stdout is not a terminal, like a pipe
    stdout = capsys.readouterr().out
    lines = stdout.splitlines()
    ids = {p.id for p in papergym.problems()}
    listed = {line.split("\t")[0] for line in lines if line.startswith("papergym/")}
    assert ids <= listed  # every id in full, first field of its line
    assert "…" not in stdout and "━" not in stdout and "│" not in stdout
    assert [line for line in lines if line.startswith("papergym/PerformativeAffine-v0\t")]


def test_list_json_and_version(capsys):
    assert main(["list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data) == {"problems", "agents", "benchmarks"}
    assert {p["id"] for p in data["problems"]} == {p.id for p in papergym.problems()}
    assert main(["list", "benchmarks", "--json"]) == 0
    assert set(json.loads(capsys.readouterr().out)) == {"benchmarks"}
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"papergym {papergym.__version__}"


def test_run_ends_with_a_short_summary(toy_store):
    store, out, stdout = toy_store
    lines = stdout.splitlines()
    assert len(lines) < 15
    assert any(line.startswith("  reach: greedy return↑ ") for line in lines)
    assert any(line.startswith("  claims: ") and "holds" in line for line in lines)
    assert lines[-1] == f"all reports: {out / 'index.html'}"
    assert (out / "toy" / "smoke" / "index.html").is_file()
    assert "IQM [95% CI]" not in stdout  # the full tables are in the reports, not the terminal


def test_leaderboard_and_claims_json(toy_store, capsys):
    store, out, _ = toy_store
    base = [str(TOY_SPEC), "--store", str(store)]
    assert main(["leaderboard", *base, "--out", str(out), "--json"]) == 0
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert "wrote" in captured.err
    (section,) = report["sections"]
    scores = {s["agent"]: s for s in section["scores"]}
    assert scores["greedy"]["rank"] == 1 and scores["greedy"]["group"] == 1
    assert scores["oracle"]["rank"] is None and scores["oracle"]["group"] is None
    assert scores["greedy"]["ci"][0] <= scores["greedy"]["iqm"] <= scores["greedy"]["ci"][1]
    assert report["summary"]["sections"][0]["leader"] == "greedy"
    assert main(["claims", *base, "--json"]) == 0
    verdicts = json.loads(capsys.readouterr().out)
    assert [v["id"] for v in verdicts] == [v["id"] for v in report["claims"]] == ["T1", "T2", "T3"]
    assert main(["claims", *base]) == 0
    plain = capsys.readouterr().out
    assert plain.splitlines()[1].split("\t")[:3] == ["id", "role", "claim"]


def test_export_by_suffix(toy_store, tmp_path, capsys):
    # a hard dependency; the skip only spares a venv made before pyarrow joined (pip install -e .)
    pytest.importorskip("pyarrow")
    store, _, _ = toy_store
    base = ["export", str(TOY_SPEC), "--store", str(store)]
    for name in ("t.parquet", "t.csv", "t.jsonl"):
        assert main([*base, str(tmp_path / name)]) == 0
    parquet = pd.read_parquet(tmp_path / "t.parquet")
    csv = pd.read_csv(tmp_path / "t.csv")
    assert (tmp_path / "t.parquet").read_bytes()[:4] == b"PAR1"
    assert len(parquet) == len(csv) == 24
    assert sorted(parquet["key"]) == sorted(csv["key"])
    assert parquet["metric.return"].sum() == pytest.approx(csv["metric.return"].sum())
    assert len((tmp_path / "t.jsonl").read_text().splitlines()) == 24
    capsys.readouterr()
    assert main([*base, str(tmp_path / "t.xlsx")]) == 2
    err = capsys.readouterr().err
    assert "t.xlsx" in err and ".parquet" in err and not (tmp_path / "t.xlsx").exists()


def test_flags_that_need_each_other(tmp_path, capsys):
    assert main(["run", str(TOY_SPEC), "--store", str(tmp_path / "s.sqlite"),
                 "--address", "auto"]) == 2
    assert "--executor ray" in capsys.readouterr().err
    assert main(["check", "--all", "papergym/FixtureReach-v0"]) == 2
    assert "not both" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["claims", str(TOY_SPEC), "--out", "x"])  # no flag that would be ignored


def test_notebook_api(toy_store):
    store, _, _ = toy_store
    frame = papergym.run(TOY_SPEC, tier="smoke", store=store, workers=1)  # all stored: runs none
    assert isinstance(frame, pd.DataFrame) and len(frame) == 24
    assert {"agent", "seed", "status", "metric.return"} <= set(frame.columns)
    greedy = papergym.run(TOY_SPEC, store=store, agents=["greedy"])
    assert set(greedy["agent"]) == {"greedy"} and len(greedy) == 6
    verdicts = papergym.claims(TOY_SPEC, tier="smoke", store=store)
    assert list(verdicts["id"]) == ["T1", "T2", "T3"]
    assert set(verdicts["verdict"]) == {"holds"}
    assert (verdicts["ci_low"] <= verdicts["effect"]).all()


def test_import_papergym_stays_light():
    code = ("import sys, papergym; heavy = [m for m in ('pandas', 'matplotlib', 'rich', "
            "'papergym.benchmarks.runner') if m in sys.modules]; print(heavy)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.stdout.strip() == "[]", proc.stderr
