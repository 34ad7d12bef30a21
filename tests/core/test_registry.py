"""Registry: one id for envs and tasks; tiers set defaults; unknown ids are clear errors."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import papergym
from papergym.problem import EVAL_SEED_OFFSET, Budget, BudgetExceeded, EnvTask, Task


def test_make_env_and_task(toy_spec):
    env = papergym.make("papergym/FixtureReach-v0", tier="smoke", horizon=5)
    assert isinstance(env.unwrapped, gym.Env) and env.unwrapped.horizon == 5
    same = gym.make("papergym/FixtureReach-v0", horizon=5)
    assert type(same.unwrapped) is type(env.unwrapped)
    task = papergym.make_task("papergym/FixtureReach-v0", tier="smoke")
    assert isinstance(task, EnvTask) and task.eval_episodes == 4  # the smoke tier default
    assert papergym.make_task("papergym/FixtureReach-v0", tier="standard").eval_episodes == 8


def test_unknown_problem_and_tier():
    with pytest.raises(KeyError, match="registered problems"):
        papergym.make("papergym/Nope-v0")
    with pytest.raises(ValueError, match="unknown tier"):
        papergym.make("papergym/FixtureReach-v0", tier="huge")


def test_bad_ids_are_refused():
    with pytest.raises(ValueError, match="papergym/<Name>-v<N>"):
        papergym.register("Reach", entry_point="x:y", kind="env", family="f", paper="p")


def test_vector_entry_point_is_for_envs_and_reaches_gymnasium():
    import gymnasium

    with pytest.raises(ValueError, match="vector_entry_point"):
        papergym.register("papergym/NotAnEnv-v0", entry_point="x:y", kind="task", family="f",
                          paper="p", vector_entry_point="x:z")
    papergym.problems()  # the built-in families are registered
    assert gymnasium.registry["papergym/MDMRemask-v0"].vector_entry_point.endswith(":MDMRemaskVectorEnv")


def test_budget_is_enforced():
    budget = Budget(env_steps=3)
    for _ in range(3):
        budget.spend("env_steps")
    with pytest.raises(BudgetExceeded, match="env_steps.*exhausted"):
        budget.spend("env_steps")
    with pytest.raises(KeyError, match="meters"):
        budget.spend("bits")


def test_metered_env_counts_steps(toy_spec):
    task = papergym.make_task("papergym/FixtureReach-v0", tier="smoke", train_steps=5)
    budget = task.budget
    env = task.train_view(0, budget).make_env()
    env.reset(seed=0)
    for _ in range(5):
        env.step(np.zeros(1, dtype=np.float32))
    assert budget.used["env_steps"] == 5
    with pytest.raises(BudgetExceeded):
        env.step(np.zeros(1, dtype=np.float32))


def test_eval_seeds_are_disjoint_from_training_seeds():
    seeds = Task.eval_seeds(3, 50)
    assert len(set(seeds)) == 50 and min(seeds) >= EVAL_SEED_OFFSET
    assert seeds == Task.eval_seeds(3, 50) and seeds != Task.eval_seeds(4, 50)


def test_evaluate_rejects_non_policy(toy_spec):
    task = papergym.make_task("papergym/FixtureReach-v0", tier="smoke")
    with pytest.raises(TypeError, match="expects a policy"):
        task.evaluate(42, seed=0)
