"""``papergym check`` on PettingZoo parallel envs: a good one passes, broken ones fail."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from pettingzoo import ParallelEnv

import papergym
from papergym.check import check_problem


class Pushers(ParallelEnv):
    """Two agents push a shared point; each is rewarded by its closeness to its own goal."""

    metadata = {"name": "pushers_v0"}

    def __init__(self, horizon: int = 25):
        self.possible_agents = ["a", "b"]
        self.horizon = horizon
        self._obs_spaces = {a: gym.spaces.Box(-5, 5, (3,), np.float32) for a in self.possible_agents}
        self._act_spaces = {a: gym.spaces.Box(-1, 1, (1,), np.float32) for a in self.possible_agents}

    def observation_space(self, agent):
        return self._obs_spaces[agent]

    def action_space(self, agent):
        return self._act_spaces[agent]

    def reset(self, seed=None, options=None):
        self.rng = np.random.default_rng(seed)
        self.agents = list(self.possible_agents)
        self.point = float(self.rng.uniform(-1, 1))
        self.goals = {a: float(self.rng.uniform(-2, 2)) for a in self.agents}
        self.t = 0
        return self._obs(), {a: {} for a in self.agents}

    def _obs(self):
        return {a: np.array([self.point, self.goals[a], self.t / self.horizon], np.float32)
                for a in self.agents}

    def _validate(self, actions):
        for agent, action in actions.items():
            if not np.all(np.isfinite(action)):
                raise ValueError(f"agent {agent}: non-finite action {action}")

    def step(self, actions):
        self._validate(actions)
        self.point = float(np.clip(self.point + 0.1 * sum(float(a[0]) for a in actions.values())
                                   + self.rng.normal(0, 0.05), -4, 4))
        self.t += 1
        rewards = {a: -abs(self.point - self.goals[a]) for a in self.agents}
        done = self.t >= self.horizon
        obs = self._obs()
        terms = {a: False for a in self.agents}
        truncs = {a: done for a in self.agents}
        infos = {a: {} for a in self.agents}
        if done:
            self.agents = []
        return obs, rewards, terms, truncs, infos


class UnseededPushers(Pushers):
    def reset(self, seed=None, options=None):
        return super().reset(seed=None, options=options)


class NaNTolerantPushers(Pushers):
    def _validate(self, actions):
        pass


@pytest.mark.parametrize(("cls", "ok", "failed_check"), [
    (Pushers, True, None),
    (UnseededPushers, False, "seed determinism"),
    (NaNTolerantPushers, False, "bad action"),
])
def test_parallel_env_checks(cls, ok, failed_check):
    problem_id = f"papergym/Check{cls.__name__}-v0"
    papergym.register(problem_id, entry_point=cls, kind="parallel_env", family="checktest",
                      paper="-")
    report = check_problem(problem_id, steps=200)
    assert report.ok is ok, report.summary()
    if failed_check:
        assert any(failed_check in f for f in report.failures), report.summary()
    else:
        assert report.steps_per_second > 0
