"""The exact per-block-plus-merge objective (``envs/qaoa/oracle.py``) against brute force."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from papergym.envs.qaoa.oracle import exact_block_cuts, exact_objective, objective_ratio
from papergym.envs.qaoa.qaoa2 import compact_labels
from papergym.maxcut import cut_value, exact_maxcut


def _graph(rng: np.random.Generator, n: int, density: float = 0.6) -> np.ndarray:
    upper = np.triu(rng.uniform(-5, 5, (n, n)) * (rng.random((n, n)) < density), 1)
    return upper + upper.T


def _all_assignments(n: int) -> np.ndarray:
    return np.array(list(itertools.product((0, 1), repeat=n)), dtype=np.int8)


def test_block_cuts_equal_exact_maxcut():
    rng = np.random.default_rng(1)
    for _ in range(30):
        w = _graph(rng, int(rng.integers(2, 12)))
        values, sides = exact_block_cuts(w[None])
        assert values[0] == pytest.approx(exact_maxcut(w)[0], abs=1e-9)
        assert cut_value(w, sides[0]) == pytest.approx(values[0], abs=1e-9)


def test_oracle_is_the_best_cut_keeping_or_flipping_each_exact_block_solution():
    """Brute force over all 2^N assignments: those whose restriction to every block is the
    oracle's block solution or its complement; their maximum cut is the oracle's value, and
    every block solution is a maximum cut of its block."""
    rng = np.random.default_rng(2)
    assignments = {}
    for trial in range(25):
        n, n_max = int(rng.integers(7, 13)), int(rng.integers(3, 5))
        w = _graph(rng, n)
        blocks = int(np.ceil(n / n_max)) + int(rng.integers(0, 2))
        labels = rng.permutation(n) % blocks  # every block within n_max: no repair
        value, sides = exact_objective(w, labels, n_max)
        assert cut_value(w, sides) == pytest.approx(value, abs=1e-9)
        compact, _ = compact_labels(labels)
        all_s = assignments.setdefault(n, _all_assignments(n))
        consistent = np.ones(len(all_s), dtype=bool)
        for block in range(int(compact.max()) + 1):
            nodes = np.flatnonzero(compact == block)
            sub = w[np.ix_(nodes, nodes)]
            assert cut_value(sub, sides[nodes]) == pytest.approx(exact_maxcut(sub)[0], abs=1e-9)
            restricted = all_s[:, nodes]
            consistent &= (restricted == sides[nodes]).all(1) | (restricted != sides[nodes]).all(1)
        reachable = max(cut_value(w, s) for s in all_s[consistent])
        assert value == pytest.approx(reachable, abs=1e-9), trial


def test_oracle_bounded_by_opt_and_exact_for_one_block():
    rng = np.random.default_rng(3)
    for _ in range(20):
        w = _graph(rng, 10)
        opt = exact_maxcut(w)[0]
        assert exact_objective(w, np.zeros(10, dtype=np.int64), 10)[0] == pytest.approx(opt)
        value, _ = exact_objective(w, rng.integers(0, 4, 10), 3)
        assert value <= opt + 1e-9


def test_large_coarse_graphs_recurse_and_stay_consistent():
    rng = np.random.default_rng(4)
    w = _graph(rng, 36, density=0.3)
    labels = np.arange(36) // 3  # 12 blocks of 3: more super-nodes than an exact merge of 8
    value, sides = exact_objective(w, labels, 3, max_exact=8)
    assert cut_value(w, sides) == pytest.approx(value, abs=1e-9)
    assert value <= exact_objective(w, labels, 3, max_exact=12)[0] + 1e-9


def test_objective_ratio_scale():
    w = np.array([[0, 2, -1], [2, 0, 3], [-1, 3, 0]], dtype=float)
    assert objective_ratio(w, -1.0) == pytest.approx(0.0)
    assert objective_ratio(w, 5.0) == pytest.approx(1.0)
