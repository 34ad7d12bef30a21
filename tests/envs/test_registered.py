"""Every registered problem, one module (as Gymnasium's tests/envs/test_envs.py): built with no
arguments at all it resets and takes 100 random steps; `papergym check` passes on its default
configuration and on the smoke tier; its docstring carries the agreed sections."""

from __future__ import annotations

import inspect
import re
import typing
import warnings

import gymnasium
import numpy as np
import pytest

import papergym
from papergym.check import check_problem, make_default, make_default_task
from papergym.problem import Budget, Task, metric_direction
from papergym.registry import _resolve

# The shipped problems (test modules register fixtures of their own beside them).
SPECS = {s.id: s for s in papergym.problems()
         if isinstance(s.entry_point, str) and s.entry_point.startswith("papergym.envs.")}
IDS = sorted(SPECS)
ENV_IDS = [i for i in IDS if SPECS[i].kind == "env"]
PARALLEL_IDS = [i for i in IDS if SPECS[i].kind == "parallel_env"]
RANDOM_STEPS = 100

# STYLE.md's sections (## Heading, case-insensitive prefix): Gymnasium's for an env or parallel
# env, plus Tiers and Reference; a Task has no step loop, so Data and Metrics stand for the
# spaces, rewards and starting state.
ENV_SECTIONS = ("Description", "Action Space", "Observation Space", "Rewards", "Starting State",
                "Episode End", "Arguments", "Tiers", "Reference", "Version History")
TASK_SECTIONS = ("Description", "Data", "Metrics", "Episode End", "Arguments", "Tiers",
                 "Reference", "Version History")


def _random_gym_steps(env: gymnasium.Env, seed: int = 0) -> None:
    obs, _ = env.reset(seed=seed)
    assert env.observation_space.contains(obs)
    env.action_space.seed(seed)
    for _ in range(RANDOM_STEPS):
        obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        assert env.observation_space.contains(obs) and np.isfinite(reward)
        if terminated or truncated:
            obs, _ = env.reset()
    env.close()


def _random_parallel_steps(env, seed: int = 0) -> None:  # noqa: ANN001 - a PettingZoo ParallelEnv
    observations, _ = env.reset(seed=seed)
    for i, agent in enumerate(env.possible_agents):
        env.action_space(agent).seed(seed + i)
    for _ in range(RANDOM_STEPS):
        if not env.agents:
            observations, _ = env.reset()
        observations, rewards, *_ = env.step({a: env.action_space(a).sample() for a in env.agents})
        for agent, obs in observations.items():
            assert env.observation_space(agent).contains(obs)
        assert all(np.isfinite(r) for r in rewards.values())
    env.close()


@pytest.mark.parametrize("problem_id", ENV_IDS)
def test_gymnasium_make_with_no_kwargs_then_random_steps(problem_id):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # gymnasium's passive checker, reported by check
        _random_gym_steps(gymnasium.make(f"papergym:{problem_id}"))
        # papergym.make(id): the smoke tier, whose rollouts test_papergym_check_* covers
        env = papergym.make(problem_id)
        assert env.observation_space.contains(env.reset(seed=1)[0])


@pytest.mark.parametrize("problem_id", PARALLEL_IDS)
def test_parallel_env_with_no_kwargs_then_random_steps(problem_id):
    _random_parallel_steps(make_default(problem_id))
    env = papergym.make(problem_id)
    observations, _ = env.reset(seed=1)
    assert all(env.observation_space(a).contains(o) for a, o in observations.items())


@pytest.mark.parametrize("problem_id", IDS)
def test_task_builds_with_no_kwargs(problem_id):
    for task in (make_default_task(problem_id), papergym.make_task(problem_id)):
        assert isinstance(task, Task)
        assert isinstance(task.budget, Budget) and task.budget.limits
        assert task.metrics and {metric_direction(d) for d in task.metrics.values()} <= {"max", "min"}


@pytest.mark.parametrize("problem_id", IDS)
def test_papergym_check_passes_on_the_smoke_tier(problem_id):
    report = check_problem(problem_id, tier="smoke", steps=60, throughput_steps=20)
    assert report.ok, report.summary()
    if SPECS[problem_id].kind != "task":
        assert report.steps_per_second and report.steps_per_second > 0


@pytest.mark.parametrize("problem_id", IDS)
def test_papergym_check_passes_on_the_default_configuration(problem_id):
    # fewer steps: the defaults are the paper-scale settings (e.g. qaoa's Qiskit Aer sampler)
    report = check_problem(problem_id, tier=None, steps=20, throughput_steps=5)
    assert report.ok, report.summary()
    assert report.config == "default"


def documented_class(problem_id: str) -> type:
    """The class a user reads about: the entry point, or the class a factory returns."""
    target = _resolve(SPECS[problem_id].entry_point)
    if inspect.isclass(target):
        return target
    returned = typing.get_type_hints(target).get("return")
    assert inspect.isclass(returned), f"{problem_id}: factory {target.__name__} names no return class"
    return returned


@pytest.mark.parametrize("problem_id", IDS)
def test_docstring_has_the_agreed_sections(problem_id):
    cls = documented_class(problem_id)
    doc = cls.__dict__.get("__doc__") or ""
    assert doc, f"{cls.__qualname__} ({problem_id}) has no docstring of its own"
    headings = [h.strip().lower() for h in re.findall(r"^\s*## (.+)$", doc, re.M)]
    required = TASK_SECTIONS if SPECS[problem_id].kind == "task" else ENV_SECTIONS
    missing = [s for s in required if not any(h.startswith(s.lower()) for h in headings)]
    assert not missing, f"{cls.__qualname__} ({problem_id}) lacks ## {', ## '.join(missing)}"
