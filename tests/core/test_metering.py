"""MeteredEnv charges the budget it is told to; timing metrics stay out of determinism checks."""

from __future__ import annotations

import gymnasium as gym
import pytest

from papergym.problem import Budget, BudgetExceeded, MeteredEnv, Task, deterministic_metrics


def test_metered_env_charges_the_named_budget():
    budget = Budget(deployments=2)
    env = MeteredEnv(gym.make("CartPole-v1"), budget, name="deployments")
    env.reset(seed=0)
    env.step(0)
    env.step(1)
    assert budget.used == {"deployments": 2}
    with pytest.raises(BudgetExceeded):
        env.step(0)
    default = MeteredEnv(gym.make("CartPole-v1"), Budget(env_steps=5))
    default.reset(seed=0)
    default.step(0)
    assert default.budget.used == {"env_steps": 1}


def test_deterministic_metrics_drop_the_timings_a_task_marks():
    class Timed(Task):
        metrics = {"score": "max", "agent_seconds": "min"}
        nondeterministic_metrics = frozenset({"agent_seconds"})

    assert deterministic_metrics(Timed, {"score": 1.0, "agent_seconds": 0.3}) == {"score": 1.0}
    assert deterministic_metrics(Task, {"score": 1.0}) == {"score": 1.0}
