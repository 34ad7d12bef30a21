"""Scoring: the fast IQM / probability-of-improvement and their bootstrap intervals equal
rliable's exactly; intervals behave."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from rliable import library, metrics

from papergym.leaderboard.scoring import (
    interval_estimates,
    iqm,
    performance_profiles,
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


def rliable_intervals(score_dict, func, reps, seed=0):
    """rliable's own bootstrap (it draws indices from numpy's global RNG: seed it, restore)."""
    saved = np.random.get_state()
    np.random.seed(seed)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            points, intervals = library.get_interval_estimates(
                score_dict, func, reps=reps, random_state=np.random.RandomState(seed))
    finally:
        np.random.set_state(saved)
    return {k: (float(points[k][0]), float(intervals[k][0][0]), float(intervals[k][1][0]))
            for k in score_dict}


def test_iqm_intervals_equal_rliables():
    rng = np.random.default_rng(7)
    scores = {"a": rng.normal(size=(5, 3)).round(1), "b": rng.normal(size=(8, 3)),
              "c": rng.normal(size=(1, 2)), "d": rng.normal(size=(12, 7)).round(0)}
    got = interval_estimates(scores, reps=500)
    # rliable's bootstrap around the same IQM: identical resamples, identical numbers
    assert got == rliable_intervals(scores, lambda x: np.array([iqm(x)]), 500)
    # around rliable's own IQM (scipy's trimmed mean sums in another order): equal to 1e-12
    reference = rliable_intervals(scores, lambda x: np.array([metrics.aggregate_iqm(x)]), 500)
    for key in scores:
        assert got[key] == pytest.approx(reference[key], abs=1e-12)


@pytest.mark.parametrize("shape_x,shape_y", [((5, 3), (5, 3)), ((7, 4), (4, 4)), ((1, 2), (3, 2))])
def test_poi_intervals_equal_rliables(shape_x, shape_y):
    rng = np.random.default_rng(shape_x[0])
    x, y = rng.normal(size=shape_x).round(1), rng.normal(size=shape_y).round(1)
    n = min(len(x), len(y))
    for direction, sign in (("max", 1.0), ("min", -1.0)):
        pair = {"pair": [sign * x[:n], sign * y[:n]]}
        got = probability_of_improvement(x, y, direction, reps=400)
        assert got == rliable_intervals(pair, lambda a, b: np.array([poi(a, b)]), 400)["pair"]
        reference = rliable_intervals(
            pair, lambda a, b: np.array([metrics.probability_of_improvement(a, b)]), 400)["pair"]
        assert got == pytest.approx(reference, abs=1e-12)


def test_performance_profiles_equal_rliables_bit_for_bit():
    rng = np.random.default_rng(11)
    scores = {"a": rng.normal(size=(4, 3)).round(1), "b": rng.normal(size=(6, 3)),
              "c": rng.normal(size=(1, 5))}
    taus = np.linspace(-2.0, 2.0, 17)
    saved = np.random.get_state()
    np.random.seed(0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            expected = library.create_performance_profile(scores, taus, reps=300)
    finally:
        np.random.set_state(saved)
    profiles, bands = performance_profiles(scores, taus, reps=300)
    for key in scores:
        assert np.array_equal(profiles[key], expected[0][key])
        assert np.array_equal(bands[key], expected[1][key])
