"""relational agents: the PFN's invariances, that it learns from the prior, determinism, and
every agent on a reduced smoke tier."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import papergym
from papergym.agent import REGISTRY
from papergym.agents.relational._pfn import InContextPredictor, PFNSize, build, pretrain, prior_draw
from papergym.envs.relational.evaluate import auc

TASK = "papergym/RDBFewShot-v0"
AGENTS = ("rdbpfn", "single-pfn", "gbm", "rf", "logreg", "knn", "constant")
TINY = {"steps_a": 20, "steps_b": 20}


def run(agent_id, config=None, seed=0, **kwargs):
    task = papergym.make_task(TASK, tier="smoke", **{"n_id": 1, "n_shift": 1, "test_pool": 100, **kwargs})
    agent = REGISTRY.get(agent_id, "relational")(config or {})
    budget = task.budget
    with threadpool_limits(1):
        artifact = agent.solve(task.train_view(seed, budget), budget, seed)
        return task.evaluate(artifact, seed), budget


@pytest.fixture(scope="module")
def predictor():
    return InContextPredictor(build(PFNSize(16, 2, 2, 32), 0), seed=0)


def test_predictions_invariant_to_train_row_and_column_order(predictor):
    rng = np.random.default_rng(0)
    X_train, y = rng.normal(size=(40, 6)), rng.integers(0, 2, 40)
    X_test = rng.normal(size=(9, 6))
    p = predictor(X_train, y, X_test)
    rows, cols = rng.permutation(40), rng.permutation(6)
    np.testing.assert_allclose(predictor(X_train[rows], y[rows], X_test), p, atol=1e-5)
    np.testing.assert_allclose(predictor(X_train[:, cols], y, X_test[:, cols]), p, atol=1e-5)
    test_rows = rng.permutation(9)
    np.testing.assert_allclose(predictor(X_train, y, X_test[test_rows]), p[test_rows], atol=1e-5)
    alone = predictor(X_train, y, X_test[:1])  # no dependence on the other test rows
    np.testing.assert_allclose(alone, p[:1], atol=1e-5)
    other = X_test.copy()
    other[1:] = rng.normal(size=(8, 6)) * 5
    np.testing.assert_allclose(predictor(X_train, y, other)[:1], p[:1], atol=1e-5)


def test_wide_inputs_average_column_subsets(predictor):
    rng = np.random.default_rng(1)
    X_train, y, X_test = rng.normal(size=(30, 50)), rng.integers(0, 2, 30), rng.normal(size=(5, 50))
    p = predictor(X_train, y, X_test)
    assert p.shape == (5,) and np.all((p >= 0) & (p <= 1))
    np.testing.assert_array_equal(predictor(X_train, y, X_test), p)  # seeded subsets


def _prior_auc(steps: int) -> float:
    task = papergym.make_task(TASK, tier="smoke")
    with threadpool_limits(1):
        model = build(PFNSize(), 0)
        held = task.train_view(1, task.budget).sample_prior(40, "single")
        pretrain(model, prior_draw(task.train_view(0, task.budget), 8, 0.0), steps, 8, 3e-3, 0, 64, 16)
        predictor = InContextPredictor(model, 0)
        scores = [auc(t["y"][48:], predictor(t["X"][:48], t["y"][:48], t["X"][48:])) for t in held]
        return float(np.mean(scores))


def test_pfn_learns_from_the_prior_and_untrained_is_chance():
    """40 held-out single-table prior tasks, 48 context rows: chance untrained; > 0.6 after 400
    steps (the loss leaves the chance plateau after about 250)."""
    untrained, trained = _prior_auc(0), _prior_auc(400)
    assert abs(untrained - 0.5) < 0.1
    assert trained > 0.6 and trained > untrained + 0.08, (untrained, trained)


def test_pfn_trial_is_deterministic_by_seed():
    first = run("rdbpfn", TINY)[0].metrics
    again = run("rdbpfn", TINY)[0].metrics
    first.pop("infer_seconds"), again.pop("infer_seconds")
    assert first == again


def test_every_agent_completes_and_gbm_separates_cancer_views():
    configs = {"rdbpfn": TINY, "single-pfn": TINY, "rf": {"trees": 20}}
    results = {a: run(a, configs.get(a))[0] for a in AGENTS}
    for a, r in results.items():
        assert 0.0 <= r.metrics["auc"] <= 1.0, a
    assert results["constant"].metrics["auc"] == 0.5
    cancer = [u["auc"] for u in results["gbm"].units
              if u.get("task") == "cancer-views" and u.get("shots") == 128]
    assert cancer and min(cancer) > 0.7
    target_only = run("gbm", {"features": "target_only"})[0]
    assert target_only.metrics["auc_package"] == 0.5  # package parents hold no columns


def test_prior_budget_is_spent_and_enforced():
    result, budget = run("rdbpfn", {"steps_a": 3, "steps_b": 2, "batch": 4})
    assert budget.used["prior_tasks"] == 5 * 4
    with pytest.raises(papergym.problem.BudgetExceeded):
        run("single-pfn", {"steps_a": 10, "steps_b": 0, "batch": 8}, prior_tasks=40)


def test_full_tier_configuration_is_accepted_by_problem_and_agents():
    """The full tier cannot rot: its problem kwargs build the Task, every full-tier agent config
    validates, and the full-size PFN runs a forward pass and a pretraining step."""
    from papergym.benchmarks.spec import find_spec

    spec = find_spec("relational")
    section = spec.problems[0]
    full = section.tiers["full"]
    task = papergym.make_task(TASK, tier="full", **full.kwargs)
    assert task.shots[-1] == 1024 and task.suite_kwargs["min_entities"] >= 1024 + 500
    agents = [a for a in section.agents if a.tiers is None or "full" in a.tiers]
    assert {a.name for a in agents} >= {"rdbpfn-full", "single-pfn-full", "gbm"}
    for entry in agents:
        cls = REGISTRY.get(entry.id, "relational")
        config = cls.validate_config(entry.config)
        if "pfn" in entry.id:
            model = build(PFNSize(config.embed, config.layers, config.heads, config.mlp), 0)
            view = task.train_view(0, task.budget)
            pretrain(model, prior_draw(view, 2, 0.5), 1, 2, config.lr_a, 0, 32, config.max_columns)
            rng = np.random.default_rng(0)
            X_train, X_test = rng.normal(size=(20, 40)), rng.normal(size=(3, 40))
            y_train = rng.integers(0, 2, 20)
            p = InContextPredictor(model, 0)(X_train, y_train, X_test)
            assert p.shape == (3,)
