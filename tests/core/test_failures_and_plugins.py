"""A non-finite score is a failed trial; agents from the entry-point group are registered."""

from __future__ import annotations

import math
from importlib.metadata import EntryPoint

import pytest

import papergym
from papergym import Agent, Budget, EvalResult, Task
from papergym.agent import REGISTRY, AgentRegistry
from papergym.benchmarks.runner import run_benchmark
from papergym.benchmarks.spec import BenchmarkSpec
from papergym.leaderboard.store import Store


class EchoTask(Task):
    """Scores the number the agent returns (a stand-in for a problem whose metric diverges)."""

    id, family, paper = "papergym/FixtureEcho-v0", "echo", "-"
    metrics = {"value": "max"}

    @property
    def budget(self) -> Budget:
        return Budget(calls=1)

    def train_view(self, seed, budget):
        return seed

    def evaluate(self, artifact, seed):
        return EvalResult(metrics={"value": float(artifact)})


class Diverges(Agent):
    id, family, role, paper = "diverges", "echo", "baseline", "-"

    def solve(self, view, budget, seed):
        return math.nan if seed == 1 else float(seed)


papergym.register("papergym/FixtureEcho-v0", entry_point=EchoTask, kind="task", family="echo",
                  paper="-")


def test_nan_metric_is_a_failed_trial(tmp_path):
    spec = BenchmarkSpec.model_validate({
        "name": "echo", "family": "echo", "paper": {"key": "-", "title": "echo"},
        "problems": [{"name": "echo", "problem": "papergym/FixtureEcho-v0",
                      "metric": {"name": "value", "direction": "max"},
                      "tiers": {"smoke": {"seeds": 3}}, "agents": ["diverges"]}],
    })
    summary = run_benchmark(spec, "smoke", store=tmp_path / "e.sqlite", workers=1)
    assert summary.ran == 3 and summary.failed == 1
    with Store(tmp_path / "e.sqlite") as db:
        failed = [r for r in db.all() if not r.ok]
    assert failed[0].seed == 1 and "non-finite metrics ['value']" in failed[0].error


def test_entry_point_agents_are_loaded(monkeypatch):
    import papergym.agent as agent_module

    target = f"{__name__}:Diverges"
    fake = EntryPoint(name="diverges", value=target, group=AgentRegistry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(agent_module, "entry_points",
                        lambda group: [fake] if group == AgentRegistry.ENTRY_POINT_GROUP else [])
    registry = AgentRegistry()
    registry.load_entry_points()
    # the runner holds a stand-in, declared in a sandbox; trials import module:Class there
    stand_in = registry.get("echo/diverges")
    assert stand_in is not Diverges and stand_in.plugin_ref == target
    assert stand_in.role == Diverges.role and stand_in.code_hash() != Diverges.code_hash()
    assert REGISTRY.get("diverges", family="echo") is Diverges


def test_task_check_requires_a_metered_budget():
    from papergym.check import check_problem

    report = check_problem("papergym/FixtureEcho-v0")
    assert report.ok, report.summary()
    with pytest.raises(KeyError, match="registered problems"):
        check_problem("papergym/Missing-v0")
