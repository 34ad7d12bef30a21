"""Soundness of the bisimulation metric is checked at the metric iteration's own tolerance."""

from __future__ import annotations

import numpy as np

from papergym.envs.abstraction import oracles
from papergym.envs.abstraction.core import MDP
from papergym.envs.abstraction.task import partition_metrics


def lazy_chain(n: int = 6, gamma: float = 0.9) -> MDP:
    """s -> s or s + 1 with probability 1/2 each (the last absorbing), rewards rising along the
    chain: V*(s) - V*(t) equals d*(s, t) on many pairs, and the iteration converges only
    geometrically, so it stops short of d*."""
    P = np.zeros((n, 1, n))
    for s in range(n):
        P[s, 0, s] += 0.5
        P[s, 0, min(s + 1, n - 1)] += 0.5
    return MDP(np.linspace(0.0, 1.0, n)[:, None], P, np.zeros(n, dtype=bool), gamma)


def test_the_metric_stops_within_its_shortfall_bound():
    for gamma in (0.9, 0.99):
        mdp = lazy_chain(gamma=gamma)
        d, _ = oracles.bisimulation_metric(mdp)
        d_star, _ = oracles.bisimulation_metric(mdp, tol=1e-15)
        shortfall = float((d_star - d).max())
        assert 1e-9 < shortfall <= oracles.metric_shortfall(mdp)  # 1e-9: the former check


def test_the_exact_metric_has_no_soundness_violation_on_a_lazy_chain():
    mdp = lazy_chain()
    oracle = oracles.build_oracle(mdp, with_metric=True)
    assert oracle.checks["soundness_violations"] == 0  # 16 at the former 1e-9
    labels = np.arange(mdp.n_states)
    row = partition_metrics(mdp, oracle, labels, tau=0.02, metric=oracle.metric)
    assert row["soundness_violations"] == 0


def test_an_unsound_metric_is_still_caught():
    mdp = lazy_chain()
    oracle = oracles.build_oracle(mdp, with_metric=True)
    low = oracle.metric - 100 * oracles.metric_shortfall(mdp)  # short by far more than the bound
    row = partition_metrics(mdp, oracle, np.arange(mdp.n_states), tau=0.02,
                            metric=np.maximum(low, 0.0))
    assert row["soundness_violations"] >= 10
