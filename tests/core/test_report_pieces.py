"""The pure pieces behind the report pages: rank groups, curves across seeds, error lines,
the end-of-run summary lines."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from papergym.leaderboard.plots import axis_names, seed_curves
from papergym.leaderboard.render_html import first_line
from papergym.leaderboard.render_terminal import summary_lines
from papergym.leaderboard.scoring import AgentScore
from papergym.leaderboard.store import Row
from papergym.leaderboard.summary import BenchmarkSummary, SectionSummary, rank_groups


def _score(agent, rank, iqm, ci, role="method"):
    return AgentScore(agent=agent, role=role, agent_id=agent, tuned=None, n_ok=5, n_failed=0,
                      iqm=iqm, ci=ci, rank=rank)


def test_rank_groups_join_overlapping_intervals_to_the_best_open_group():
    sec = SimpleNamespace(scores=[
        _score("a", 1, 0.95, (0.90, 1.00)), _score("b", 2, 0.90, (0.85, 0.92)),
        _score("c", 3, 0.55, (0.50, 0.60)), _score("d", 4, 0.56, (0.55, 0.58)),
        _score("e", 5, 0.20, (0.10, 0.30)), _score("ref", None, 0.99, (0.98, 1.0), "reference"),
    ])
    assert rank_groups(sec) == {"a": 1, "b": 1, "c": 2, "d": 2, "e": 3}


def _row(seed, cell, points):
    return Row(key=f"{seed}-{cell}", benchmark="b", section="s", tier="smoke", problem_id="p",
               problem_kwargs={"cell": cell}, agent="a", agent_id="a", agent_role="method",
               agent_config={}, seed=seed, status="ok", curves={"loss_vs_round": points})


def test_curves_average_cells_per_seed_on_their_common_range():
    rows = [_row(0, 0, [[0, 1.0], [1, 2.0], [2, 3.0]]), _row(0, 1, [[1, 4.0], [2, 6.0], [3, 8.0]]),
            _row(1, 0, [[0, 2.0], [1, 2.0], [2, 2.0]]), _row(1, 1, [[1, 0.0], [2, 0.0], [3, 0.0]])]
    grid, values = seed_curves(rows, "loss_vs_round")["a"]
    assert grid.tolist() == [1.0, 2.0]  # no extrapolation past either cell's curve
    assert values.shape == (2, 2)  # seeds x grid: the band is across seeds
    np.testing.assert_allclose(values, [[3.0, 4.5], [1.0, 1.0]])
    assert axis_names("loss_vs_round") == ("round", "loss")
    assert axis_names("ess") == ("step", "ess")


def test_first_line_of_an_error_names_the_exception():
    assert first_line("Traceback (most recent call last):\n  File x\nKeyError: 'x'\n") == "KeyError: 'x'"
    assert first_line("timed out after 30 s\nmore") == "timed out after 30 s"
    assert first_line(None) == "no error recorded"


def test_summary_lines_fit_one_screen():
    sections = [SectionSummary("main", "p", "acc", "max", "fedadam", 0.925, (0.913, 0.933),
                               tied=["fedavg"]),
                SectionSummary("lsq", "p", "gap", "min", "fedavg", -1.57, (-1.62, -1.51))]
    summary = BenchmarkSummary("fedlearn", "smoke", 285, 285, 2, sections,
                               {"holds": 3, "fails": 8}, "paper claims")
    lines = summary_lines([summary], {"fedlearn": "results/fedlearn/smoke/index.html"},
                          "results/index.html")
    assert lines == [
        "fedlearn [smoke]: 285/285 trials, 2 failed",
        "  main: fedadam acc↑ 0.925 [0.913, 0.933] (tied with fedavg)",
        "  lsq: fedavg gap↓ -1.57 [-1.62, -1.51]",
        "  paper claims: 3 holds, 8 fails",
        "  report: results/fedlearn/smoke/index.html",
        "all reports: results/index.html",
    ]


def test_figures_are_drawn_once_per_distinct_input(monkeypatch, tmp_path):
    from papergym.leaderboard import plots

    monkeypatch.setenv("PAPERGYM_CACHE_DIR", str(tmp_path))
    drawn = []
    monkeypatch.setattr(plots, "curve_plot", lambda sec, name: drawn.append(name) or f"<svg>{name}")
    rows = [_row(0, 0, [[0, 1.0], [1, 2.0]]), _row(1, 0, [[0, 2.0], [1, 3.0]])]
    sec = SimpleNamespace(section=SimpleNamespace(name="s"), rows=rows)
    assert plots.figure("curve_plot", sec, "loss_vs_round") == "<svg>loss_vs_round"
    again = SimpleNamespace(section=SimpleNamespace(name="s"), rows=list(rows))  # a new report
    assert plots.figure("curve_plot", again, "loss_vs_round") == "<svg>loss_vs_round"
    assert drawn == ["loss_vs_round"]  # the second report read the first one's figure
    changed = SimpleNamespace(section=SimpleNamespace(name="s"),
                              rows=[*rows[:1], _row(1, 0, [[0, 2.0], [1, 9.0]])])
    plots.figure("curve_plot", changed, "loss_vs_round")
    assert drawn == ["loss_vs_round"] * 2  # one changed value redraws
    monkeypatch.setenv("PAPERGYM_CACHE", "off")
    plots.figure("curve_plot", again, "loss_vs_round")
    assert len(drawn) == 3
