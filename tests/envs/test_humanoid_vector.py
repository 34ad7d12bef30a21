"""XEmbodiedVectorEnv: the physics of all sub-envs on a thread pool, with results bit for bit
those of stepping the same envs one by one (same-step autoreset), metered by the view, and
usable from a sandboxed agent."""

from __future__ import annotations

import pickle

import gymnasium as gym
import numpy as np
import pytest

import papergym
from papergym import Agent
from papergym.envs.humanoid.env import XEmbodiedHumanoidEnvV1, XEmbodiedWalkerEnvV2
from papergym.envs.humanoid.vector import XEmbodiedVectorEnv
from papergym.problem import BudgetExceeded, MeteredEnv

N = 4
KWARGS = {"pool_size": 3, "max_steps": 20, "push_interval_s": 0.1}  # pushes draw from np_random
ENVS = {"walker": XEmbodiedWalkerEnvV2, "humanoid": XEmbodiedHumanoidEnvV1}
STEPS = {"walker": 60, "humanoid": 90}  # both kinds of episode end, on both


def _envs(kind="walker"):  # bare envs, as a view builds them under its metering
    kwargs = {**KWARGS, "max_steps": 40} if kind == "humanoid" else KWARGS
    return [ENVS[kind](**kwargs) for _ in range(N)]


def _actions(kind="walker"):
    shape = (STEPS[kind], N, 13 if kind == "walker" else 32)
    return np.random.default_rng(0).uniform(-1.2, 1.2, shape).astype(np.float32)


def _one_by_one(envs, actions):
    """The reference: each env stepped by itself; an ended episode's last observation and info
    kept, then the env reset with seed None (its own random stream goes on)."""
    first = [env.reset(seed=10 + k) for k, env in enumerate(envs)]
    steps = []
    for a in actions:
        row = []
        for k, env in enumerate(envs):
            ob, r, term, trunc, info = env.step(a[k])
            final = None
            if term or trunc:
                final = (ob, info)
                ob, info = env.reset()
            row.append((ob, r, term, trunc, info, final))
        steps.append(row)
    return first, steps


def _same(a, b):
    return pickle.dumps(a) == pickle.dumps(b)


@pytest.mark.parametrize("threads", [1, 2, 3])
@pytest.mark.parametrize("kind", ["walker", "humanoid"])
def test_threaded_physics_gives_the_one_by_one_results_bit_for_bit(threads, kind):
    actions = _actions(kind)
    first, steps = _one_by_one(_envs(kind), actions)
    vec = XEmbodiedVectorEnv(_envs(kind), threads=threads)
    assert vec.threads == threads and sum(map(len, vec._chunks)) == N
    obs, infos = vec.reset(seed=[10 + k for k in range(N)])
    assert np.array_equal(obs, np.stack([o for o, _ in first]))
    assert _same(infos["privileged"], np.stack([i["privileged"] for _, i in first]))
    terminated = truncated = 0
    for t, a in enumerate(actions):
        obs, rew, term, trunc, infos = vec.step(a)
        row = steps[t]
        assert np.array_equal(obs, np.stack([s[0] for s in row]))
        assert rew.dtype == np.float64 and np.array_equal(rew, [s[1] for s in row])
        assert np.array_equal(term, [s[2] for s in row])
        assert np.array_equal(trunc, [s[3] for s in row])
        for key in ("privileged", "estimator_target", "n_actuated", "body"):
            assert _same(infos[key], np.array([s[4][key] for s in row], dtype=infos[key].dtype))
        done = term | trunc
        # a reset's info has no reward terms
        assert np.array_equal(infos.get("_reward_terms", np.zeros(N, bool)), ~done)
        if done.any():
            for k in range(N):
                final = row[k][5]
                if final is None:
                    assert infos["final_obs"][k] is None
                    continue
                assert np.array_equal(infos["final_obs"][k], final[0])
                for key in ("privileged", "estimator_target"):
                    assert np.array_equal(infos["final_info"][key][k], final[1][key])
                assert infos["final_info"]["reward_terms"]["_" + next(iter(
                    final[1]["reward_terms"]))][k]
        terminated += int(term.sum())
        truncated += int(trunc.sum())
    assert terminated > 0 and truncated > 0  # both kinds of episode end were crossed
    vec.close()


def test_the_vector_env_matches_gymnasiums_same_step_sync_vector_env():
    """Infos exactly as gymnasium stacks them (keys, masks, dtypes, final_info nesting)."""
    actions = _actions()
    ours = XEmbodiedVectorEnv(_envs(), threads=2)
    theirs = gym.vector.SyncVectorEnv([lambda e=e: e for e in _envs()], autoreset_mode="SameStep")
    assert _same(ours.reset(seed=7), theirs.reset(seed=7))
    for a in actions:
        assert _same(ours.step(a), theirs.step(a))


def test_only_bare_or_metered_envs_are_vectorized():
    with pytest.raises(TypeError, match="would be bypassed"):
        XEmbodiedVectorEnv([papergym.make("papergym/XEmbodiedWalker-v2", **KWARGS)])
    with pytest.raises(ValueError, match="positive integer"):
        XEmbodiedVectorEnv(_envs(), threads=0)


def test_the_training_view_meters_a_vector_step_all_or_nothing():
    task = papergym.make_task("papergym/XEmbodiedWalker-v2", tier="smoke", pool_size=2,
                              train_steps=10, heldout=["walker2d_v5"])
    budget = task.budget
    view = task.train_view(0, budget)
    vec = view.make_vector_env(4, randomization="naive")
    assert isinstance(vec.unwrapped, XEmbodiedVectorEnv)
    assert all(isinstance(env, MeteredEnv) for env in vec.envs)
    vec.reset(seed=0)
    vec.step(np.zeros((4, 13), np.float32))
    vec.step(np.zeros((4, 13), np.float32))
    assert budget.used == {"env_steps": 8}
    with pytest.raises(BudgetExceeded):
        vec.step(np.zeros((4, 13), np.float32))
    assert budget.used == {"env_steps": 8}
    assert all(env.unwrapped._steps == 2 for env in vec.envs)  # none stepped
    view.close()
    with pytest.raises(RuntimeError, match="closed"):
        vec.step(np.zeros((4, 13), np.float32))
    assert vec.unwrapped._pool._shutdown  # the view's close stopped the physics threads


def test_a_finetune_view_resets_only_on_training_seeds():
    task = papergym.make_task("papergym/XEmbodiedWalker-v2", tier="smoke", pool_size=2,
                              heldout=["walker2d_v5"], finetune_steps=8)
    view = task.finetune_view("walker2d_v5", 0)
    vec = view.make_vector_env(2)
    assert isinstance(vec.unwrapped, XEmbodiedVectorEnv)
    with pytest.raises(PermissionError, match="not a training seed"):
        vec.reset(seed=[0, papergym.problem.EVAL_SEED_OFFSET])


class _VectorProbe(Agent):
    id, family, role, paper = "vector_probe", "isolation_test", "baseline", "-"

    def solve(self, view, budget, seed):
        vec = view.make_vector_env(2)
        obs, infos = vec.reset(seed=[1, 2])
        out = {"reset": (type(obs).__name__, obs.shape, sorted(infos)),
               "mode": str(vec.metadata["autoreset_mode"])}
        for name, attempt in [("env", lambda: vec.env),
                              ("raw_call", lambda: vec.unwrapped.call("step", 0)),
                              ("raw_pool", lambda: vec.unwrapped._pool)]:
            try:
                attempt()
                out[name] = "allowed"
            except Exception as err:  # noqa: BLE001
                out[name] = type(err).__name__
        ends = []
        for _ in range(12):
            obs, rew, term, trunc, infos = vec.step(np.zeros((2, 13), np.float32))
            if (term | trunc).any():
                ends.append((type(infos["final_obs"]).__name__, infos["final_obs"][0].shape,
                             infos["final_info"]["privileged"].shape))
        out["step"] = (obs.shape, rew.dtype.str, term.dtype.str, infos["privileged"].shape)
        out["ends"] = ends
        out["remaining"] = budget.remaining("env_steps")
        return out


def test_a_vector_env_works_across_the_sandbox():
    from papergym.isolation import AgentProcess, Limits

    task = papergym.make_task("papergym/XEmbodiedWalker-v2", tier="smoke", pool_size=2,
                              train_steps=30, max_steps=5, heldout=["walker2d_v5"])
    budget = task.budget
    sandbox = AgentProcess(_VectorProbe, Limits(memory_mb=4096))
    sandbox.start()
    try:
        out = sandbox.solve(task.train_view(0, budget), budget, 0)
    finally:
        sandbox.close()
    assert out["reset"][0] == "ndarray" and out["reset"][1] == out["step"][0]
    assert "privileged" in out["reset"][2] and "_privileged" in out["reset"][2]
    assert "SameStep" in out["mode"] or "SAME_STEP" in out["mode"]
    assert out["env"] == "PermissionError"  # the wrapper's way to the unmetered vector env
    assert out["raw_call"] != "allowed" and out["raw_pool"] == "AttributeError"
    assert out["step"][1:3] == ("<f8", "|b1") and out["step"][3][0] == 2
    assert out["ends"] and all(e[0] == "ndarray" and e[2][0] == 2 for e in out["ends"])
    assert out["remaining"] == 30 - 24 and budget.used["env_steps"] == 24  # counted here
