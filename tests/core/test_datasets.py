"""papergym.datasets: the digits loader, stratified splits, metered minibatches."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from papergym.datasets import MeteredBatches, digits_split, load_digits, stratified_split
from papergym.envs.fedlearn import data as fed_data
from papergym.problem import Budget, BudgetExceeded


def test_digits_match_scikit_learn():
    from sklearn.datasets import load_digits as sk_load

    X, y = load_digits()
    X_sk, y_sk = sk_load(return_X_y=True)
    np.testing.assert_array_equal(X * 16, X_sk)
    np.testing.assert_array_equal(y, y_sk)
    assert not X.flags.writeable


def test_fedlearn_split_is_unchanged_by_the_move():
    X_train, y_train, X_test, y_test = fed_data.digits_split()
    assert fed_data.digits_split is digits_split
    # the split fedlearn shipped before the loader moved here (FedRounds results depend on it)
    assert hashlib.sha256(y_test.tobytes() + X_test.tobytes()).hexdigest()[:16] == "653eaf0060ebdfe4"
    X, y = load_digits()
    rng, test = np.random.default_rng(0), np.zeros(len(y), dtype=bool)
    for c in np.unique(y):  # the old inline algorithm
        members = rng.permutation(np.flatnonzero(y == c))
        test[members[: int(round(0.25 * len(members)))]] = True
    np.testing.assert_array_equal(X_test, X[test])
    np.testing.assert_array_equal(y_train, y[~test])


def test_stratified_split_holds_out_the_fraction_per_class():
    y = np.repeat(np.arange(4), [10, 20, 30, 41])
    kept, held = stratified_split(y, 0.2, np.random.default_rng(5))
    assert np.array_equal(np.sort(np.concatenate([kept, held])), np.arange(len(y)))
    assert [int(np.sum(y[held] == c)) for c in range(4)] == [2, 4, 6, 8]
    again = stratified_split(y, 0.2, np.random.default_rng(5))
    assert np.array_equal(again[1], held)
    with pytest.raises(ValueError, match="fraction"):
        stratified_split(y, 1.5, np.random.default_rng(0))


def test_metered_batches_charge_one_epoch_each():
    X, y = np.arange(20.0).reshape(10, 2), np.arange(10)
    budget = Budget(epochs=2)
    batches = MeteredBatches(X, y, 4, budget, np.random.default_rng(0))
    first = batches.epoch()
    assert [len(b[1]) for b in first] == [4, 4, 2] and batches.batches_per_epoch == 3
    assert sorted(np.concatenate([b[1] for b in first])) == list(range(10))
    assert batches.epochs_left == 1 and batches.started is not None
    batches.epoch()
    with pytest.raises(BudgetExceeded):
        batches.epoch()
    other = MeteredBatches(X, y, 4, Budget(epochs=1), np.random.default_rng(0)).epoch()
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(first, other))  # same rng, same order
    with pytest.raises(ValueError, match="batch_size"):
        MeteredBatches(X, y, 0, budget, np.random.default_rng(0))
