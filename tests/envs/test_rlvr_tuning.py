"""rlvr shared tuning runs: validation prompts disjoint from eval, the budget meters each
tuning run, a tuning run trains on the tuning seeds and cannot tune again, scores are cached
per key and recorded in the trial's info."""

from __future__ import annotations

import pytest
import torch

import papergym
from papergym.envs.rlvr.task import TUNING_PROMPTS, TUNING_SEEDS
from papergym.envs.rlvr.tasks import split_of
from papergym.envs.rlvr.view import key_items
from papergym.problem import BudgetExceeded

ADD_V2 = "papergym/RLVRAddScratch-v2"


def _task(**kw):
    return papergym.make_task(ADD_V2, tier="smoke", **kw)


def test_tuning_validation_prompts_are_validation_split_and_disjoint_from_eval():
    task = _task(eval_prompts=256, passk_prompts=128, lld_prompts=32)
    tuning = [i.prompt for i in task.training.tuning_set()]
    assert len(tuning) == TUNING_PROMPTS and len(set(tuning)) > TUNING_PROMPTS // 2
    assert all(split_of(p) == "validation" for p in tuning)
    assert tuning == [i.prompt for i in task.training.tuning_set()]  # fixed across calls
    evals = {i.prompt for i in task.eval_set(0)}
    assert evals and all(split_of(p) == "eval" for p in evals)
    assert not evals & set(tuning)


def test_default_grants_no_tuning_runs_and_the_budget_meters_each_run():
    plain = _task()
    view = plain.train_view(0, plain.budget)
    assert view.tuning_runs == 0
    with pytest.raises(BudgetExceeded):
        view.validation_score(lambda v: v.base_policy(), "test-default-grants-none(a=1)")

    task = _task(tuning_runs=2)
    budget = task.budget
    view = task.train_view(0, budget)
    assert view.tuning_runs == 2 and budget.limits["tuning_runs"] == 2
    seen = []

    def fit(v):
        seen.append((v.seed, v.budget.limits["responses"], v.tuning_runs))
        with pytest.raises(PermissionError):
            v.validation_score(lambda w: w.base_policy(), "nested(a=1)")
        return v.base_policy()

    for i in range(2):
        score = view.validation_score(fit, f"test-meter(x={i})")
        assert 0.0 <= score <= 1.0
        assert budget.used["tuning_runs"] == i + 1
    # each run trains on every tuning seed with the trial's response budget, no tuning runs
    assert seen == [(s, task.responses, 0) for s in TUNING_SEEDS] * 2
    with pytest.raises(BudgetExceeded):
        view.validation_score(fit, "test-meter(x=2)")
    assert budget.used["tuning_runs"] == 2 and len(seen) == 4
    assert budget.used["responses"] == 0  # tuning runs spend their own response budgets


def test_a_key_is_trained_once_and_shared_by_every_trial():
    task = _task(tuning_runs=2)
    calls = []

    def fit(v):
        calls.append(v.seed)
        return v.base_policy()

    first = task.train_view(0, task.budget).validation_score(fit, "test-shared(lr=1)")
    other = _task(tuning_runs=2)
    second = other.train_view(3, other.budget).validation_score(fit, "test-shared(lr=1)")
    assert first == second and calls == list(TUNING_SEEDS)


def test_diverged_or_failed_runs_score_zero_and_info_records_the_best():
    # mod-linear p <= 7: a smoke base clearly above chance, so a zero score is the rule's
    task = papergym.make_task("papergym/RLVRModLinear-v0", tier="smoke", size=7, responses=32,
                              eval_prompts=16, passk_prompts=4, passk_samples=8, lld_prompts=4,
                              validation_prompts=4, tuning_runs=3)
    view = task.train_view(0, task.budget)

    def diverged(v):
        policy = v.base_policy()
        with torch.no_grad():
            for p in policy.parameters():
                p.fill_(float("nan"))
        return policy

    def raises(v):
        raise FloatingPointError("the loss diverged")

    assert view.validation_score(diverged, "test-info(lr=0.1,rank=4,tune=True)") == 0.0
    assert view.validation_score(raises, "test-info(lr=0.3,rank=4,tune=True)") == 0.0
    good = view.validation_score(lambda v: v.base_policy(), "test-info(lr=0.2,rank=8,tune=True)")
    assert good > 0.0  # the base can do some of the task
    artifact = view.base_policy()
    info = task.evaluate(artifact, 0).info
    assert [e["validation_avg"] for e in info["tuning"]] == [0.0, 0.0, good]
    assert info["tuned"] == "test-info(lr=0.2,rank=8,tune=True)"
    assert info["tuned_settings"] == {"lr": "0.2", "rank": "8"}  # only what varied


def test_key_items_split_on_top_level_commas_only():
    assert key_items("a@h(lr=0.0003,lag=None,b=(1, 2),s='x,y')") == {
        "lr": "0.0003", "lag": "None", "b": "(1, 2)", "s": "'x,y'"}
    assert key_items("no-items") == {}


def test_tuning_runs_must_be_non_negative():
    with pytest.raises(ValueError, match="tuning_runs"):
        _task(tuning_runs=-1)
