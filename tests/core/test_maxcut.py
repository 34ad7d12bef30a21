"""papergym.maxcut: the one cut-value function and the exact MaxCut solvers."""

from __future__ import annotations

import numpy as np
import pytest

from papergym.maxcut import EXACT_MAX_NODES, MaxCutInstance, cut_value, exact_maxcut, exact_maxcut_frontier


def _random_instance(n: int, rng: np.random.Generator) -> MaxCutInstance:
    iu, iv = np.triu_indices(n, 1)
    keep = rng.random(iu.size) < 0.6
    weights = rng.integers(-5, 6, keep.sum()).astype(float)
    return MaxCutInstance("random", n, np.stack([iu[keep], iv[keep]], axis=1), weights)


def test_cut_value_agrees_on_edge_lists_dense_matrices_and_batches():
    rng = np.random.default_rng(0)
    for _ in range(20):
        instance = _random_instance(int(rng.integers(2, 12)), rng)
        sides = rng.integers(0, 2, (7, instance.n))
        by_hand = [sum(w for (u, v), w in zip(instance.edges, instance.weights) if s[u] != s[v])
                   for s in sides]
        assert cut_value(instance, sides) == pytest.approx(by_hand)
        assert cut_value(instance.adjacency(), sides) == pytest.approx(by_hand)
        assert instance.cut_value(sides[0]) == pytest.approx(by_hand[0])
        assert isinstance(cut_value(instance, sides[0]), float)


def test_cut_value_rejects_a_wrong_shape():
    instance = _random_instance(5, np.random.default_rng(1))
    with pytest.raises(ValueError, match="shape"):
        cut_value(instance, np.zeros(4))


def test_exact_maxcut_equals_plain_enumeration():
    rng = np.random.default_rng(2)
    for n in (1, 2, 5, 9, 12):
        instance = _random_instance(n, rng)
        every = (np.arange(1 << n)[:, None] >> np.arange(n)) & 1
        best = float(cut_value(instance, every).max()) if n > 1 else 0.0
        for graph in (instance, instance.adjacency()):
            value, sides = exact_maxcut(graph)
            assert value == pytest.approx(best, abs=1e-9)
            assert cut_value(instance, sides) == pytest.approx(value, abs=1e-9)


def test_exact_maxcut_refuses_large_graphs():
    with pytest.raises(ValueError, match=str(EXACT_MAX_NODES)):
        exact_maxcut(np.zeros((EXACT_MAX_NODES + 1, EXACT_MAX_NODES + 1)))


def test_frontier_dp_equals_enumeration_and_handles_a_long_chain():
    rng = np.random.default_rng(3)
    for n in (1, 2, 6, 11, 14):
        instance = _random_instance(n, rng)  # negative weights too
        value, sides = exact_maxcut_frontier(instance)
        assert value == pytest.approx(exact_maxcut(instance)[0], abs=1e-9)
        assert cut_value(instance, sides) == pytest.approx(value, abs=1e-9)
    # a 60-vertex ladder (frontier 2), far beyond enumeration: bipartite, so every edge is cut
    n = 60
    edges = np.array([(v, v + 1) for v in range(n - 1)] + [(v, v + 3) for v in range(n - 3)])
    ladder = MaxCutInstance("ladder", n, edges, rng.integers(1, 9, len(edges)).astype(float))
    value, sides = exact_maxcut_frontier(ladder)
    assert value == pytest.approx(ladder.weights.sum()) and cut_value(ladder, sides) == pytest.approx(value)


def test_frontier_dp_refuses_a_wide_frontier():
    n = 30
    iu, iv = np.triu_indices(n, 1)
    dense = MaxCutInstance("dense", n, np.stack([iu, iv], axis=1), np.ones(iu.size))
    with pytest.raises(ValueError, match="frontier width"):
        exact_maxcut_frontier(dense)
