"""Gymnasium conventions across families: what gymnasium.make says for an id that is not a
Gymnasium env, and episodes that are usable at an env's defaults."""

from __future__ import annotations

import inspect

import gymnasium
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
