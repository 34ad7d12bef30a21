"""Gymnasium conventions across families: what gymnasium.make says for an id that is not a
Gymnasium env, and episodes that are usable at an env's defaults."""

from __future__ import annotations

import inspect

import gymnasium
import numpy as np
import pytest

import papergym
from papergym.registry import NotAGymnasiumEnv, problems


def test_gymnasium_make_on_a_task_id_says_it_is_a_task_and_how_to_use_it():
    with pytest.raises(NotAGymnasiumEnv) as err:
        gymnasium.make("papergym:papergym/MaskedDiffusionHMM-v0")
    message = str(err.value)
    assert "is a papergym Task, not a Gymnasium env" in message
    assert "papergym.make_task('papergym/MaskedDiffusionHMM-v0', tier='smoke')" in message
    assert "did you mean" not in message


def test_gymnasium_make_on_a_parallel_env_id_points_to_pettingzoo():
    parallel = [p.id for p in problems() if p.kind == "parallel_env"]
    assert parallel
    with pytest.raises(NotAGymnasiumEnv, match="PettingZoo ParallelEnv"):
        gymnasium.make(parallel[-1])


def test_every_problem_id_is_known_to_gymnasium():
    assert {p.id for p in problems()} <= set(gymnasium.registry)


def test_mdmremask_v1_defaults_give_an_episode_of_several_decisions():
    from papergym.envs.maskdiff.env import MDMRemaskEnv, MDMRemaskV1Env, decisions

    assert decisions(8) == 1  # v0's default: one decision, then the episode ends
    default_t = inspect.signature(MDMRemaskV1Env).parameters["T"].default
    assert default_t == 32 and decisions(default_t) == 8
    assert inspect.signature(MDMRemaskEnv).parameters["T"].default == 8  # v0 keeps its promise
    spec = papergym.registry.spec("papergym/MDMRemask-v1")
    assert {t: decisions(kw["T"]) for t, kw in spec.tiers.items()} == \
        {"smoke": 3, "standard": 8, "full": 18}
    assert gymnasium.registry["papergym/MDMRemask-v1"].vector_entry_point.endswith(
        ":MDMRemaskV1VectorEnv")
    env = gymnasium.make("papergym/MDMRemask-v1")  # the smoke denoiser: trained once, cached
    assert env.spec.max_episode_steps == 8 and _episode_length(env) == 8


class _Counting(gymnasium.Env):
    """Episodes of ``horizon`` steps (truncated by the env itself), the length an argument."""

    observation_space = gymnasium.spaces.Box(0.0, 1.0, (1,), np.float32)
    action_space = gymnasium.spaces.Discrete(2)

    def __init__(self, horizon: int = 5) -> None:
        self.horizon, self.t = horizon, 0

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(1, np.float32), {}

    def step(self, action):
        self.t += 1
        return np.zeros(1, np.float32), 0.0, False, self.t >= self.horizon, {}


def _episode_length(env) -> int:
    env.reset(seed=0)
    env.action_space.seed(0)
    for t in range(1, 1000):
        *_, terminated, truncated, _ = env.step(env.action_space.sample())
        if terminated or truncated:
            return t
    raise AssertionError("no episode end")


def test_max_episode_steps_named_by_attribute_follows_the_env_argument():
    from papergym.registry import register

    register("papergym/LengthProbe-v0", entry_point=_Counting, kind="env", family="fixture",
             paper="fixture", max_episode_steps="horizon")
    assert gymnasium.make("papergym/LengthProbe-v0").spec.max_episode_steps == 5
    longer = gymnasium.make("papergym/LengthProbe-v0", horizon=50)
    assert longer.spec.max_episode_steps == 50 and _episode_length(longer) == 50  # not cut at 5
    assert _episode_length(gymnasium.make("papergym/LengthProbe-v0", horizon=3)) == 3
    with pytest.raises(ValueError, match="env problems only"):
        register("papergym/LengthProbeTask-v0", entry_point=_Counting, kind="task",
                 family="fixture", paper="fixture", max_episode_steps="horizon")
