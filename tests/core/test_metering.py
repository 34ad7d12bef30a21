"""MeteredEnv charges the budget it is told to; timing metrics stay out of determinism checks."""

from __future__ import annotations

import gymnasium as gym
import pytest

from papergym.problem import (
    Budget,
    BudgetExceeded,
    EnvView,
    MeteredEnv,
    Task,
    deterministic_metrics,
)


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


def test_env_view_passes_only_the_options_the_problem_names():
    made = []

    def make(**kwargs):
        made.append(kwargs)
        return gym.make("CartPole-v1")

    view = EnvView(make, Budget(env_steps=3), seed=0, options=("randomization",))
    env = view.make_env(randomization="naive")
    assert isinstance(env, MeteredEnv) and made == [{"randomization": "naive"}]
    with pytest.raises(ValueError, match=r"\['bodies'\] cannot be chosen"):
        view.make_env(bodies="heldout")
    with pytest.raises(ValueError, match="no options"):
        EnvView(make, Budget(env_steps=3), seed=0).make_env(randomization="naive")
    assert len(made) == 1
