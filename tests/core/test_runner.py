"""The runner end to end on the toy benchmark: resume, failures, determinism, plug-ins, SIGKILL."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import yaml

from papergym.benchmarks.runner import expand_trials, rows_for, run_benchmark
from papergym.benchmarks.spec import load_spec
from papergym.leaderboard.store import Store
from papergym.problem import salt_path
from tests.conftest import FIXTURES, TOY_SPEC

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def _spec_with(tmp_path, agents, seeds=2, timeout_s=30, grid=None, name="toy_variant"):
    data = yaml.safe_load(TOY_SPEC.read_text())
    data["name"] = name
    data["imports"] = [str(FIXTURES / "toy_problem.py")]
    section = data["problems"][0]
    section["agents"] = agents
    section["tiers"]["smoke"] = {"seeds": seeds, "timeout_s": timeout_s,
                                 "grid": grid or {"horizon": [8]}}
    data["claims"] = []
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_spec(path), path


def test_second_run_executes_nothing(toy_spec, tmp_path):
    store = tmp_path / "r.sqlite"
    first = run_benchmark(toy_spec, "smoke", store=store, workers=2, spec_path=TOY_SPEC)
    assert first.ran == first.total == 24 and first.failed == 0
    second = run_benchmark(toy_spec, "smoke", store=store, workers=2, spec_path=TOY_SPEC)
    assert second.ran == 0 and second.skipped == 24


def test_same_key_same_metrics_across_worker_counts(toy_spec, tmp_path):
    run_benchmark(toy_spec, "smoke", store=tmp_path / "a.sqlite", workers=1, spec_path=TOY_SPEC)
    # the store's salt seals its held-out draws; copied, the other store reproduces them
    shutil.copy(salt_path(tmp_path / "a.sqlite"), salt_path(tmp_path / "b.sqlite"))
    run_benchmark(toy_spec, "smoke", store=tmp_path / "b.sqlite", workers=2, spec_path=TOY_SPEC)
    with Store(tmp_path / "a.sqlite") as a, Store(tmp_path / "b.sqlite") as b:
        rows_a = {r.key: r.metrics for r in a.all()}
        rows_b = {r.key: r.metrics for r in b.all()}
    assert rows_a == rows_b and len(rows_a) == 24


def test_faulty_agents_become_failed_rows_and_the_suite_goes_on(tmp_path):
    # 4 s: room for the agent process's start-up on a loaded machine, short for the hang
    spec, path = _spec_with(tmp_path, ["greedy", "crash", "hang", "nan", "overspend"],
                            seeds=1, timeout_s=4)
    store = tmp_path / "f.sqlite"
    started = time.perf_counter()
    summary = run_benchmark(spec, "smoke", store=store, workers=2, spec_path=path)
    assert time.perf_counter() - started < 20
    assert summary.ran == 5 and summary.failed == 4
    with Store(store) as db:
        errors = {r.agent: r.error for r in db.all() if not r.ok}
        ok = [r for r in db.all() if r.ok]
    assert [r.agent for r in ok] == ["greedy"]
    assert "always crashes" in errors["crash"]
    assert "TimeoutError" in errors["hang"]
    assert "ValueError" in errors["nan"] and "finite" in errors["nan"]
    assert "BudgetExceeded" in errors["overspend"]
    again = run_benchmark(spec, "smoke", store=store, workers=2, spec_path=path)
    assert again.ran == 0  # failures are results too; --retry-failed re-runs them


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs two CPUs to pin two workers to")
def test_one_worker_per_cpu_pins_each_worker_and_its_agent_to_its_cpu(tmp_path):
    spec, path = _spec_with(tmp_path, ["cpus"], seeds=4)
    allowed = os.sched_getaffinity(0)
    two = set(sorted(allowed)[:2])
    seen = {}
    os.sched_setaffinity(0, two)  # a runner on a 2-CPU machine
    try:
        for label, workers, pin in (("pinned", 2, True), ("--no-pin", 2, False),
                                    ("fewer workers", 1, True)):
            store = tmp_path / f"{workers}-{pin}.sqlite"
            run_benchmark(spec, "smoke", store=store, workers=workers, spec_path=path,
                          executor_options={"pin": pin})
            with Store(store) as db:
                seen[label] = [re.search(r"agent CPUs (\[[\d, ]*\])", r.error)[1]
                               for r in db.all()]
    finally:
        os.sched_setaffinity(0, allowed)
    # each agent on its worker's one CPU; the two workers on the two CPUs
    assert len(seen["pinned"]) == 4 and set(seen["pinned"]) == {f"[{cpu}]" for cpu in two}
    # unpinned: wherever the runner may run
    assert set(seen["--no-pin"]) == set(seen["fewer workers"]) == {str(sorted(two))}


def test_code_change_rekeys_trials(toy_spec):
    trials = expand_trials(toy_spec, "smoke")
    assert len({t.key for t in trials}) == len(trials)
    changed = expand_trials(toy_spec.model_copy(), "smoke", seeds=4)
    assert {t.key for t in trials} < {t.key for t in changed}


def test_plugin_agent_is_ranked_beside_builtins(toy_spec, tmp_path):
    plugin = tmp_path / "plugin_agent.py"
    plugin.write_text(textwrap.dedent("""
        import numpy as np
        from papergym import Agent

        class Halfway(Agent):
            id, family, role, paper = "plugin_half", "fixture", "method", "mine"

            def solve(self, view, budget, seed):
                return lambda obs: np.array([0.5 * (obs[1] - obs[0])], dtype=np.float32)
    """))
    store = tmp_path / "p.sqlite"
    ref = f"{plugin}:Halfway"
    run_benchmark(toy_spec, "smoke", store=store, workers=2, extra_agents=[ref],
                  spec_path=TOY_SPEC)
    from papergym.leaderboard.report import build_report

    with Store(store) as db:
        trials, rows = rows_for(toy_spec, "smoke", db, extra_agents=[ref])
    report = build_report(toy_spec, "smoke", trials, rows)
    scores = {s.agent: s for s in report.sections[0].scores}
    assert scores["plugin_half"].rank is not None and scores["plugin_half"].n_ok == 6
    assert scores["zero"].rank > scores["plugin_half"].rank


def _papergym(*args, **kwargs):
    return subprocess.Popen([sys.executable, "-m", "papergym.cli", *args], cwd=PROJECT_ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)


def test_sigkill_mid_suite_then_resume_loses_and_repeats_nothing(tmp_path):
    spec, path = _spec_with(tmp_path, [{"id": "slow", "config": {"seconds": 0.25}}], seeds=12,
                            name="killable")
    store = tmp_path / "k.sqlite"
    proc = _papergym("run", str(path), "--store", str(store), "--workers", "1", "--quiet",
                     "--no-report")
    deadline = time.time() + 30
    done_before: dict[str, float] = {}
    while time.time() < deadline:
        if store.exists():
            with Store(store) as db:
                done_before = {r.key: r.created for r in db.all()}
            if len(done_before) >= 3:
                break
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert 3 <= len(done_before) < 12, "the kill must land mid-suite"
    with Store(store) as db:
        done_before = {r.key: r.created for r in db.all()}
    rerun = _papergym("run", str(path), "--store", str(store), "--workers", "1", "--quiet",
                      "--no-report")
    out, err = rerun.communicate(timeout=60)
    assert rerun.returncode == 0, err.decode()
    assert f"{len(done_before)} already stored, ran {12 - len(done_before)}" in out.decode()
    with Store(store) as db:
        after = {r.key: r.created for r in db.all()}
    assert len(after) == 12
    assert all(after[k] == created for k, created in done_before.items())  # none repeated


@pytest.mark.parametrize("workers", [1])
def test_progress_and_report_written(toy_spec, tmp_path, workers):
    out_dir = tmp_path / "out"
    proc = _papergym("run", str(TOY_SPEC), "--store", str(tmp_path / "s.sqlite"), "--workers",
                     str(workers), "--out", str(out_dir), env={**os.environ, "COLUMNS": "160"})
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    text = out.decode()
    assert "ran 24 (0 failed)" in text and "holds" in text
    assert (out_dir / "toy" / "smoke" / "leaderboard.md").is_file()
    assert (out_dir / "toy" / "smoke" / "index.html").is_file()


def test_one_key_in_two_sections_runs_once_and_shows_in_both(tmp_path):
    data = yaml.safe_load(TOY_SPEC.read_text())
    data["name"] = "twins"
    data["imports"] = [str(FIXTURES / "toy_problem.py")]
    first = data["problems"][0]
    first["tiers"] = {"smoke": {"seeds": 2, "grid": {"horizon": [8]}}}
    first["agents"] = ["greedy", "zero"]
    first["metric"].pop("normalize")
    second = {**first, "name": "again", "agents": [{"id": "greedy", "label": "greedy_again"}]}
    data["problems"] = [first, second]
    data["claims"] = []
    path = tmp_path / "twins.yaml"
    path.write_text(yaml.safe_dump(data))
    spec = load_spec(path)
    store = tmp_path / "twins.sqlite"
    summary = run_benchmark(spec, "smoke", store=store, workers=1, spec_path=path)
    assert summary.total == 6 and summary.ran == 4  # greedy's two trials run once each
    with Store(store) as db:
        _, rows = rows_for(spec, "smoke", db)
    placed = sorted((r.section, r.agent) for r in rows)
    assert placed == [("again", "greedy_again")] * 2 + [("reach", "greedy")] * 2 + \
        [("reach", "zero")] * 2


def test_problem_info_is_kept_in_the_row_and_must_be_json(toy_spec):
    from papergym.benchmarks.runner import check_result, make_row
    from papergym.problem import EvalResult

    trial = expand_trials(toy_spec, "smoke")[0]
    task = type("T", (), {"check_metric_bounds": lambda self, metrics: None})()
    info = {"tuning": [{"key": "a", "rmse": 1.5}], "tuned": "a"}
    result = EvalResult(metrics={"score": 1.0}, info=info)
    check_result(task, trial, result)
    assert make_row(trial, "ok", result, None, {}).provenance["problem_info"] == info
    bare = EvalResult(metrics={"score": 1.0})
    assert "problem_info" not in make_row(trial, "ok", bare, None, {}).provenance
    with pytest.raises(TypeError, match="not JSON"):
        check_result(task, trial, EvalResult(metrics={"score": 1.0}, info={"bad": object()}))
    with pytest.raises(TypeError, match="not JSON"):
        check_result(task, trial, EvalResult(metrics={"score": 1.0}, info={"nan": float("nan")}))
