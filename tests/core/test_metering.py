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


def test_an_adaptation_view_meters_resets_on_training_seeds_and_closes():
    from papergym.problem import EVAL_SEED_OFFSET, adapted

    kept = {}

    class Learner:
        def __call__(self, observation):
            return 0

        def adapt(self, view, budget, seed):
            env = kept["env"] = view.make_env()
            with pytest.raises(PermissionError, match="not a training seed"):
                env.reset(seed=EVAL_SEED_OFFSET + 3)  # a held-out episode's seed range
            env.reset(seed=seed)
            while budget.remaining("env_steps") > 0:
                _, _, term, trunc, _ = env.step(0)
                if term or trunc:
                    env.reset()
            with pytest.raises(BudgetExceeded):
                env.step(0)
            return lambda observation: 1

    view = EnvView(lambda: gym.make("CartPole-v1"), Budget(env_steps=7), seed=4,
                   training_seeds_only=True)
    policy = adapted(Learner(), view, seed=4)
    assert policy(None) == 1 and view.budget.used == {"env_steps": 7}
    with pytest.raises(RuntimeError, match="closed"):  # what the agent kept cannot step on
        kept["env"].reset(seed=0)
    with pytest.raises(RuntimeError, match="closed"):
        view.make_env()
    zero_shot = Learner.__call__  # an artifact without adapt() is scored as it is
    plain = EnvView(lambda: gym.make("CartPole-v1"), Budget(env_steps=7), seed=4)
    assert adapted(zero_shot, plain, seed=4) is zero_shot and plain.budget.used == {"env_steps": 0}
