"""The command line and the renderers: clear errors, escaped strings, provenance, publishing."""

from __future__ import annotations

import yaml

from papergym.benchmarks.runner import rows_for, run_benchmark
from papergym.benchmarks.spec import load_spec
from papergym.cli import main
from papergym.leaderboard.publish import publish
from papergym.leaderboard.render_html import render_html
from papergym.leaderboard.render_markdown import render_markdown
from papergym.leaderboard.report import build_report
from papergym.leaderboard.store import Store
from tests.conftest import FIXTURES, TOY_SPEC

HOSTILE = "<img src=x onerror=alert(1)>"


def test_bad_spec_gives_one_clear_line(tmp_path, capsys):
    data = yaml.safe_load(TOY_SPEC.read_text())
    data["problems"][0]["metric"]["direction"] = "sideways"
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["run", str(path), "--store", str(tmp_path / "s.sqlite")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert str(path) in err and "problems.0.metric.direction" in err


def test_unknown_agent_in_run_is_a_clear_error(tmp_path, capsys):
    assert main(["run", str(TOY_SPEC), "--agents", "nobody", "--store",
                 str(tmp_path / "s.sqlite")]) == 2
    assert "nobody" in capsys.readouterr().err


def test_list_prints_benchmarks_table(capsys):
    assert main(["list", "--markdown"]) == 0
    assert capsys.readouterr().out.startswith("| benchmark | paper |")


def _hostile_report(tmp_path):
    data = yaml.safe_load(TOY_SPEC.read_text())
    data["imports"] = [str(FIXTURES / "toy_problem.py")]
    # names (labels, ids) must match papergym.safe.NAME_PATTERN; free text carries the attack
    data["paper"]["title"] = f"{HOSTILE} [/] [link=javascript:alert(1)]x[/link]"
    data["description"] = f"{HOSTILE} [click](javascript:alert(1)) \x1b[31mred"
    data["problems"][0]["agents"] = ["greedy", "zero", "oracle"]
    data["problems"][0]["tiers"]["smoke"]["seeds"] = 2
    data["claims"] = [{"id": "X", "statement": f"{HOSTILE} beats zero", "problem": "reach",
                       "kind": "compare", "agent": "greedy", "baseline": "zero"}]
    path = tmp_path / "hostile.yaml"
    path.write_text(yaml.safe_dump(data))
    spec = load_spec(path)
    store = tmp_path / "h.sqlite"
    run_benchmark(spec, "smoke", store=store, workers=2, spec_path=path)
    with Store(store) as db:
        trials, rows = rows_for(spec, "smoke", db)
    return build_report(spec, "smoke", trials, rows), rows


def test_html_escapes_user_strings_and_markdown_has_provenance(tmp_path):
    report, rows = _hostile_report(tmp_path)
    page = render_html(report)
    assert HOSTILE not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<svg" in page  # the score plot
    md = render_markdown(report)
    assert "## Provenance" in md and "git:" in md and "numpy" in md
    assert "stored / expected: 12 / 12" in md
    try:
        publish(report, rows, root=tmp_path / "published")
    except ValueError as err:
        assert "smoke" in str(err)
    else:
        raise AssertionError("a smoke run must not be published")
    folder = publish(report, rows, root=tmp_path / "published", allow_smoke=True)
    assert {p.name for p in folder.iterdir()} >= {"README.md", "index.html", "trials.jsonl",
                                                   "trials.csv", "claims.json"}
    assert "[toy](toy/README.md)" in (tmp_path / "published" / "README.md").read_text()
