"""Score-inflation attacks by plug-in agents, each asserted stopped.

Sealed held-out data and privileges (tests/fixtures/sealed_cheaters.py): recomputing the
held-out instances from the public function of the seed, asking a view for a held-out seed
or an oracle, and a method agent returning an oracle / privileged artifact. Concurrency:
two runners on one store compute no trial twice, and a killed worker is retried once.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest
import yaml

import papergym
from papergym.agent import load_agent_file
from papergym.benchmarks.runner import run_benchmark
from papergym.benchmarks.spec import load_spec
from papergym.leaderboard.scoring import score_section
from papergym.leaderboard.store import Row, Store
from papergym.problem import set_eval_salt
from papergym.tempclean import KEEP_ENV
from tests.conftest import FIXTURES, TOY_SPEC

SEALED = FIXTURES / "sealed_cheaters.py"
PROJECT_ROOT = Path(__file__).resolve().parents[2]


def _family_spec(tmp_path: Path, problem: str, metric: str, agents: list[str],
                 name: str) -> tuple[object, Path]:
    family = papergym.spec(problem).family
    data = {
        "name": name, "family": family, "paper": {"key": "cheat", "title": "attacks"},
        "problems": [{"name": "attacked", "problem": problem,
                      "metric": {"name": metric, "direction": "max"},
                      "tiers": {"smoke": {"seeds": 1, "timeout_s": 300}}, "agents": agents}],
        "claims": [],
    }
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_spec(path), path


def _run(tmp_path, problem, metric, agents, cheaters, name):
    spec, path = _family_spec(tmp_path, problem, metric, agents, name)
    store = tmp_path / f"{name}.sqlite"
    summary = run_benchmark(spec, "smoke", store=store, workers=1, spec_path=path,
                            extra_agents=[f"{SEALED}:{c}" for c in cheaters])
    with Store(store) as db:
        return summary, {r.agent: r for r in db.all()}


def test_held_out_instances_recomputed_from_the_public_seed_function_are_useless(tmp_path):
    # Without the salt the attack works: every held-out instance is recognised and solved.
    task = papergym.make_task("papergym/PerformativeAffine-v0", tier="smoke")
    budget = task.budget
    set_eval_salt(None)
    cheater = load_agent_file(f"{SEALED}:PublicHeldOut")  # loaded as the runner loads it
    cheat = cheater().solve(task.train_view(0, budget), budget, 0)
    assert task.evaluate(cheat, 0).metrics["success"] == 1.0
    # Through the runner the held-out instances are drawn with the store's secret salt: the
    # cheat recognises none of them and scores exactly what its honest fallback scores.
    _, rows = _run(tmp_path, "papergym/PerformativeAffine-v0", "gap_reduction", ["rrm"],
                   ["PublicHeldOut", "StayFallback"], "public_held_out")
    cheat, honest = rows["public_held_out"], rows["stay_fallback"]
    assert honest.ok
    # stopped twice over: its unmetered env copy is refused in the agent process (budgets
    # bind), and were it built, it would recognise none of the sealed instances
    assert (not cheat.ok and "ProblemRefused" in cheat.error) or (
        cheat.metrics == honest.metrics and cheat.metrics["success"] == 0.0)
    salt_id = honest.provenance["eval_salt_id"]
    assert salt_id != "public" and len(salt_id) == 16
    assert (tmp_path / "public_held_out.sqlite.salt").read_text().strip() not in str(rows)


def test_method_agent_gets_no_oracle_and_no_held_out_seed(tmp_path, monkeypatch):
    log = Path(tempfile.mkdtemp(prefix="papergym-attack-")) / "oracle.log"
    os.chmod(log.parent, 0o777)  # the agent may run as another user
    monkeypatch.setenv("PAPERGYM_ATTACK_LOG", str(log))
    monkeypatch.setenv(KEEP_ENV, str(log.parent))  # the agent's report, kept past its trial
    try:
        _, rows = _run(tmp_path, "papergym/PerformativeAffine-v0", "gap_reduction",
                       ["rrm", "exact"], ["SelfDeclaredOracle"], "self_oracle")
        text = log.read_text()
    finally:
        shutil.rmtree(log.parent, ignore_errors=True)
    assert "held_out=refused oracle_in_info=False" in text  # the view gave neither
    row = rows["self_declared_oracle"]
    assert row.ok and row.metrics["oracle_access"] == 0.0 and row.metrics["success"] == 0.0
    assert row.provenance["privileged"] is False
    exact = rows["exact"]  # the reference gets the oracle: recorded, never ranked
    assert exact.metrics["oracle_access"] == 1.0 and exact.provenance["privileged"] is True


def test_privileged_artifact_of_a_method_agent_gets_no_gold_path(tmp_path):
    _, rows = _run(tmp_path, "papergym/KGQA-v0", "hits1", ["oracle"],
                   ["KGQAPrivileged"], "privileged")
    cheat = rows["privileged_gold_path"]
    assert not cheat.ok and "gold_path" in cheat.error  # it saw only the public question
    oracle = rows["oracle"]
    assert oracle.ok and oracle.metrics["hits1"] == 1.0 and oracle.provenance["privileged"]
    # a row that used a privileged mode is never ranked, whatever role it claims
    section = load_spec(tmp_path / "privileged.yaml").problems[0]
    as_method = dataclasses.replace(oracle, agent_role="method")
    scores = {s.agent: s for s in score_section(section, [as_method], reps=50)}
    assert scores["oracle"].privileged and scores["oracle"].rank is None


def test_out_of_bounds_metric_fails_the_trial(tmp_path):
    """A metric outside the bounds its problem declares (hits1 = 3) fails the trial."""
    problem = tmp_path / "inflated.py"
    problem.write_text(textwrap.dedent("""
        import papergym
        from papergym import Agent, Budget, EvalResult, Task

        class Inflated(Task):
            id, family, paper = "papergym/Inflated-v0", "inflated", "cheat"
            metrics = {"hits1": ("max", 0.0, 1.0)}
            budget = property(lambda self: Budget(calls=1))
            def train_view(self, seed, budget):
                return None
            def evaluate(self, artifact, seed):
                return EvalResult({"hits1": artifact})

        papergym.register("papergym/Inflated-v0", Inflated, kind="task", family="inflated",
                          paper="cheat")

        class Three(Agent):
            id, family, role, paper = "three", "inflated", "method", "cheat"
            def solve(self, view, budget, seed):
                return 3.0
    """))
    spec_path = tmp_path / "inflated.yaml"
    spec_path.write_text(yaml.safe_dump({
        "name": "inflated", "family": "inflated", "paper": {"key": "cheat", "title": "x"},
        "imports": [str(problem)],
        "problems": [{"name": "p", "problem": "papergym/Inflated-v0",
                      "metric": {"name": "hits1", "direction": "max"},
                      "tiers": {"smoke": {"seeds": 1}}, "agents": ["three"]}],
        "claims": []}))
    summary = run_benchmark(load_spec(spec_path), "smoke", store=tmp_path / "i.sqlite",
                            workers=1, spec_path=spec_path)
    assert summary.failed == 1 and "hits1=3 outside [0, 1]" in summary.failures[0]


# ----------------------------------------------------------------------------- concurrency


COUNTING_AGENT = """
import os, time, uuid
import numpy as np
from papergym import Agent

class Counted(Agent):
    id, family, role, paper = "counted", "fixture", "method", "mine"

    def solve(self, view, budget, seed):
        folder = os.environ["PAPERGYM_ATTACK_DIR"]
        open(os.path.join(folder, f"{seed}-{uuid.uuid4().hex}"), "w").close()
        time.sleep(0.3)
        return lambda obs: np.zeros(1, dtype=np.float32)
"""


def _toy_variant(tmp_path: Path, agents: list, seeds: int, name: str) -> Path:
    data = yaml.safe_load(TOY_SPEC.read_text())
    data["name"] = name
    data["imports"] = [str(FIXTURES / "toy_problem.py")]
    data["problems"][0]["agents"] = agents
    data["problems"][0]["tiers"]["smoke"] = {"seeds": seeds, "timeout_s": 60,
                                             "grid": {"horizon": [8]}}
    data["claims"] = []
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_two_runners_on_one_store_compute_each_trial_once(tmp_path, monkeypatch):
    agent = tmp_path / "counted.py"
    agent.write_text(COUNTING_AGENT)
    spec = _toy_variant(tmp_path, ["zero"], seeds=10, name="shared_store")
    store = tmp_path / "shared.sqlite"
    folder = Path(tempfile.mkdtemp(prefix="papergym-attack-"))
    os.chmod(folder, 0o777)
    env = {**os.environ, "PAPERGYM_ATTACK_DIR": str(folder), KEEP_ENV: str(folder)}
    command = [sys.executable, "-m", "papergym.cli", "run", str(spec), "--store", str(store),
               "--workers", "1", "--quiet", "--no-report", "--agent", f"{agent}:Counted"]
    try:
        runners = [subprocess.Popen(command, cwd=PROJECT_ROOT, env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE) for _ in range(2)]
        outputs = [r.communicate(timeout=240) for r in runners]
        assert all(r.returncode == 0 for r in runners), [e.decode() for _, e in outputs]
        solved = [p.name.split("-")[0] for p in folder.iterdir()]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert sorted(solved, key=int) == [str(s) for s in range(10)]  # each seed solved once
    with Store(store) as db:
        rows = db.all()
        assert len(rows) == 20 and all(r.ok for r in rows) and db.claims() == {}


def test_claims_skip_fresh_take_over_stale_and_never_redo_a_stored_key(tmp_path):
    with Store(tmp_path / "c.sqlite") as db:
        since = time.time()
        assert db.claim("k1", "host:1:a", since)
        assert not db.claim("k1", "host:2:b", since)  # fresh claim by another runner
        assert db.claim("k1", "host:1:a", since)  # the holder may renew it
        assert db.claim("k1", "host:2:b", since, stale_after=0.0)  # stale: taken over
        assert db.claims()["k1"][0] == "host:2:b"
        row = Row(key="k2", benchmark="b", section="s", tier="smoke", problem_id="p",
                  problem_kwargs={}, agent="a", agent_id="a", agent_role="method",
                  agent_config={}, seed=0, status="ok")
        assert db.claim("k2", "host:1:a", since)
        db.put(row)  # storing the row releases the claim
        assert "k2" not in db.claims()
        assert not db.claim("k2", "host:2:b", since)  # stored after that runner started


def test_killed_worker_is_retried_once_by_a_plain_rerun_and_its_cause_recorded(tmp_path):
    spec_path = _toy_variant(tmp_path, ["kills_worker"], seeds=1, name="killed")
    spec, store = load_spec(spec_path), tmp_path / "killed.sqlite"
    first = run_benchmark(spec, "smoke", store=store, workers=1, spec_path=spec_path)
    with Store(store) as db:
        (row,) = db.all()
    assert first.failed == 1 and row.provenance["failure_cause"] == "killed"
    assert row.provenance["attempt"] == 1 and "SIGKILL" in row.error
    second = run_benchmark(spec, "smoke", store=store, workers=1, spec_path=spec_path)
    assert second.ran == 1 and second.skipped == 0  # retried once, without --retry-failed
    with Store(store) as db:
        (row,) = db.all()
    assert row.provenance["attempt"] == 2 and row.provenance["failure_cause"] == "killed"
    third = run_benchmark(spec, "smoke", store=store, workers=1, spec_path=spec_path)
    assert third.ran == 0 and third.skipped == 1  # once only: the suite does not loop on it


@pytest.fixture(autouse=True)
def _public_salt_after():
    yield
    set_eval_salt(None)  # tests in this process see the public default again
