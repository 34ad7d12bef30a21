"""Clustered units: the seed-level sign-flip test, its inverted interval, the ICC, and the
spec rule that items are independent only when no agent trains a per-seed artifact."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import yaml

from papergym.benchmarks.spec import SpecError, load_spec
from papergym.leaderboard.clustered import icc_oneway, sign_flip
from tests.conftest import FIXTURES, TOY_SPEC


def brute_p(d, target):
    """P(sum s_i (d_i - target) >= observed) over all 2^n sign vectors."""
    x = np.asarray(d) - target
    totals = [np.dot(s, x) for s in itertools.product((-1, 1), repeat=len(x))]
    return float(np.mean(np.array(totals) >= x.sum() - 1e-12))


def test_sign_flip_p_is_the_exact_permutation_p_and_the_interval_inverts_it():
    rng = np.random.default_rng(0)
    for n in (5, 8, 11):
        d = rng.normal(0.4, 1.0, size=n)
        for target in (-0.5, 0.0, 0.3, 1.0):
            got = sign_flip(d, 0.05, target)
            assert got.p_better == pytest.approx(brute_p(d, target))
            assert got.p_worse == pytest.approx(brute_p(-d, -target))
            # one statistic: the test rejects exactly where the bound lies beyond the target
            assert (got.p_better < 0.05) == (got.lo > target)
            assert (got.p_worse < 0.05) == (got.hi < target)
        assert got.lo <= got.mean <= got.hi and got.mean == pytest.approx(d.mean())


def test_sign_flip_best_case_is_two_to_the_minus_n():
    assert sign_flip([1.0, 2.0, 3.0, 4.0], 0.05).p_better == 1 / 16  # 4 seeds cannot hold
    assert sign_flip([1.0, 2.0, 3.0, 4.0], 0.05).lo == -np.inf
    five = sign_flip([1.0, 2.0, 3.0, 4.0, 5.0], 0.05)
    assert five.p_better == 1 / 32 and five.lo == 1.0  # the smallest subset mean


def test_sign_flip_beyond_16_seeds_is_monte_carlo_and_deterministic():
    d = np.random.default_rng(1).normal(0.5, 1.0, size=24)
    a, b = sign_flip(d, 0.05), sign_flip(d, 0.05)
    assert a == b and not a.exact
    assert a.lo < d.mean() < a.hi and a.p_better < 0.05


def test_icc_and_design_effect_follow_the_seed_share_of_the_variance():
    rng = np.random.default_rng(2)
    seeds = np.repeat(np.arange(40), 30)
    iid = rng.normal(size=seeds.size)
    icc, deff = icc_oneway(iid, seeds)
    assert icc < 0.05 and deff < 2.5
    shared = rng.normal(size=40)[seeds] + 0.5 * rng.normal(size=seeds.size)  # ICC 0.8
    icc, deff = icc_oneway(shared, seeds)
    assert 0.65 < icc < 0.9 and deff == pytest.approx(1 + 29 * icc)
    assert icc_oneway([1.0, 2.0], [0, 0]) == (None, None)  # one cluster


def test_independent_items_is_refused_for_agents_that_train_per_seed(tmp_path):
    from papergym.benchmarks.runner import checked_imports, resolve_imports
    from papergym.benchmarks.spec_checks import check_spec

    data = yaml.safe_load(TOY_SPEC.read_text())
    data["imports"] = [str(FIXTURES / "toy_problem.py")]
    data["problems"][0]["independent_items"] = True
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(data))
    spec = load_spec(path)
    checked_imports(resolve_imports(spec, path), str(path))
    with pytest.raises(SpecError, match=r"problems\.0\.independent_items: agent .* per-seed"):
        check_spec(spec, path, "smoke")
