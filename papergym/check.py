"""``papergym check``: the one conformance command for every problem.

For a Gymnasium env: ``gymnasium.utils.env_checker.check_env``; for a PettingZoo parallel env:
``pettingzoo.test.parallel_api_test``. Then, for both: seed determinism over many steps (two
fresh instances, same seed, same seeded actions: identical observations, rewards and ends;
and a re-seeded reset of a used instance replays the same trajectory), every observation
inside its space, a bad action (non-finite or out of range) rejected with a clear
``ValueError``/``TypeError``, and a throughput probe (steps per second). A Task is checked
for construction, a metered budget and declared metrics. ``papergym check`` runs all of it on
the default configuration (no arguments at all, as ``gymnasium.make(id)`` builds it) and on
the smoke tier, or on the tiers named with ``--tier``.

The checker is tested on deliberately broken environments (tests/core/test_check.py).
"""

from __future__ import annotations

import json
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from papergym.problem import Budget, EnvTask, Task
from papergym.registry import _resolve, make, make_task
from papergym.registry import spec as problem_spec

CLEAR_ERRORS = (ValueError, TypeError, gym.error.Error)


@dataclass
class CheckReport:
    problem_id: str
    kind: str
    config: str = "smoke"  # a tier name, or "default" (the constructors' own defaults)
    passed: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    steps_per_second: float | None = None

    @property
    def ok(self) -> bool:
        return not self.failures

    def summary(self) -> str:
        lines = [f"{self.problem_id} ({self.kind}, {self.config}): {'PASS' if self.ok else 'FAIL'}"]
        lines += [f"  ok    {p}" for p in self.passed]
        lines += [f"  FAIL  {f}" for f in self.failures]
        lines += [f"  warn  {w}" for w in self.warnings]
        if self.steps_per_second is not None:
            lines.append(f"  throughput {self.steps_per_second:,.0f} steps/s")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "ok": self.ok}


def check_problem(
    problem_id: str,
    tier: str | None = "smoke",
    steps: int = 200,
    throughput_steps: int = 1000,
    make_kwargs: dict[str, Any] | None = None,
) -> CheckReport:
    """Run every conformance check on one registered problem, built with a tier's settings
    or, with ``tier=None``, with no settings at all (``gymnasium.make(id)``, the factory or
    the Task called without arguments): what a user gets who passes nothing."""
    s = problem_spec(problem_id)
    report = CheckReport(problem_id, s.kind, config=tier or "default")
    kwargs = make_kwargs or {}

    def factory() -> Any:
        if tier is None:
            return make_default(problem_id, **kwargs)
        return make(problem_id, tier=tier, **kwargs)

    if s.kind == "env":
        check_gym_env(factory, report, steps, throughput_steps)
    elif s.kind == "parallel_env":
        check_parallel_env(factory, report, steps, throughput_steps)
    if s.kind != "task" and s.task is None:
        return report
    if tier is None:
        _check_task(lambda: make_default_task(problem_id, **kwargs), report)
    else:
        _check_task(lambda: make_task(problem_id, tier=tier, **kwargs), report)
    return report


def make_default(problem_id: str, **kwargs: Any) -> Any:
    """The problem built from its constructor's defaults (no tier settings)."""
    s = problem_spec(problem_id)
    if s.kind == "env":
        return gym.make(problem_id, **kwargs)
    return _resolve(s.entry_point)(**kwargs)


def make_default_task(problem_id: str, **kwargs: Any) -> Task:
    """The problem's scoring Task built from its constructor's defaults."""
    s = problem_spec(problem_id)
    if s.kind == "task":
        return _resolve(s.entry_point)(**kwargs)
    if s.task is not None:
        return _resolve(s.task)(**kwargs)
    return EnvTask(lambda **kw: gym.make(problem_id, **kw), **kwargs)


def _attempt(report: CheckReport, name: str, fn: Any) -> Any:
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = fn()
        for w in caught:
            if issubclass(w.category, UserWarning):
                report.warnings.append(f"{name}: {w.message}")
    except Exception as err:  # noqa: BLE001 - a check reports, it does not crash
        report.failures.append(f"{name}: {type(err).__name__}: {err}")
        return None
    report.passed.append(name)
    return value


# --------------------------------------------------------------------------- gymnasium


def check_gym_env(factory: Any, report: CheckReport, steps: int, throughput_steps: int) -> None:
    from gymnasium.utils.env_checker import check_env

    def api() -> None:
        env = factory()
        try:
            check_env(env.unwrapped, skip_render_check=True)
        finally:
            env.close()

    _attempt(report, "gymnasium check_env", api)

    def in_space() -> None:
        env = factory()
        try:
            _gym_rollout(env, 11, steps, check_space=True)
        finally:
            env.close()

    _attempt(report, f"observations inside observation_space for {steps} steps", in_space)
    _attempt(report, f"seed determinism over {steps} steps (two instances)",
             lambda: _gym_same_trajectory(factory, steps))
    _attempt(report, f"re-seeded reset replays {steps} steps", lambda: _gym_reseed(factory, steps))
    _attempt(report, "bad action rejected with a clear error", lambda: _gym_bad_action(factory))
    rate = _attempt(report, "throughput probe", lambda: _gym_throughput(factory, throughput_steps))
    report.steps_per_second = rate


def _gym_rollout(
    env: gym.Env, seed: int, steps: int, check_space: bool = False
) -> list[tuple[Any, ...]]:
    env.action_space.seed(seed)
    obs, _ = env.reset(seed=seed)
    trajectory = [("reset", _freeze(obs))]
    if check_space:
        _assert_in_space(env.observation_space, obs, "reset")
    episode = 0
    for t in range(steps):
        obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        if check_space:
            _assert_in_space(env.observation_space, obs, f"step {t}")
        trajectory.append((_freeze(obs), float(reward), bool(terminated), bool(truncated)))
        if terminated or truncated:
            episode += 1
            obs, _ = env.reset(seed=seed + episode)
            trajectory.append(("reset", _freeze(obs)))
    return trajectory


def _gym_same_trajectory(factory: Any, steps: int) -> None:
    first, second = factory(), factory()
    try:
        a, b = _gym_rollout(first, 123, steps), _gym_rollout(second, 123, steps)
    finally:
        first.close()
        second.close()
    _compare_trajectories(a, b)


def _gym_reseed(factory: Any, steps: int) -> None:
    env = factory()
    try:
        a = _gym_rollout(env, 7, steps)
        b = _gym_rollout(env, 7, steps)
    finally:
        env.close()
    _compare_trajectories(a, b)


def _gym_bad_action(factory: Any) -> None:
    env = factory()
    try:
        env.reset(seed=0)
        bad = _bad_action(env.action_space)
        if bad is None:
            return
        try:
            env.step(bad)
        except CLEAR_ERRORS:
            return
        raise AssertionError(f"step() accepted the invalid action {bad!r} without an error")
    finally:
        env.close()


def _gym_throughput(factory: Any, n: int) -> float:
    env = factory()
    try:
        env.action_space.seed(0)
        actions = [env.action_space.sample() for _ in range(min(n, 256))]
        env.reset(seed=0)
        start = time.perf_counter()
        for t in range(n):
            _, _, terminated, truncated, _ = env.step(actions[t % len(actions)])
            if terminated or truncated:
                env.reset()
        return n / (time.perf_counter() - start)
    finally:
        env.close()


# --------------------------------------------------------------------------- pettingzoo


def check_parallel_env(
    factory: Any, report: CheckReport, steps: int, throughput_steps: int
) -> None:
    from pettingzoo.test import parallel_api_test

    _attempt(report, "pettingzoo parallel_api_test",
             lambda: parallel_api_test(factory(), num_cycles=max(50, steps // 4)))
    _attempt(report, f"seed determinism over {steps} steps (two instances)",
             lambda: _compare_trajectories(_pz_rollout(factory(), 123, steps),
                                           _pz_rollout(factory(), 123, steps)))

    def reseed() -> None:
        env = factory()
        _compare_trajectories(_pz_rollout(env, 7, steps), _pz_rollout(env, 7, steps))

    _attempt(report, f"re-seeded reset replays {steps} steps", reseed)
    _attempt(report, "bad action rejected with a clear error", lambda: _pz_bad_action(factory()))

    def throughput() -> float:
        env = factory()
        start = time.perf_counter()
        _pz_rollout(env, 0, throughput_steps)
        return throughput_steps / (time.perf_counter() - start)

    report.steps_per_second = _attempt(report, "throughput probe", throughput)


def _pz_rollout(env: Any, seed: int, steps: int) -> list[tuple[Any, ...]]:
    observations, _ = env.reset(seed=seed)
    trajectory: list[tuple[Any, ...]] = [("reset", _freeze(observations))]
    for agent in env.possible_agents:
        env.action_space(agent).seed(seed + env.possible_agents.index(agent))
    episode = 0
    for t in range(steps):
        if not env.agents:
            episode += 1
            observations, _ = env.reset(seed=seed + episode)
            trajectory.append(("reset", _freeze(observations)))
        actions = {a: env.action_space(a).sample() for a in env.agents}
        observations, rewards, terms, truncs, _ = env.step(actions)
        for agent, obs in observations.items():
            _assert_in_space(env.observation_space(agent), obs, f"step {t} agent {agent}")
        trajectory.append((_freeze(observations), _freeze(rewards), _freeze(terms),
                           _freeze(truncs)))
    return trajectory


def _pz_bad_action(env: Any) -> None:
    env.reset(seed=0)
    actions = {a: env.action_space(a).sample() for a in env.agents}
    victim = env.agents[0]
    bad = _bad_action(env.action_space(victim))
    if bad is None:
        return
    actions[victim] = bad
    try:
        env.step(actions)
    except CLEAR_ERRORS:
        return
    raise AssertionError(f"step() accepted the invalid action {bad!r} for {victim!r}")


# --------------------------------------------------------------------------- tasks


def _check_task(factory: Any, report: CheckReport) -> None:
    def construct() -> None:
        task = factory()
        if not isinstance(task, Task):
            raise TypeError(f"make_task returned {type(task).__name__}, not a papergym.Task")
        if not isinstance(task.budget, Budget) or not task.budget.limits:
            raise TypeError("Task.budget must be a papergym.Budget with at least one limit")
        if not task.metrics or not all(_metric_declared(d) for d in task.metrics.values()):
            raise ValueError("Task.metrics must map every metric name to 'max' or 'min', "
                             "or to (direction, low, high)")

    _attempt(report, "task builds with a metered budget and declared metrics", construct)


def _metric_declared(declaration: Any) -> bool:
    if isinstance(declaration, str):
        return declaration in ("max", "min")
    return (isinstance(declaration, tuple) and len(declaration) == 3
            and declaration[0] in ("max", "min")
            and all(b is None or isinstance(b, (int, float)) for b in declaration[1:]))


# --------------------------------------------------------------------------- helpers


def _bad_action(space: gym.Space) -> Any:
    """An action that a conforming env must refuse: NaN for boxes, out of range otherwise."""
    if isinstance(space, gym.spaces.Box):
        return np.full(space.shape, np.nan, dtype=space.dtype)
    if isinstance(space, gym.spaces.Discrete):
        return int(space.start + space.n)
    if isinstance(space, gym.spaces.MultiDiscrete):
        return np.asarray(space.nvec, dtype=np.int64) + 1
    if isinstance(space, gym.spaces.MultiBinary):
        return np.full(space.shape, 2, dtype=np.int8)
    if isinstance(space, gym.spaces.Dict):  # a valid action with one part made invalid
        for name, sub in space.spaces.items():
            bad = _bad_action(sub)
            if bad is not None:
                return {**space.sample(), name: bad}
    if isinstance(space, gym.spaces.Tuple):
        for i, sub in enumerate(space.spaces):
            bad = _bad_action(sub)
            if bad is not None:
                parts = list(space.sample())
                parts[i] = bad
                return tuple(parts)
    return None


def _assert_in_space(space: gym.Space, obs: Any, where: str) -> None:
    if not space.contains(obs):
        dtype = getattr(obs, "dtype", type(obs).__name__)
        raise AssertionError(f"observation at {where} (dtype {dtype}) is outside {space}")


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple((k, _freeze(v)) for k, v in sorted(value.items(), key=lambda kv: str(kv[0])))
    if isinstance(value, (tuple, list)):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, (np.floating, float)):
        return repr(float(value))  # NaN == NaN as text, so a deterministic NaN still matches
    return value


def _compare_trajectories(a: list[Any], b: list[Any]) -> None:
    for t, (x, y) in enumerate(zip(a, b)):
        if x != y:
            raise AssertionError(f"same seed, different trajectories from record {t} on")
    if len(a) != len(b):
        raise AssertionError("same seed, trajectories of different lengths")


def write_throughput(reports: list[CheckReport], path: str | Path) -> Path:
    """Steps/s per problem with hardware and versions: JSON at ``path``, Markdown beside it."""
    from papergym.provenance import run_provenance

    path = Path(path)
    provenance = run_provenance()
    payload = {
        "provenance": provenance,
        "problems": {r.problem_id: {"steps_per_second": r.steps_per_second, "ok": r.ok,
                                    "kind": r.kind} for r in reports},
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2, sort_keys=True))
    lines = [
        "# Environment throughput", "",
        "Generated by `papergym check --all --throughput`; random actions, one process.", "",
        f"Hardware: {provenance['processor']}, {provenance['cpu_count']} CPUs, "
        f"{provenance['platform']}, Python {provenance['python']}; git "
        f"{provenance['git_sha'][:12]}{' (dirty)' if provenance['git_dirty'] else ''}.", "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in sorted(provenance["versions"].items())),
        "", "| problem | kind | steps/s | check |", "|---|---|---|---|",
    ]
    for r in sorted(reports, key=lambda r: r.problem_id):
        rate = f"{r.steps_per_second:,.0f}" if r.steps_per_second else "n/a (task)"
        lines.append(f"| `{r.problem_id}` | {r.kind} | {rate} | {'pass' if r.ok else 'FAIL'} |")
    path.with_suffix(".md").write_text("\n".join(lines) + "\n")
    return path
