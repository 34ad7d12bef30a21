"""XEmbodiedWalker-v2's task: the matched specialist (the specialist run stopped after exactly
the generalist's steps), a plateau rule that stops before its cap but not before the
generalist's budget, the specialists' survival, and the training-return curve the problem
records from the episodes it serves."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import papergym
from papergym import cache
from papergym.envs.humanoid import reference as ref
from papergym.envs.humanoid.env import XEmbodiedWalkerEnvV2
from papergym.envs.humanoid.task import TrainingLog, normalized_score, zero_policy

TINY_PPO = {"n_steps": 64, "batch_size": 32, "n_epochs": 1}


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERGYM_CACHE_DIR", str(tmp_path))


def _make():
    return XEmbodiedWalkerEnvV2(bodies=["walker2d_v5"], max_steps=30)


def _validator(values, calls):
    it = iter(values)

    def validate(policy):
        calls.append(policy)
        return next(it)
    return validate


def _action(policy):
    obs, _ = _make().reset(seed=0)
    return policy(obs)


def test_plateau_stops_before_its_cap_and_trains_on_only_for_the_matched_policy():
    # 5.05 beats 5 by less than 2% (stale 1), 4.0 (stale 2): the rule stops at chunk 4 of 10
    calls = []
    run = ref.train_to_plateau(_make, 64 * 10, 0, _validator([1.0, 5.0, 5.05, 4.0], calls),
                               chunk=64, patience=2, hyper=TINY_PPO, matched_steps=64 * 6)
    assert run.steps == 4 * 64 and run.selected_at == 3 * 64
    assert len(calls) == 4  # no validation past the plateau
    assert run.matched_steps == 6 * 64
    # the policy after exactly 6 chunks: a fresh run stopped by the cap there acts the same
    rising = itertools.count()  # every chunk improves: the last checkpoint is selected
    capped = ref.train_to_plateau(_make, 64 * 6, 0, lambda p: next(rising), chunk=64,
                                  hyper=TINY_PPO)
    assert capped.selected_at == 6 * 64
    np.testing.assert_array_equal(_action(run.matched), _action(capped.policy))
    # the plateau policy is the selected checkpoint (chunk 3), not the matched one
    np.testing.assert_array_equal(_action(run.policy), _action(calls[2]))


def test_matched_policy_before_the_plateau_and_the_selected_policy_are_unchanged():
    values = [1.0, 5.0, 5.05, 4.0]
    plain = ref.train_to_plateau(_make, 64 * 10, 0, _validator(values, []), chunk=64,
                                 hyper=TINY_PPO)
    calls = []
    run = ref.train_to_plateau(_make, 64 * 10, 0, _validator(values, calls), chunk=64,
                               hyper=TINY_PPO, matched_steps=128)
    assert (run.steps, run.selected_at, run.matched_steps) == (plain.steps, plain.selected_at, 128)
    np.testing.assert_array_equal(_action(run.policy), _action(plain.policy))
    np.testing.assert_array_equal(_action(run.matched), _action(calls[1]))


def test_the_plateau_rule_does_not_stop_before_min_steps():
    # stale from chunk 2 on: without a floor it stops at chunk 3, with min_steps 5 chunks at 5
    values = [5.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    early = ref.train_to_plateau(_make, 64 * 7, 0, _validator(values, []), chunk=64,
                                 hyper=TINY_PPO)
    late = ref.train_to_plateau(_make, 64 * 7, 0, _validator(values, []), chunk=64,
                                hyper=TINY_PPO, min_steps=64 * 5)
    assert (early.steps, early.selected_at) == (3 * 64, 64)
    assert (late.steps, late.selected_at) == (5 * 64, 64)
    assert [v for _, v in late.curve] == values[:5]


def test_matched_steps_must_be_whole_chunks_within_the_cap():
    with pytest.raises(ValueError, match="multiple of the specialist chunk"):
        ref.train_to_plateau(_make, 640, 0, lambda p: 0.0, chunk=64, hyper=TINY_PPO,
                             matched_steps=100)
    with pytest.raises(ValueError, match="train_steps=100 must be a multiple of specialist_chunk=64"):
        papergym.make_task("papergym/XEmbodiedWalker-v2", tier="smoke", train_steps=100,
                           specialist_steps=640, specialist_chunk=64).cache_entries([0])


def test_training_log_curve_is_the_mean_return_of_episodes_ending_in_each_span():
    log = TrainingLog()
    # two envs; env 0 ends an episode at steps 4 (return 1 + 1) and 8 (3 + 3), env 1 at 8 (4 x 2)
    for rewards, done in [([1, 2], [0, 0]), ([1, 2], [1, 0]), ([3, 2], [0, 0]), ([3, 2], [1, 1])]:
        log.record(np.array(rewards, float), np.array(done, bool))
    assert log.episodes == [(4, 2.0), (8, 6.0), (8, 8.0)]
    assert log.curve(8, points=2) == [(4.0, 2.0), (8.0, 7.0)]
    assert log.curve(16, points=4) == [(4.0, 2.0), (8.0, 7.0)]  # empty spans left out
    assert TrainingLog().curve(8) == []


def test_v2_task_scores_against_both_specialists_and_draws_the_training_curve():
    task = papergym.make_task("papergym/XEmbodiedWalker-v2", tier="smoke", max_steps=30,
                              train_steps=128, specialist_steps=192, specialist_chunk=64,
                              reference_episodes=3, specialist=TINY_PPO)
    run = cache.get(task.specialist_entry("walker2d_v5"))
    assert run["matched_steps"] == 128 and run["steps"] in (64 * 3,)  # 3 chunks: the cap
    assert 0.0 <= run["survival"] <= 1.0 and 0.0 <= run["matched_survival"] <= 1.0
    # a trial: the agent spends the budget on the view's vector env with a = 0
    budget = task.budget
    view = task.train_view(0, budget)
    envs = view.make_vector_env(2)
    envs.reset(seed=[1, 2])
    returns, running = [], np.zeros(2)
    while budget.remaining("env_steps") >= 2:
        _, reward, term, trunc, _ = envs.step(np.zeros((2, 13), np.float32))
        running += reward
        for k in np.flatnonzero(term | trunc):
            returns.append(running[k])
            running[k] = 0.0
    envs.close()
    result = task.evaluate(zero_policy(13), 0)
    (unit,) = result.units
    assert unit["matched_specialist_return"] == run["matched_return"]
    assert unit["specialist_survival"] == run["survival"]
    assert unit["score_matched"] == normalized_score(
        unit["return"], unit["zero_return"], run["matched_return"]) == 0.0  # a = 0 scores 0
    assert unit["ratio_matched"] == pytest.approx(unit["return"] / run["matched_return"])
    assert unit["survival_gap_matched"] == unit["survival"] - run["matched_survival"]
    assert result.metrics["matched_specialist_steps"] == 128.0
    curve = result.curves["train_return_vs_env_steps"]
    assert curve and curve[-1][0] <= 128
    assert np.mean([v for _, v in curve]) == pytest.approx(np.mean(returns), rel=0.5)
    assert sum(1 for _ in returns) >= len(curve)
