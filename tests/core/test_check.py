"""``papergym check`` fails deliberately broken environments, and passes a good one."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import papergym
from papergym.check import check_problem


class Good(gym.Env):
    def __init__(self):
        self.observation_space = gym.spaces.Box(-10, 10, (2,), np.float32)
        self.action_space = gym.spaces.Box(-1, 1, (2,), np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.state = self.np_random.uniform(-1, 1, 2).astype(np.float32)
        self.t = 0
        return self.state.copy(), {}

    def _check(self, action):
        action = np.asarray(action, dtype=np.float32)
        if not np.all(np.isfinite(action)):
            raise ValueError(f"non-finite action {action}")
        return action

    def step(self, action):
        action = self._check(action)
        noise = self.np_random.normal(0, 0.1, 2)
        self.state = np.clip(self.state + 0.1 * action + noise, -10, 10).astype(np.float32)
        self.t += 1
        return self.state.copy(), float(-np.abs(self.state).sum()), False, self.t >= 30, {}


class NonDeterministic(Good):
    _global = np.random.default_rng()  # shared, unseeded: ignores reset(seed=)

    def step(self, action):
        obs, r, term, trunc, info = super().step(action)
        return obs, r + float(self._global.normal()), term, trunc, info


class WrongDtype(Good):
    def step(self, action):
        obs, *rest = super().step(action)
        return obs.astype(np.float64), *rest


class IgnoresSeed(Good):
    def reset(self, *, seed=None, options=None):
        super().reset(seed=None)  # drops the seed: every reset draws fresh entropy
        self.state = self.np_random.uniform(-1, 1, 2).astype(np.float32)
        self.t = 0
        return self.state.copy(), {}


class AcceptsNaN(Good):
    def _check(self, action):
        return np.nan_to_num(np.asarray(action, dtype=np.float32))


def _register(cls):
    problem_id = f"papergym/Check{cls.__name__}-v0"
    papergym.register(problem_id, entry_point=cls, kind="env", family="checktest", paper="-")
    return problem_id


def test_good_env_passes():
    report = check_problem(_register(Good))
    assert report.ok, report.summary()
    assert report.steps_per_second and report.steps_per_second > 0


@pytest.mark.parametrize(("broken", "failed_check"), [
    (NonDeterministic, "seed determinism"),
    (WrongDtype, "observation_space"),
    (IgnoresSeed, "seed determinism"),
    (AcceptsNaN, "bad action"),
])
def test_broken_envs_fail(broken, failed_check):
    report = check_problem(_register(broken))
    assert not report.ok
    assert any(failed_check in f for f in report.failures), report.summary()


class BrokenDefaults(Good):
    """Fine with the tier's settings, crashes on reset with its own defaults."""

    def __init__(self, size: int = 3):
        super().__init__()
        self.size = size

    def reset(self, *, seed=None, options=None):
        if self.size < 5:
            raise ValueError(f"size must be >= 5, got {self.size}")
        return super().reset(seed=seed, options=options)


def test_the_default_configuration_is_checked_as_well_as_the_tier(capsys):
    from papergym.cli import main

    problem_id = "papergym/CheckBrokenDefaults-v0"
    papergym.register(problem_id, entry_point=BrokenDefaults, kind="env", family="checktest",
                      paper="-", tiers={"smoke": {"size": 5}})
    assert check_problem(problem_id, tier="smoke").ok
    report = check_problem(problem_id, tier=None)
    assert not report.ok and report.config == "default"
    assert any("size must be >= 5" in f for f in report.failures), report.summary()
    assert main(["check", problem_id, "--steps", "20"]) == 1
    out = capsys.readouterr().out
    assert f"{problem_id} (env, default): FAIL" in out and f"{problem_id} (env, smoke): PASS" in out
