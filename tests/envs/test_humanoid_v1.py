"""XEmbodiedWalker-v1: the v1 task (slow walking under pushes), the plateau rule of the
specialist reference and the interval the problem reports around its gap over a = 0."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import papergym
from papergym.envs.humanoid import reference as ref
from papergym.envs.humanoid.env import XEmbodiedWalkerEnv, XEmbodiedWalkerEnvV1
from papergym.envs.humanoid.task import paired_interval, zero_policy

TINY_PPO = {"n_steps": 64, "batch_size": 32, "n_epochs": 1}


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERGYM_CACHE_DIR", str(tmp_path))


def test_v1_defaults_with_no_kwargs():
    env = papergym.make("papergym/XEmbodiedWalker-v1")
    inner = env.unwrapped
    assert isinstance(inner, XEmbodiedWalkerEnvV1)
    assert (inner.task, inner.v_max, inner.push_interval_s, inner.push_dv) == ("walk", 0.5, 2.0, 1.0)
    commands = []
    for seed in range(20):
        env.reset(seed=seed)
        commands.append(inner._command[0])
    assert 0.0 <= min(commands) and max(commands) <= 0.5 and np.std(commands) > 0.05
    with pytest.raises(ValueError, match="XEmbodiedWalker-v1"):
        env.step(np.full(13, np.nan))


def test_pushes_change_the_trajectory_only_after_the_first_push():
    """The first push comes after 2 s x U[0.5, 1.5] = 50-150 control steps: the same seed with
    and without pushes agrees before step 50 and not after step 150."""
    def heights(push):
        env = XEmbodiedWalkerEnvV1(bodies=["nominal_legs"], push_interval_s=push, max_steps=400)
        env.reset(seed=3)
        out = []
        for _ in range(160):
            env.step(np.zeros(13, np.float32))
            out.append(env.data.qvel[env.body.root_x_dof])
        return np.array(out)

    pushed, calm = heights(2.0), heights(0.0)
    np.testing.assert_array_equal(pushed[:49], calm[:49])
    assert np.max(np.abs(pushed[49:] - calm[49:])) > 0.05


def _validator(values):
    it = iter(values)
    return lambda policy: next(it)


def test_plateau_rule_stops_after_two_stale_chunks_and_keeps_the_best():
    make = lambda: XEmbodiedWalkerEnvV1(bodies=["walker2d_v5"], max_steps=30)  # noqa: E731
    # 5.05 beats 5 but by less than 2%: best moves to chunk 3, stale 1; 4.0: stale 2 -> stop
    run = ref.train_to_plateau(make, 64 * 10, 0, _validator([1.0, 5.0, 5.05, 4.0, 9.0]),
                               chunk=64, patience=2, min_gain=0.02, hyper=TINY_PPO)
    assert run.steps == 4 * 64 and run.selected_at == 3 * 64
    assert [v for _, v in run.curve] == [1.0, 5.0, 5.05, 4.0]
    # always improving: the cap stops it
    run = ref.train_to_plateau(make, 64 * 3, 0, _validator([1.0, 2.0, 3.0, 4.0]), chunk=64,
                               hyper=TINY_PPO)
    assert run.steps == 3 * 64 and run.selected_at == 3 * 64
    obs, _ = make().reset(seed=0)
    action = run.policy(obs)
    assert action.shape == (13,) and np.isfinite(action).all()


def test_paired_interval_matches_scipy():
    rng = np.random.default_rng(0)
    x, y = rng.normal(3, 2, 9), rng.normal(1, 2, 9)
    mean, low, high = paired_interval(x, y)
    ci = stats.ttest_rel(x, y).confidence_interval(0.95)
    assert mean == pytest.approx(np.mean(x - y))
    assert (low, high) == pytest.approx((ci.low, ci.high))


def test_v1_task_reports_the_reference_interval_per_body():
    task = papergym.make_task("papergym/XEmbodiedWalker-v1", tier="smoke", max_steps=30,
                              specialist_steps=128, specialist_chunk=64, reference_episodes=3,
                              specialist=TINY_PPO)
    result = task.evaluate(zero_policy(13), 0)
    (unit,) = result.units
    assert unit["instance"] == "walker2d_v5" and unit["score"] == 0.0
    assert unit["reference_gap_low"] <= unit["reference_gap"]
    assert unit["specialist_steps"] in (64.0, 128.0)
    assert result.metrics["reference_gap_low"] == unit["reference_gap_low"]


def test_v0_is_unchanged_by_v1():
    env = XEmbodiedWalkerEnv()
    assert (env.task, env.v_max, env.push_interval_s) == ("walk", 1.5, 0.0)
    assert env._problem_id == "papergym/XEmbodiedWalker-v0"
