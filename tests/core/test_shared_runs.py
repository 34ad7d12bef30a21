"""Shared agent runs (papergym.problem.SharedRuns): memoized per agent identity, which the
harness sets and an agent cannot choose, so one agent can neither read nor plant another's run."""

from __future__ import annotations

from pathlib import Path

import pytest

from papergym.benchmarks.runner import execute_trial, expand_trials
from papergym.problem import SharedRuns, Task

CODE = (Path(__file__),)


def counting_build(counter: list[str], value: str):
    def build() -> str:
        counter.append(value)
        return value
    return build


def test_a_run_is_built_once_per_agent_and_key():
    built: list[str] = []
    mine = SharedRuns("family/mine@0123456789abcdef")
    setting = {"budget": 10}
    assert mine.get("test/shared", "stage-a", setting, counting_build(built, "A"), CODE) == "A"
    assert mine.get("test/shared", "stage-a", setting, counting_build(built, "again"), CODE) == "A"
    assert built == ["A"]
    # another setting of the problem is another run
    assert mine.get("test/shared", "stage-a", {"budget": 20}, counting_build(built, "B"), CODE) == "B"


def test_another_agent_with_the_same_key_cannot_read_or_plant_the_run():
    built: list[str] = []
    setting = {"budget": 10}
    planted = SharedRuns("plugin/evil.py:Evil@fedcba9876543210")
    planted.get("test/isolated", "family/mine-stage-a", setting, counting_build(built, "garbage"), CODE)
    victim = SharedRuns("family/mine@0123456789abcdef")
    got = victim.get("test/isolated", "family/mine-stage-a", setting, counting_build(built, "honest"), CODE)
    assert got == "honest" and built == ["garbage", "honest"]
    # a new code hash of the same agent is a new run
    changed = SharedRuns("family/mine@1111111111111111")
    changed.get("test/isolated", "family/mine-stage-a", setting, counting_build(built, "new"), CODE)
    assert built[-1] == "new"


def test_without_an_identity_nothing_is_shared_and_bad_keys_are_refused():
    built: list[str] = []
    anonymous = SharedRuns()
    for _ in range(2):
        anonymous.get("test/anon", "k", {}, counting_build(built, "x"), CODE)
    assert built == ["x", "x"]
    with pytest.raises(TypeError, match="non-empty string"):
        anonymous.get("test/anon", "", {}, counting_build(built, "x"), CODE)


def test_the_runner_sets_the_identity_from_the_trial_not_the_agent(toy_spec, monkeypatch):
    seen: list[tuple[str | None, str | None]] = []
    original = Task.set_agent_role

    def spy(self, role, identity=None):
        seen.append((role, identity))
        original(self, role, identity)
        assert self.shared_runs.agent == identity

    monkeypatch.setattr(Task, "set_agent_role", spy)
    trial = expand_trials(toy_spec, "smoke")[0]
    row = execute_trial(trial)
    assert row.status == "ok", row.error
    assert seen == [(trial.agent_role, f"{trial.agent_ref}@{trial.agent_hash}")]
