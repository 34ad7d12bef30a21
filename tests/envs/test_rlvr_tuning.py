"""rlvr shared tuning runs: validation prompts disjoint from eval, the budget meters each
tuning run, a tuning run trains on the tuning seeds and cannot tune again, scores are cached
per key and recorded in the trial's info."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import papergym
from papergym.envs.rlvr.task import TUNING_PROMPTS, TUNING_SEEDS
from papergym.envs.rlvr.tasks import split_of
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
        view.validation_score(lambda v: v.base_policy(), {"a": 1})

    task = _task(tuning_runs=2)
    budget = task.budget
    view = task.train_view(0, budget)
    assert view.tuning_runs == 2 and budget.limits["tuning_runs"] == 2
    seen = []

    def fit(v):
        seen.append((v.seed, v.budget.limits["responses"], v.tuning_runs))
        with pytest.raises(PermissionError):
            v.validation_score(lambda w: w.base_policy(), {"a": 1})
        return v.base_policy()

    for i in range(2):
        score = view.validation_score(fit, {"x": i})
        assert 0.0 <= score <= 1.0
        assert budget.used["tuning_runs"] == i + 1
    # each run trains on every tuning seed with the trial's response budget, no tuning runs
    assert seen == [(s, task.responses, 0) for s in TUNING_SEEDS] * 2
    with pytest.raises(BudgetExceeded):
        view.validation_score(fit, {"x": 2})
    assert budget.used["tuning_runs"] == 2 and len(seen) == 4
    assert budget.used["responses"] == 0  # tuning runs spend their own response budgets


def test_a_configuration_is_trained_once_per_agent_and_shared_by_its_trials():
    calls = []

    def fit(v):
        calls.append(v.seed)
        return v.base_policy()

    def score(identity, seed):
        task = _task(tuning_runs=2)
        task.set_agent_role("baseline", identity)  # the harness's identity, not the agent's
        return task.train_view(seed, task.budget).validation_score(fit, {"lr": 1})

    first = score("rlvr/test-shared@0001", 0)
    assert score("rlvr/test-shared@0001", 3) == first and calls == list(TUNING_SEEDS)
    score("rlvr/test-other@0002", 0)  # another agent never reads the first one's run
    assert calls == list(TUNING_SEEDS) * 2


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

    assert view.validation_score(diverged, {"lr": 0.1, "rank": 4}) == 0.0
    assert view.validation_score(raises, {"lr": 0.3, "rank": 4}) == 0.0
    good = view.validation_score(lambda v: v.base_policy(), {"lr": 0.2, "rank": 8})
    assert good > 0.0  # the base can do some of the task
    artifact = view.base_policy()
    info = task.evaluate(artifact, 0).info
    tuning = info["tuning"]
    assert [c["validation_score"] for c in tuning["candidates"]] == [0.0, 0.0, good]
    assert tuning["chosen"] == {"lr": 0.2, "rank": 8} and tuning["validation_score"] == good
    assert tuning["budget"] == 3 and tuning["at_edge"] == []  # lr 0.2 lies inside 0.1..0.3


def test_an_agent_cannot_name_a_tuning_cache_key():
    task = _task(tuning_runs=1)
    view = task.train_view(0, task.budget)
    with pytest.raises(TypeError, match="mapping of settings"):
        view.validation_score(lambda v: v.base_policy(), "rlvr/grpo@0000(lr=0.0001)")
    assert view.budget.used["tuning_runs"] == 0


def test_tuning_runs_must_be_non_negative():
    with pytest.raises(ValueError, match="tuning_runs"):
        _task(tuning_runs=-1)


@pytest.mark.parametrize("tuning_seeds, expected", [(1, [100]), (2, list(TUNING_SEEDS))])
def test_tuning_runs_train_on_the_first_tuning_seeds(monkeypatch, tuning_seeds, expected):
    from papergym.envs.rlvr.task import TrainingSide

    task = _task(tuning_seeds=tuning_seeds)
    seen = []
    monkeypatch.setattr(TrainingSide, "tuning_validation", lambda self, model, seed: seed / 1000)
    score = task.training.tuning_score(lambda view: seen.append(view.seed) or "model", {"lr": 1.0})
    assert seen == expected and score == pytest.approx(np.mean(expected) / 1000)
    with pytest.raises(ValueError, match="tuning_seeds"):
        _task(tuning_seeds=3)
