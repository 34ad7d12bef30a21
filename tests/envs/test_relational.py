"""relational: the prior generator, DFS against brute-force groupbys, leakage, package tasks,
few-shot splits and AUC (the spec's correctness tests)."""

from __future__ import annotations

import socket

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

import papergym
from papergym.envs.relational import generator as G
from papergym.envs.relational.dfs import linearize
from papergym.envs.relational.evaluate import auc, stratified_shots
from papergym.envs.relational.package_tasks import package_tasks

TASK = "papergym/RDBFewShot-v0"


# ------------------------------------------------------------------------------ generator

def test_foreign_keys_sizes_and_schema():
    for seed in range(30):
        db = G.sample_database(np.random.default_rng(seed))
        names = list(db.tables)
        assert 2 <= len(names) <= 5
        depth = G.depths(db.edges, names)
        assert max(depth.values()) <= 3
        for name, t in db.tables.items():
            parents = db.parents(name)
            assert len(parents) <= 2 and all(names.index(p) < names.index(name) for p in parents)  # acyclic
            lo, hi = G.PRIOR.child_rows if parents else G.PRIOR.root_rows
            assert lo <= t.n <= hi
            assert 3 <= len(t.columns) <= 8
            for p, fk in t.fks.items():
                assert fk.min() >= 0 and fk.max() < db.tables[p].n  # every key points to a parent row
            for c in t.cat:
                codes = t.columns[c]
                assert np.all(codes == np.round(codes)) and 0 <= codes.min() and codes.max() <= 8
            if t.time is not None:
                assert parents and t.time.min() >= 0 and t.time.max() <= G.TIME_SPAN


def test_generator_is_deterministic_by_seed():
    a, b = (G.sample_task(np.random.default_rng(4)) for _ in range(2))
    c = G.sample_task(np.random.default_rng(5))
    assert np.array_equal(a.y, b.y) and a.target == b.target
    for name in a.db.tables:
        for k, v in a.db.tables[name].columns.items():
            assert np.array_equal(v, b.db.tables[name].columns[k])
    assert not (a.target == c.target and len(a.y) == len(c.y) and np.array_equal(a.y, c.y))


def test_weighted_selection_first_draw_matches_weights_and_skips_zero_weights():
    w = np.array([0.1, 0.2, 0.3, 0.4, 0.0])
    rng = np.random.default_rng(0)
    first = np.array([G.weighted_without_replacement(w, 2, rng, eps=0.0)[0] for _ in range(20000)])
    freq = np.bincount(first, minlength=5) / len(first)
    assert np.allclose(freq[:4], w[:4], atol=0.012)
    for _ in range(500):
        assert 4 not in G.weighted_without_replacement(w, 4, rng, eps=0.0)


def test_child_counts_carry_a_relational_signal():
    """|Spearman(parent's child count, its first feature)| > 0.1 about twice as often as with the
    edge score shuffled (the selection then ignores the features). The signal is modest at these
    sizes: Zipf popularity adds count variation that no feature explains."""
    def share(shuffle: bool) -> float:
        hits = 0
        for seed in range(50):
            rng = np.random.default_rng(seed)
            db = _two_tables(rng, shuffle)
            parent, child = db.tables["t0"], db.tables["t1"]
            counts = np.bincount(child.fks["t0"], minlength=parent.n)
            hits += abs(spearmanr(counts, parent.columns["x0"])[0]) > 0.1
        return hits / 50
    real, control = share(False), share(True)
    assert real > 1.5 * control and real > control + 0.1, (real, control)


def _two_tables(rng, shuffle):
    hyper = G.Hyper(tables=(2, 2), time_probability=0.0)
    if not shuffle:
        return G.sample_database(rng, hyper)
    original = G.weighted_without_replacement
    G.weighted_without_replacement = lambda w, k, r, eps=1e-6: original(r.permutation(w), k, r, eps)
    try:
        return G.sample_database(rng, hyper)
    finally:
        G.weighted_without_replacement = original


# ------------------------------------------------------------------------------ DFS

def hand_built():
    """customer <- order <- item, and store <- customer; order timestamped."""
    store = G.Table("store", {"size": np.array([1.0, 2.0])}, frozenset())
    customer = G.Table("customer", {"age": np.array([30.0, 40.0, 50.0]), "tier": np.array([0.0, 1.0, 1.0])},
                       frozenset({"tier"}), {"store": np.array([0, 1, 1])})
    order = G.Table("order", {"amount": np.array([10.0, 20.0, 30.0, 5.0, 7.0]),
                              "channel": np.array([0.0, 1.0, 1.0, 2.0, 0.0])},
                    frozenset({"channel"}), {"customer": np.array([0, 0, 0, 1, 1])},
                    time=np.array([100.0, 200.0, 300.0, 150.0, 400.0]))
    item = G.Table("item", {"price": np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])}, frozenset(),
                   {"order": np.array([0, 0, 1, 2, 3, 3])})
    return G.Database({"store": store, "customer": customer, "order": order, "item": item},
                      [("store", "customer"), ("customer", "order"), ("order", "item")])


def col(f, name):
    return f.X[:, f.names.index(name)]


def test_dfs_equals_brute_force_groupby():
    db = hand_built()
    f = linearize(db, "customer", np.arange(3))
    order = db.tables["order"]
    orders = pd.DataFrame({"c": order.fks["customer"], "amount": order.columns["amount"],
                           "channel": db.tables["order"].columns["channel"]})
    items = pd.DataFrame({"o": db.tables["item"].fks["order"], "price": db.tables["item"].columns["price"]})
    for c in range(3):
        mine = orders[orders.c == c]
        assert col(f, "COUNT(order)")[c] == len(mine)
        for fn in ("mean", "sum", "min", "max"):
            expected = getattr(mine.amount, fn)() if len(mine) else np.nan
            np.testing.assert_equal(col(f, f"{fn.upper()}(order.amount)")[c], expected)
        modes = mine.channel.value_counts()
        expected = modes[modes == modes.max()].index.min() if len(mine) else np.nan
        np.testing.assert_equal(col(f, "MODE(order.channel)")[c], expected)
        per_order = [len(items[items.o == o]) for o in mine.index]
        means = [items[items.o == o].price.mean() for o in mine.index]
        counts = (np.mean(per_order), np.max(per_order)) if per_order else (np.nan, np.nan)
        np.testing.assert_equal(col(f, "MEAN(order.COUNT(item))")[c], counts[0])
        np.testing.assert_equal(col(f, "MAX(order.COUNT(item))")[c], counts[1])
        finite = [m for m in means if np.isfinite(m)]
        expected = np.mean(finite) if finite else np.nan
        np.testing.assert_allclose(col(f, "MEAN(order.MEAN(item.price))")[c], expected)
    # forward features are joins
    assert np.array_equal(col(f, "customer.store.size"), [1.0, 2.0, 2.0])
    # empty groups: count 0, NaN elsewhere (customer 2 has no orders)
    assert col(f, "COUNT(order)")[2] == 0 and np.isnan(col(f, "MEAN(order.amount)")[2])
    assert f.cat[f.names.index("customer.tier")] and f.cat[f.names.index("MODE(order.channel)")]
    assert f.own.sum() == 2


def test_cutoffs_drop_later_rows_and_rows_after_the_cutoff_change_nothing():
    db = hand_built()
    cutoff = np.array([250.0, 1000.0, 1000.0])
    f = linearize(db, "customer", np.arange(3), cutoff)
    assert col(f, "COUNT(order)")[0] == 2 and col(f, "SUM(order.amount)")[0] == 30.0
    assert col(f, "MEAN(order.COUNT(item))")[0] == 1.5  # order 2 (t=300) and its item are out
    poisoned = G.with_extra_rows(db, "order", {"amount": np.array([1e9]), "channel": np.array([2.0])},
                                 {"customer": np.array([0])}, np.array([251.0]))
    poisoned = G.with_extra_rows(poisoned, "item", {"price": np.array([-1e9])}, {"order": np.array([5])},
                                 None)
    g = linearize(poisoned, "customer", np.arange(3), cutoff)
    assert g.names == f.names
    np.testing.assert_array_equal(g.X[0], f.X[0])


def test_temporal_task_label_sources_are_absent_and_a_poisoned_future_row_changes_nothing():
    for seed in range(200):
        rng = np.random.default_rng(seed)
        db = G.sample_database(rng)
        task = G.make_task(db, rng, kind="temporal")
        if task is not None:
            break
    assert task is not None
    f = linearize(task.db, task.target, task.entities, task.cutoff)
    timed = [c for c in db.children(task.target) if db.tables[c].time is not None][0]
    child = db.tables[timed]
    e = 0  # a row far in the future of entity 0, extreme in every column
    extra = {k: np.array([1e9]) for k in child.columns}
    fks = {p: np.array([task.entities[e] if p == task.target else 0]) for p in child.fks}
    poisoned = G.with_extra_rows(db, timed, extra, fks, np.array([task.cutoff[e] + 1.0]))
    g = linearize(poisoned, task.target, task.entities, task.cutoff)
    np.testing.assert_array_equal(np.nan_to_num(g.X, nan=7.0), np.nan_to_num(f.X, nan=7.0))
    # the target is a causal output, never a column; no column is the label
    for j in range(f.X.shape[1]):
        assert not np.array_equal(np.nan_to_num(f.X[:, j]), task.y.astype(float))


# ------------------------------------------------------------------------------ package tasks

def test_package_tasks_build_offline_with_their_shapes(monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError("network access in a test")
    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    tasks = {t.name: (group, suite, t) for group, suite, t in package_tasks()}
    assert len(tasks) == 12 and sum(g == "digits-rows" for g, _, _ in tasks.values()) == 10
    for name, n, per, child in (("digits-rows-3", 1797, 8, "pixel_row"), ("cancer-views", 569, 3, "view"),
                                ("diabetes-labs", 442, 6, "lab")):
        t = tasks[name][2]
        assert t.db.tables[t.target].n == n and t.db.tables[child].n == n * per
        assert np.all(np.bincount(t.db.tables[child].fks[t.target]) == per)
        parent = t.db.tables[t.target]
        for v in parent.columns.values():  # no parent column is the target or a function of it
            assert abs(spearmanr(v, t.y)[0]) < 0.5
    assert tasks["digits-rows-3"][2].db.tables["image"].columns == {}
    assert tasks["diabetes-labs"][1] == "exploratory"


# ------------------------------------------------------------------------------ splits and AUC

def test_auc_equals_a_brute_force_pair_count():
    rng = np.random.default_rng(0)
    for _ in range(20):
        y = rng.integers(0, 2, size=15)
        if y.min() == y.max():
            continue
        p = rng.integers(0, 4, size=15) / 4.0  # many ties
        pos, neg = p[y == 1], p[y == 0]
        brute = np.mean([(a > b) + 0.5 * (a == b) for a in pos for b in neg])
        assert auc(y, p) == pytest.approx(brute)


def test_shots_are_stratified_identical_and_disjoint_from_the_test_pool():
    task = papergym.make_task(TASK, tier="smoke")
    from papergym import cache
    suite = cache.get(task.suite_entry())
    for item in suite:
        assert not set(item.test) & set(item.pool)
        for shots in task.shots:
            draws = [stratified_shots(item.y, item.pool, shots, np.random.default_rng([shots, 1]))
                     for _ in range(2)]
            assert np.array_equal(draws[0], draws[1]) and len(set(draws[0])) == shots
            assert set(draws[0]) <= set(item.pool)
            assert min(np.sum(item.y[draws[0]] == c) for c in (0, 1)) >= 2


def test_evaluate_never_shows_test_labels_and_scores_a_constant_at_half():
    task = papergym.make_task(TASK, tier="smoke")
    seen = []

    def spy(X_train, y_train, X_test, cat, own):
        seen.append((len(y_train), X_test.shape, set(np.unique(y_train))))
        return np.full(len(X_test), 0.5)
    result = task.evaluate(spy, 0)
    assert result.metrics["auc"] == 0.5 and result.metrics["normalized"] == 0.0
    assert {s[0] for s in seen} == set(task.shots) and all(s[2] == {0, 1} for s in seen)
    assert len([u for u in result.units if "auc" in u]) == 12  # the smoke tier's units_per_trial
    gaps = [u for u in result.units if "auc_gap" in u]  # one per task: all six have 32 and 128 shots
    assert sorted(u["task"] for u in gaps) == sorted({u["task"] for u in result.units if "auc" in u})
    assert all(u["auc_gap"] == 0.0 for u in gaps)
    with pytest.raises(TypeError):
        task.evaluate("not a predictor", 0)
    with pytest.raises(ValueError):
        task.evaluate(lambda a, b, X, c, d: np.full(len(X), 2.0), 0)


def test_prior_validation_scores_held_out_prior_tasks_and_becomes_the_curves():
    task = papergym.make_task(TASK, tier="smoke")
    budget = task.budget
    view = task.train_view(0, budget)
    shown = []

    def constant(X_train, y_train, X_test, cat, own):
        shown.append((len(y_train), len(X_test)))
        return np.full(len(X_test), 0.5)
    record = view.prior_validation(constant, 7)
    assert record["step"] == 7 and np.isclose(record["loss_single"], np.log(2))
    assert np.isclose(record["loss_relational"], np.log(2)) and record["auc_relational"] == 0.5
    assert set(shown) == {(32, 32)} and len(shown) == 32 and budget.used["prior_tasks"] == 32
    with pytest.raises(ValueError):
        view.prior_validation(constant, -1)
    result = task.evaluate(lambda a, b, X, c, d: np.full(len(X), 0.5), 0)
    assert result.curves == {"prior_loss_single": [(7, record["loss_single"])],
                             "prior_loss_relational": [(7, record["loss_relational"])]}
    assert result.info["prior_validation"] == [record]


def test_bad_arguments_are_refused():
    for bad in ({"shots": [2]}, {"digits": [11]}, {"test_pool": 3}, {"min_entities": 100, "shots": [128]}):
        with pytest.raises(ValueError):
            papergym.make_task(TASK, tier="smoke", **bad)
    view = papergym.make_task(TASK, tier="smoke").train_view(0, papergym.make_task(TASK, tier="smoke").budget)
    with pytest.raises(ValueError):
        view.sample_prior(2, "graph")
