"""EnvView.make_vector_env: n metered envs as one vector env (all-or-none budget, the view's
option, seed and close checks) and the generic same-step autoreset vector env."""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest

from papergym.problem import (
    EVAL_SEED_OFFSET,
    Budget,
    BudgetExceeded,
    EnvView,
    MeteredEnv,
    MeteredVectorEnv,
)
from papergym.vector import SameStepVectorEnv, sequential


def _cartpole(**kwargs):
    return gym.make("CartPole-v1", **kwargs)


def test_a_vector_step_charges_n_and_never_a_part_of_it():
    budget = Budget(env_steps=10)
    vec = EnvView(_cartpole, budget, seed=0).make_vector_env(3)
    assert isinstance(vec, MeteredVectorEnv) and vec.num_envs == 3
    assert all(isinstance(env, MeteredEnv) for env in vec.envs)
    vec.reset(seed=0)
    for _ in range(3):
        obs, rewards, term, trunc, _ = vec.step(np.zeros(3, np.int64))
        assert obs.shape == (3, 4) and rewards.shape == term.shape == trunc.shape == (3,)
    assert budget.used == {"env_steps": 9}
    before = [env.unwrapped.state.copy() for env in vec.envs]
    with pytest.raises(BudgetExceeded, match="costs 3, 1 left"):
        vec.step(np.zeros(3, np.int64))
    assert budget.used == {"env_steps": 9}  # no sub-env stepped
    assert all(np.array_equal(env.unwrapped.state, b) for env, b in zip(vec.envs, before))
    vec.envs[0].step(0)  # the last step is still there for one env
    assert budget.remaining("env_steps") == 0


def test_make_vector_env_takes_only_the_options_the_problem_names():
    made = []

    def make(**kwargs):
        made.append(kwargs)
        return gym.make("CartPole-v1")

    view = EnvView(make, Budget(env_steps=3), seed=0, options=("randomization",))
    vec = view.make_vector_env(2, randomization="naive")
    assert made == [{"randomization": "naive"}] * 2 and vec.num_envs == 2
    with pytest.raises(ValueError, match=r"\['bodies'\] cannot be chosen"):
        view.make_vector_env(2, bodies="heldout")
    with pytest.raises(ValueError, match="no options"):
        EnvView(make, Budget(env_steps=3), seed=0).make_vector_env(2, randomization="naive")
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="positive integer"):
            view.make_vector_env(bad)
    assert len(made) == 2


def test_a_training_seeds_only_view_refuses_held_out_seeds_and_closes():
    view = EnvView(_cartpole, Budget(env_steps=100), seed=4, training_seeds_only=True)
    vec = view.make_vector_env(2)
    with pytest.raises(PermissionError, match="not a training seed"):
        vec.reset(seed=[1, EVAL_SEED_OFFSET + 3])
    vec.reset(seed=[1, 2])
    vec.step(np.zeros(2, np.int64))
    for _ in range(30):  # autoresets (seed None) are allowed
        vec.step(np.ones(2, np.int64))
    view.close()
    with pytest.raises(RuntimeError, match="closed"):
        vec.step(np.zeros(2, np.int64))
    with pytest.raises(RuntimeError, match="closed"):
        vec.reset(seed=[1, 2])
    with pytest.raises(RuntimeError, match="closed"):
        view.make_vector_env(2)
    assert view.budget.used == {"env_steps": 62}  # 31 vector steps of 2


def _one_by_one(envs, seeds, actions):
    """The reference: each env stepped by itself, reset (seed None) when its episode ends."""
    rows = [[env.reset(seed=s)[0] for env, s in zip(envs, seeds)]]
    finals = []
    for a in actions:
        obs, final = [], {}
        for k, env in enumerate(envs):
            ob, _, term, trunc, _ = env.step(a[k])
            if term or trunc:
                final[k] = ob
                ob, _ = env.reset()
            obs.append(ob)
        rows.append(obs)
        finals.append(final)
    return rows, finals


@pytest.mark.parametrize("vectorize", [SameStepVectorEnv, sequential])
def test_the_generic_vector_env_resets_in_the_same_step(vectorize):
    actions = np.random.default_rng(0).integers(0, 2, (80, 3))
    rows, finals = _one_by_one([_cartpole() for _ in range(3)], [5, 6, 7], actions)
    vec = vectorize([_cartpole() for _ in range(3)])
    obs, infos = vec.reset(seed=[5, 6, 7])
    assert np.array_equal(obs, np.stack(rows[0])) and infos == {}
    ended = 0
    for t, a in enumerate(actions):
        obs, _, term, trunc, infos = vec.step(a)
        done = term | trunc
        assert np.array_equal(obs, np.stack(rows[t + 1]))  # reset observations in the row
        assert sorted(np.flatnonzero(done)) == sorted(finals[t])
        if done.any():
            assert np.array_equal(infos["_final_obs"], done)
            for k in range(3):
                if done[k]:
                    assert np.array_equal(infos["final_obs"][k], finals[t][k])
                else:
                    assert infos["final_obs"][k] is None
            assert np.array_equal(infos["_final_info"], done)
        else:
            assert "final_obs" not in infos
        ended += int(done.sum())
    assert ended >= 3


def test_the_same_step_vector_env_is_gymnasiums_same_step_sync_vector_env():
    def make():
        return gym.make("CartPole-v1", max_episode_steps=12)  # truncations and terminations

    ours = SameStepVectorEnv([make() for _ in range(3)])
    theirs = gym.vector.SyncVectorEnv([make for _ in range(3)], autoreset_mode="SameStep")
    assert pickle.dumps(ours.reset(seed=3)) == pickle.dumps(theirs.reset(seed=3))
    ends = np.zeros(2, int)
    for a in np.random.default_rng(1).integers(0, 2, (60, 3)):
        mine, gym_step = ours.step(a), theirs.step(a)
        assert pickle.dumps(mine) == pickle.dumps(gym_step)  # arrays, dtypes, infos, masks
        ends += [mine[2].sum(), mine[3].sum()]
    assert (ends > 0).all()
