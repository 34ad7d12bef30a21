"""Scoring: the fast IQM / probability-of-improvement equal rliable's; intervals behave."""

from __future__ import annotations

import numpy as np
import pytest
from rliable import metrics

from papergym.leaderboard.scoring import (
    interval_estimates,
    iqm,
    poi,
    probability_of_improvement,
)


@pytest.mark.parametrize("shape", [(1, 1), (3, 2), (5, 4), (10, 3)])
def test_iqm_and_poi_equal_rliable(shape):
    rng = np.random.default_rng(shape[0] * 10 + shape[1])
    x = rng.normal(size=shape).round(1)  # rounding makes ties, which count one half
    y = rng.normal(size=shape).round(1)
    assert iqm(x) == pytest.approx(metrics.aggregate_iqm(x), abs=1e-12)
    assert poi(x, y) == pytest.approx(metrics.probability_of_improvement(x, y), abs=1e-12)


def test_interval_contains_point_and_shrinks_with_data():
    rng = np.random.default_rng(0)
    small = rng.normal(1.0, 1.0, size=(3, 2))
    large = rng.normal(1.0, 1.0, size=(30, 2))
    est = interval_estimates({"small": small, "large": large})
    for point, lo, hi in est.values():
        assert lo <= point <= hi
    assert (est["large"][2] - est["large"][1]) < (est["small"][2] - est["small"][1])
    assert est == interval_estimates({"small": small, "large": large})  # seeded: reproducible


def test_poi_direction_and_dominance():
    better = np.full((5, 2), 2.0)
    worse = np.full((5, 2), 1.0)
    assert probability_of_improvement(better, worse, "max")[0] == 1.0
    assert probability_of_improvement(better, worse, "min")[0] == 0.0
    assert probability_of_improvement(better, better, "max")[0] == 0.5
