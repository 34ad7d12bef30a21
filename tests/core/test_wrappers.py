"""FlattenDictAction: exact maps from one Box or MultiDiscrete onto a Dict action space, and
Stable-Baselines3 PPO training through it on the two Dict-action problems."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from papergym.wrappers import FlattenDictAction

ACTIONS = spaces.Dict({"z": spaces.Box(-2.0, 2.0, (2,), np.float32), "k": spaces.Discrete(3, start=1),
                       "m": spaces.MultiDiscrete([2, 4]), "b": spaces.MultiBinary(2)})


class Recorder(gym.Env):
    """Takes any action of ACTIONS and remembers the last one."""

    observation_space = spaces.Box(0.0, 1.0, (1,), np.float32)
    action_space = ACTIONS

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(1, np.float32), {}

    def step(self, action):
        assert self.action_space.contains(action), action
        self.last = action
        return np.zeros(1, np.float32), 0.0, False, False, {}


def test_box_encoding_maps_ends_and_bins_exactly():
    env = FlattenDictAction(Recorder(), to="box")
    assert env.action_space == spaces.Box(-1.0, 1.0, (7,), np.float32)
    env.reset(seed=0)
    # in the Dict's (sorted) key order b, k, m, z: b is > 0; k takes 3 bins of [-1, 1], m 2
    # and 4; the ends of [-1, 1] are the ends of z's [-2, 2]
    env.step(np.array([0.3, -0.3, 0.0, -0.9, 0.9, -1.0, 1.0], np.float32))
    a = env.unwrapped.last
    np.testing.assert_array_equal(a["z"], [-2.0, 2.0])
    assert a["k"] == 2  # the middle bin of 3, counted from start = 1
    np.testing.assert_array_equal(a["m"], [0, 3])
    np.testing.assert_array_equal(a["b"], [1, 0])
    env.step(np.ones(7, np.float32))  # the top of every range stays inside the space
    assert env.unwrapped.last["k"] == 3 and list(env.unwrapped.last["m"]) == [1, 3]


def test_multidiscrete_encoding_keeps_choices_and_bins_the_box():
    env = FlattenDictAction(Recorder(), to="multidiscrete", bins=5)
    np.testing.assert_array_equal(env.action_space.nvec, [2, 2, 3, 2, 4, 5, 5])  # b, k, m, z
    env.reset(seed=0)
    env.step(np.array([1, 0, 2, 1, 3, 0, 4]))
    a = env.unwrapped.last
    np.testing.assert_array_equal(a["z"], [-2.0, 2.0])
    assert a["k"] == 3 and list(a["m"]) == [1, 3] and list(a["b"]) == [1, 0]
    env.action_space.seed(1)
    for _ in range(200):  # every flat action is a valid Dict action (Recorder asserts it)
        env.step(env.action_space.sample())


def test_refuses_what_it_cannot_flatten():
    class Unbounded(Recorder):
        action_space = spaces.Dict({"x": spaces.Box(-np.inf, np.inf, (1,), np.float32)})

    with pytest.raises(ValueError, match="RescaleAction"):
        FlattenDictAction(Unbounded())
    with pytest.raises(TypeError, match="needs a Dict action space"):
        FlattenDictAction(gym.make("CartPole-v1"))


def _example():
    path = Path(__file__).resolve().parents[2] / "examples" / "sb3_dict_actions.py"
    spec = importlib.util.spec_from_file_location("sb3_dict_actions", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.parametrize(("env_id", "to"), [("papergym/QAOA2Partition-v1", "box"),
                                            ("papergym/DragFFD2D-v1", "multidiscrete")])
def test_sb3_ppo_trains_a_few_hundred_steps_through_the_wrapper(env_id, to):
    example = _example()
    model = example.train(env_id, timesteps=256, to=to)
    assert model.num_timesteps == 256 and model._n_updates > 0
    env = example.make_env(env_id, to)
    obs, _ = env.reset(seed=10_000)
    action, _ = model.predict(obs, deterministic=True)
    assert env.action_space.contains(action)
    assert env.unwrapped.action_space.contains(env.env.action(action))  # a valid Dict action


def test_summarize_population_is_the_population_statistics():
    import papergym
    from papergym.wrappers import SummarizePopulation

    raw = papergym.make("papergym/StrategicCredit-v0", tier="smoke")
    env = SummarizePopulation(raw)
    assert env.observation_space.shape == (56,)  # 11 theta + 4 x 11 statistics + 1 rate
    obs, _ = env.reset(seed=0)
    obs, *_ = env.step(np.full(11, 0.5))
    x, y = raw.unwrapped.features, raw.unwrapped.y.astype(bool)
    np.testing.assert_allclose(obs[:11], 0.5)  # theta
    np.testing.assert_allclose(obs[11:22], x.mean(axis=0), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(obs[22:33], x.std(axis=0), rtol=1e-6, atol=1e-6)
    assert obs[33] == pytest.approx(y.mean())
    np.testing.assert_allclose(obs[34:45], x[y].mean(axis=0), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(obs[45:], x[~y].mean(axis=0), rtol=1e-6, atol=1e-6)
    # standard tier: 12,850 individuals x 11 features summarized by the same 56 numbers
    standard = papergym.make("papergym/StrategicCredit-v0", tier="standard")
    assert standard.observation_space["features"].shape == (12_850, 11)
    assert SummarizePopulation(standard).observation_space.shape == (56,)
