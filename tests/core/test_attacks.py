"""Score-inflation attacks by plug-in agents, each asserted stopped: the cheat's row is a
failed row or scores exactly what the honest zero policy scores, the runner survives, and
every other stored row is unchanged (tests/fixtures/cheaters.py has one agent per attack)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from papergym.benchmarks.runner import run_benchmark
from papergym.benchmarks.spec import load_spec
from papergym.leaderboard.store import Store
from tests.conftest import FIXTURES, TOY_SPEC

CHEATERS = FIXTURES / "cheaters.py"
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="the agent drops to another user only "
                                                      "when the runner is root (CI is)")


def _spec(tmp_path, memory_mb=None):
    data = yaml.safe_load(TOY_SPEC.read_text())
    data["imports"] = [str(FIXTURES / "toy_problem.py")]
    data["problems"][0]["agents"] = ["zero"]
    tier = {"seeds": 1, "timeout_s": 60, "grid": {"horizon": [8]}}
    if memory_mb:
        tier["memory_mb"] = memory_mb
    data["problems"][0]["tiers"]["smoke"] = tier
    data["claims"] = []
    path = tmp_path / "attack.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_spec(path), path


def _attack(tmp_path, cls, memory_mb=None, store=None):
    """Run the zero agent and the cheater ``cls``; return (summary, {agent: row}, store)."""
    spec, path = _spec(tmp_path, memory_mb)
    store = store or tmp_path / "attack.sqlite"
    summary = run_benchmark(spec, "smoke", store=store, workers=1, spec_path=path,
                            extra_agents=[f"{CHEATERS}:{cls}"])
    with Store(store) as db:
        rows = {r.agent: r for r in db.all()}
    return summary, rows, store


@pytest.fixture
def attack_dir(monkeypatch):
    folder = Path(tempfile.mkdtemp(prefix="papergym-attack-"))
    os.chmod(folder, 0o777)  # the agent process may run as another user
    monkeypatch.setenv("PAPERGYM_ATTACK_DIR", str(folder))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _honest(rows, cheat):
    """The cheat is stopped: failed, or exactly the zero policy's score."""
    zero, row = rows["zero"], rows[cheat]
    assert zero.ok and zero.metrics["return"] < -0.1
    return (not row.ok) or row.metrics == zero.metrics


def test_monkeypatched_metric_functions_do_not_reach_the_evaluator(tmp_path):
    _, rows, _ = _attack(tmp_path, "PatchesMetrics")
    assert rows["cheat_patch_metrics"].ok and _honest(rows, "cheat_patch_metrics")


def test_the_task_is_not_in_the_agent_process(tmp_path):
    _, rows, _ = _attack(tmp_path, "WrapsEvaluate")
    row = rows["cheat_wrap_evaluate"]
    assert row.ok and _honest(rows, "cheat_wrap_evaluate") and row.metrics["return"] != 3.0


def test_a_forged_row_on_any_pipe_is_not_stored(tmp_path):
    summary, rows, _ = _attack(tmp_path, "ForgesRow")
    row = rows["cheat_forge_row"]
    assert summary.ran == 2 and not row.ok and row.metrics == {}
    assert "worker died" in row.error or "not allowed from agents" in row.error


@as_root
def test_the_store_cannot_be_opened_by_the_agent(tmp_path, attack_dir):
    spec, path = _spec(tmp_path)
    store = tmp_path / "attack.sqlite"
    run_benchmark(spec, "smoke", store=store, workers=1, spec_path=path)  # honest rows first
    with Store(store) as db:
        before = {r.key: r.metrics for r in db.all()}
    assert os.stat(store).st_mode & 0o077 == 0  # owner-only, and so are -wal and -shm
    _, rows, _ = _attack(tmp_path, "RewritesStore", store=store)
    outcome = json.loads((attack_dir / "rewrite_store.json").read_text())
    assert outcome and not any(v == "rewritten" for v in outcome.values())
    with Store(store) as db:
        after = {r.key: r.metrics for r in db.all()}
    assert {k: after[k] for k in before} == before
    assert _honest(rows, "cheat_rewrite_store")


def test_a_policy_sees_no_evaluation_env_in_its_callers(tmp_path):
    _, rows, _ = _attack(tmp_path, "ReadsCallerFrame")
    assert rows["cheat_caller_frame"].ok and _honest(rows, "cheat_caller_frame")


def test_the_budget_is_counted_by_the_problem(tmp_path, attack_dir):
    _, rows, _ = _attack(tmp_path, "RewritesBudget")
    attempts = json.loads((attack_dir / "budget.json").read_text())
    # the raw env and the budget's methods are out of reach; the dicts it reads are copies
    assert {attempts[k] for k in ("unwrapped.step", "env.env.step", "spend(-1000)",
                                  "view.budget = ...")} == {"PermissionError"}, attempts
    assert attempts["remaining"] == 64
    row = rows["cheat_budget"]
    assert not row.ok and "BudgetExceeded" in row.error
    assert row.provenance["budget"] == {} or \
        row.provenance["budget"]["env_steps"]["used"] <= 64


def test_six_gigabytes_exceed_the_memory_cap(tmp_path):
    _, rows, _ = _attack(tmp_path, "AllocatesSixGigabytes", memory_mb=2048)
    row = rows["cheat_memory"]
    assert not row.ok and "MemoryError" in row.error
    assert rows["zero"].ok  # the cap leaves room for an honest trial


def _alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_processes_spawned_by_the_agent_die_with_the_trial(tmp_path, attack_dir):
    _, rows, _ = _attack(tmp_path, "SpawnsSurvivor")
    pids = json.loads((attack_dir / "spawn.json").read_text())
    assert len(pids) == 2
    deadline = time.time() + 5
    while any(_alive(p) for p in pids) and time.time() < deadline:
        time.sleep(0.05)
    survivors = [p for p in pids if _alive(p)]
    for pid in survivors:  # never leave them behind, even when the test fails
        os.kill(pid, signal.SIGKILL)
    assert not survivors
    assert _honest(rows, "cheat_spawn")


def test_an_agent_that_kills_its_parents_does_not_stop_the_suite(tmp_path, attack_dir):
    summary, rows, _ = _attack(tmp_path, "KillsRunner")
    assert summary.ran == 2 and rows["zero"].ok  # we (the runner) are alive and recorded
    outcome = json.loads((attack_dir / "kill_runner.json").read_text())
    if os.geteuid() == 0:  # unprivileged: it may not signal the problem process or the runner
        assert set(outcome.values()) == {"PermissionError"}
        assert _honest(rows, "cheat_kill_runner")
    else:
        assert not rows["cheat_kill_runner"].ok
