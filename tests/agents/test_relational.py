"""relational agents: the PFN's invariances, that it learns, the shared stage A, determinism,
boosting's staged tuning against explicit refits, and every agent on a reduced smoke tier."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold
from threadpoolctl import threadpool_limits

import papergym
from papergym.agent import REGISTRY
from papergym.agents.relational._pfn import InContextPredictor, PFNSize, PriorStream, _batch, build, pretrain
from papergym.agents.relational.sk_baselines import GBM, Tuned
from papergym.envs.relational.evaluate import auc

TASK = "papergym/RDBFewShot-v0"
AGENTS = ("rdbpfn", "single-pfn", "gbm", "rf", "logreg", "knn", "constant")
TINY = {"steps_a": 20, "steps_b": 20, "check_every": 10}


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


class LinearPrior:
    """A stand-in view: linear-logistic tables (3-8 features, a random direction, little noise);
    an untrained network is at chance on them on average, since the direction's sign is random."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def sample_prior(self, n: int, kind: str = "single") -> list[dict]:
        out = []
        for _ in range(n):
            d = int(self.rng.integers(3, 9))
            X, w = self.rng.normal(size=(64, d)), self.rng.normal(size=d)
            y = (X @ w / np.sqrt(d) + 0.3 * self.rng.normal(size=64) > 0).astype(np.int64)
            out.append({"X": X, "y": y})
        return out


def _linear_auc(steps: int) -> float:
    with threadpool_limits(1):
        model = build(PFNSize(), 0)
        pretrain(model, PriorStream(LinearPrior(0), 8, 0.0, 64, 0), steps, 1e-3, 0, 64, 16)
        predictor = InContextPredictor(model, 0)
        held = LinearPrior(1).sample_prior(100)
        scores = [auc(t["y"][32:], predictor(t["X"][:32], t["y"][:32], t["X"][32:])) for t in held]
        return float(np.mean(scores))


def test_pfn_learns_a_linear_prior_in_context_and_untrained_fails_the_bar():
    """Held-out linear-logistic tables, 32 context rows: about 0.86 after 300 steps at the
    agents' lr. Untrained, about 0.6: with the label in every cell even random attention
    weights smooth the context labels, but the same bar fails."""
    untrained, trained = _linear_auc(0), _linear_auc(300)
    assert untrained < 0.7 and trained > 0.75 and trained > untrained + 0.15, (untrained, trained)


def test_stage_a_is_shared_across_agents_and_seeds_and_counted_in_each_budget():
    tiny = {**TINY, "stage_a": "shared"}
    results = {(a, s): run(a, tiny, seed=s) for a, s in (("rdbpfn", 0), ("rdbpfn", 1), ("single-pfn", 0))}
    curves = {k: r.curves["prior_loss_single"] for k, (r, _) in results.items()}
    stage_a = [c[:3] for c in curves.values()]  # steps 0, 10, 20: stage A, the same run
    assert [p[0] for p in stage_a[0]] == [0, 10, 20] and all(c == stage_a[0] for c in stage_a)
    assert curves[("rdbpfn", 0)][3:] != curves[("single-pfn", 0)][3:]  # stage B differs
    assert curves[("rdbpfn", 0)][3:] != curves[("rdbpfn", 1)][3:]
    used = {k: b.used["prior_tasks"] for k, (_, b) in results.items()}
    assert len(set(used.values())) == 1  # equal compute; 2 x 20 steps x 8 + 5 checks x 32 tasks
    assert used[("rdbpfn", 0)] == 2 * 20 * 8 + 5 * 32
    info = results[("rdbpfn", 0)][0].info["prior_validation"]
    assert [r["step"] for r in info] == [0, 10, 20, 30, 40] and all(0 < r["loss_relational"] for r in info)


def test_per_seed_stage_a_is_the_checkpoint_each_seed_continues_from():
    """Per seed: rdbpfn, single-pfn and the stage-A-only variant (steps_b 0) of one seed start
    from one stage A; another seed has its own."""
    task = papergym.make_task(TASK, tier="smoke")
    tiny = {"steps_a": 10, "check_every": 5, "stage_a": "per_seed"}

    def checks(agent_id, seed, steps_b):
        view = task.train_view(seed, task.budget)
        with threadpool_limits(1):
            REGISTRY.get(agent_id, "relational")({**tiny, "steps_b": steps_b}).solve(view, view.budget, seed)
        return [(r["step"], r["loss_single"]) for r in view.validation]

    stage_a = checks("rdbpfn", 0, 5)[:3]
    assert [step for step, _ in stage_a] == [0, 5, 10]
    assert checks("single-pfn", 0, 5)[:3] == stage_a and checks("single-pfn", 0, 0) == stage_a
    assert checks("rdbpfn", 1, 5)[:3] != stage_a  # its own initialization and prior stream


def test_long_contexts_keep_a_fixed_number_of_test_rows():
    rng = np.random.default_rng(0)
    tasks = [{"X": rng.normal(size=(200, 5)), "y": rng.integers(0, 2, 200)} for _ in range(4)]
    sizes = set()
    for _ in range(60):
        X, y_train, y_test, mask = _batch(tasks, rng, 16, 168, test_rows=32)
        assert y_test.shape == (4, 32) and X.shape[1] == y_train.shape[1] + 32
        sizes.add(y_train.shape[1])
    assert min(sizes) >= 8 and max(sizes) <= 136 and max(sizes) > 100  # contexts up to 136 rows
    with pytest.raises(ValueError, match="test_rows"):
        _batch([{"X": t["X"][:36], "y": t["y"][:36]} for t in tasks], rng, 16, 168, test_rows=32)


def test_shuffled_labels_are_a_fixed_permutation_of_the_context():
    rng = np.random.default_rng(4)
    X_train, y, X_test = rng.normal(size=(30, 4)), rng.integers(0, 2, 30), rng.normal(size=(6, 4))
    model = build(PFNSize(16, 1, 2, 32), 0)
    shuffled = InContextPredictor(model, 0, shuffle_labels=True)
    p = shuffled(X_train, y, X_test)
    np.testing.assert_array_equal(shuffled(X_train, y, X_test), p)  # deterministic
    assert not np.allclose(p, InContextPredictor(model, 0)(X_train, y, X_test))
    without = build(PFNSize(16, 1, 2, 32), 0, label_in_cells=False)  # same weights, another input
    assert not np.allclose(InContextPredictor(without, 0)(X_train, y, X_test),
                           InContextPredictor(model, 0)(X_train, y, X_test))


def test_a_shared_run_cannot_nest_and_needs_a_key():
    task = papergym.make_task(TASK, tier="smoke")
    view = task.train_view(0, task.budget)
    with pytest.raises(TypeError):
        view.shared_pretraining("", lambda v: 0)
    with pytest.raises(PermissionError):
        view.shared_pretraining("nested-test", lambda v: v.shared_pretraining("inner", lambda w: 0))
    assert view.shared_pretraining("charged-test", lambda v: len(v.sample_prior(3))) == 3
    assert view.budget.used["prior_tasks"] == 3
    other = task.train_view(5, task.budget)
    assert other.shared_pretraining("seed-test", lambda v: v.seed, per_seed=True) == 5
    assert other.shared_pretraining("seed-test", lambda v: v.seed) == 0


def test_staged_boosting_selects_what_explicit_refits_select():
    """The iteration count chosen from staged predictions equals a grid search refitting every
    (leaves, iterations) point: staged predictions of a fit are those of shorter fits."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(150, 6))
    X[rng.random(X.shape) < 0.1] = np.nan
    y = (np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1]) ** 2 + rng.normal(size=150) > 0.5).astype(int)
    staged = GBM({"max_iter": [5, 20, 60]}).solve(None, None, 0)
    cat = np.zeros(6, bool)
    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    explicit = Tuned.select(staged, cat, X, y, folds)
    assert staged.select(cat, X, y, folds) == explicit
    assert explicit["max_iter"] in (5, 20, 60) and explicit["max_leaf_nodes"] in (7, 15)


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
    result, budget = run("rdbpfn", {"steps_a": 3, "steps_b": 2, "batch": 4, "check_every": 0})
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
            pretrain(model, PriorStream(view, 2, 0.5, 4, 0), 1, config.lr_a, 0, 32, config.max_columns)
            rng = np.random.default_rng(0)
            X_train, X_test = rng.normal(size=(20, 40)), rng.normal(size=(3, 40))
            y_train = rng.integers(0, 2, 20)
            p = InContextPredictor(model, 0)(X_train, y_train, X_test)
            assert p.shape == (3,)
