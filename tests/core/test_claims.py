"""Claims: verdicts follow the data, in both directions, state the statistic they test, and say
when data are too few. Oracles are independent: brute-force Walsh averages, scipy's exact
Wilcoxon inverted by scanning, scipy's Wilson interval, numpy proportions."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from papergym.benchmarks.spec import (
    BenchmarkSpec,
    ClaimSpec,
    MetricSpec,
    ProblemSection,
    TierSpec,
)
from papergym.leaderboard.claims import (
    clopper_pearson,
    discrimination,
    evaluate_claim,
    evaluate_claims,
    hl_interval,
    holm,
    tally,
)
from papergym.leaderboard.power import best_case, needed_n, wilson
from papergym.leaderboard.store import Row

SECTION = ProblemSection(
    name="s", problem="papergym/FixtureReach-v0", metric=MetricSpec(name="score", direction="max"),
    tiers={"smoke": TierSpec()}, agents=[{"id": "a"}, {"id": "b"}, {"id": "c"}],
)
# the same section declaring its items independent (deterministic rule agents only)
ITEMS = SECTION.model_copy(update={"independent_items": True})


def row(agent, seed, metrics, kwargs=None, units=(), key=None):
    return Row(key=key or f"{agent}-{seed}-{kwargs}", benchmark="t", section="s", tier="smoke",
               problem_id="p", problem_kwargs=dict(kwargs or {}), agent=agent, agent_id=agent,
               agent_role="baseline", agent_config={}, seed=seed, status="ok",
               metrics=metrics, units=list(units))


def rows(agent, values, cells=1):
    return [row(agent, i // cells, {"score": float(v), "steps": float(10 * v)}, {"cell": i % cells})
            for i, v in enumerate(values)]


def instance_rows(agent, diffs_by_seed, metric="score"):
    """One trial per seed whose units carry ``metric`` per instance."""
    return [row(agent, seed, {metric: float(np.mean(v))},
                units=[{"instance": i, metric: float(x)} for i, x in enumerate(v)])
            for seed, v in enumerate(diffs_by_seed)]


def compare(**kw):
    kw.setdefault("baseline", "b")
    return ClaimSpec(id="c", statement="a beats b", problem="s", kind="compare", agent="a", **kw)


# --- the estimator beside a Wilcoxon verdict: Hodges–Lehmann and its exact Walsh bounds


def brute_hl(d):
    return float(np.median([(d[i] + d[j]) / 2 for i in range(len(d)) for j in range(i, len(d))]))


def scanned_lower_bound(d, alpha):
    """sup{theta : exact one-sided Wilcoxon of d - theta > 0 rejects at alpha}, scanning just
    below each Walsh average (the interval is the inverted test)."""
    walsh = sorted({(d[i] + d[j]) / 2 for i in range(len(d)) for j in range(i, len(d))})
    best = -np.inf
    for w in walsh:
        p = stats.wilcoxon(d - (w - 1e-9), alternative="greater", method="exact").pvalue
        if p <= alpha:
            best = w
    return best


@pytest.mark.parametrize("n", [6, 9, 14])
def test_hodges_lehmann_and_bounds_match_brute_force_and_inverted_exact_test(n):
    d = np.random.default_rng(n).normal(0.3, 1.0, size=n)
    point, lo, hi = hl_interval(d, 0.05)
    assert point == pytest.approx(brute_hl(d))
    assert lo == pytest.approx(scanned_lower_bound(d, 0.05))
    assert -hi == pytest.approx(scanned_lower_bound(-d, 0.05))  # the upper bound, mirrored


def test_compare_effect_is_the_hodges_lehmann_shift_and_verdicts_go_both_ways():
    rng = np.random.default_rng(0)
    base = rng.normal(size=20)
    noise = rng.normal(scale=0.3, size=20)
    up = evaluate_claim(compare(), SECTION, rows("a", base + 1 + noise) + rows("b", base))
    assert up.verdict == "holds" and up.effect_name == "Hodges-Lehmann shift"
    assert up.effect == pytest.approx(brute_hl(1 + noise)) and up.ci[0] > 0
    assert up.ci_level == pytest.approx(0.9)
    down = evaluate_claim(compare(), SECTION, rows("a", base - 1 + noise) + rows("b", base))
    assert down.verdict == "fails" and down.ci[1] < 0
    mixed = evaluate_claim(compare(), SECTION, rows("a", base + noise) + rows("b", base))
    assert mixed.verdict == "inconclusive"


def test_heavy_tailed_pattern_of_kgqa_c2_never_holds():
    """1200 questions: 182 with one redundant move fewer, 30 with up to 40 more, the rest
    tied. The shift is 0; the signed-rank test ranks the zeros against the side tested, as
    the Hodges-Lehmann interval counts them, so it no longer rejects while the interval holds
    0 (it used to drop the zeros: p < 1e-10 beside an interval [0, ...])."""
    rng = np.random.default_rng(2)
    chrono = rng.integers(0, 5, size=1200).astype(float)
    change = np.zeros(1200)
    change[:182] = -1.0
    change[182:212] = rng.integers(1, 41, size=30)
    bog = chrono + change
    claim = compare(baseline="b", metric="redundant", direction="min", unit="instance")
    per_seed = [bog[i::4] for i in range(4)], [chrono[i::4] for i in range(4)]
    data = (instance_rows("a", per_seed[0], "redundant")
            + instance_rows("b", per_seed[1], "redundant"))
    v = evaluate_claim(claim, ITEMS, data)
    assert v.verdict in ("fails", "inconclusive")
    assert v.p_value > 0.05 and v.ci[0] <= 0.0  # test and interval agree
    assert v.effect == pytest.approx(brute_hl(-change[:600])) == 0.0
    assert v.n_units == 1200 and v.unit == "item"
    # items of 4 trained seeds: 4 independent units, 2^-4 > 0.05
    clustered = evaluate_claim(claim, SECTION, data)
    assert clustered.unit == "seed" and clustered.n_units == clustered.n_clusters == 4
    assert clustered.verdict == "underpowered"


def test_margin_on_better_moves_the_bar_for_test_and_bound():
    rng = np.random.default_rng(3)
    base = rng.normal(size=30)
    shift = 0.5 + rng.normal(scale=0.1, size=30)
    data = rows("a", base + shift) + rows("b", base)
    assert evaluate_claim(compare(margin=0.2), SECTION, data).verdict == "holds"
    assert evaluate_claim(compare(margin=0.5), SECTION, data).verdict == "inconclusive"
    assert evaluate_claim(compare(margin=0.8), SECTION, data).verdict == "fails"


def test_compare_min_ratio_and_no_worse():
    a, b = np.arange(1, 21, dtype=float), np.arange(1, 21, dtype=float) * 3
    claim = compare(metric="steps", direction="min", min_ratio=5)
    assert evaluate_claim(claim, SECTION, rows("a", a) + rows("b", b)).verdict == "fails"
    claim = compare(metric="steps", direction="min", min_ratio=2)
    assert evaluate_claim(claim, SECTION, rows("a", a) + rows("b", b)).verdict == "holds"
    same = compare(expect="no_worse", margin=0.1)
    v = evaluate_claim(same, SECTION, rows("a", a) + rows("b", a))
    # every difference zero: a signed-rank test against the margin would count each tie as a
    # win (it used to hold); refused above 20% zeros
    assert v.verdict == "not evaluable" and "zero" in v.detail
    worse = evaluate_claim(same, SECTION, rows("a", a - 1) + rows("b", a))
    assert worse.verdict == "fails"


def test_sign_test_is_exact_mcnemar_with_the_paired_proportion_difference():
    a = [1] * 12 + [0] * 8 + [1] * 5
    b = [0] * 12 + [0] * 8 + [1] * 5
    v = evaluate_claim(compare(test="sign"), SECTION, rows("a", a) + rows("b", b))
    assert v.p_value == pytest.approx(0.5 ** 12) and v.verdict == "holds"
    assert v.effect == pytest.approx(np.mean(a) - np.mean(b))
    assert v.effect_name == "paired proportion difference"
    assert 0 < v.ci[0] < v.effect < v.ci[1] < 1


def test_holm_adjustment():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])


# --- power: the best achievable p or bound


@pytest.mark.parametrize("n", [3, 5, 8])
def test_best_p_is_the_exact_all_agree_p_times_the_baselines(n):
    exact = stats.wilcoxon(np.arange(1.0, n + 1), alternative="greater", method="exact").pvalue
    assert best_case("compare", n).best == pytest.approx(exact)
    assert best_case("compare", n, baselines=2).best == pytest.approx(min(1, 2 * exact))
    binom = stats.binomtest(n, n, 0.5, alternative="greater").pvalue
    assert best_case("compare", n, test="sign").best == pytest.approx(binom)


def test_needed_units_for_the_rlvr_vcpo_b2_setting():
    assert not best_case("compare", 5, baselines=2).reachable  # 2 x 2^-5 = 0.0625
    assert needed_n("compare", baselines=2) == 6
    assert needed_n("compare") == 5
    assert needed_n("trend") == 5


def test_rate_bounds_are_clopper_pearson_and_58_of_58_cannot_reach_095():
    ci = stats.binomtest(35, 36).proportion_ci(confidence_level=0.90, method="wilson")
    assert wilson(35, 36, 0.05) == pytest.approx((ci.low, ci.high))  # shown beside
    exact = stats.binomtest(35, 36).proportion_ci(confidence_level=0.90, method="exact")
    assert clopper_pearson(35, 36, 0.05) == pytest.approx((exact.low, exact.high))
    assert not best_case("rate", 58, at_least=0.95).reachable  # Wilson reached it at 36
    n = needed_n("rate", at_least=0.95)
    assert n == 59 and clopper_pearson(n, n, 0.05)[0] >= 0.95 > clopper_pearson(n - 1, n - 1,
                                                                                 0.05)[0]


def test_underpowered_at_small_n_is_never_inconclusive():
    few = evaluate_claim(compare(baseline=["b", "c"]), SECTION,
                         rows("a", np.arange(5) + 1.0) + rows("b", np.zeros(5))
                         + rows("c", np.zeros(5)))
    assert few.verdict == "underpowered" and few.best_p == pytest.approx(0.0625)
    assert few.effect > 0
    rate = ClaimSpec(id="r", statement="", problem="s", kind="rate", agent="a", op=">=",
                     value=0.5, at_least=0.95)
    v = evaluate_claim(rate, SECTION, rows("a", [1.0] * 35 + [0.0]))
    assert v.verdict == "underpowered"


def test_threshold_and_rate():
    values = np.linspace(0.9, 1.1, 30)
    thr = ClaimSpec(id="t", statement="", problem="s", kind="threshold", agent="a", stat="iqm",
                    op=">=", value=0.5)
    assert evaluate_claim(thr, SECTION, rows("a", values)).verdict == "holds"
    thr_max = thr.model_copy(update={"stat": "max", "op": "<=", "value": 1.0})
    assert evaluate_claim(thr_max, SECTION, rows("a", values)).verdict == "fails"
    rate = ClaimSpec(id="r", statement="", problem="s", kind="rate", agent="a", op=">",
                     value=1.0, at_least=0.9)
    v = evaluate_claim(rate, SECTION, rows("a", values))
    assert v.verdict == "fails" and v.effect == pytest.approx(15 / 30)


def test_where_filters_cells_and_missing_data_says_so():
    claim = compare(where={"cell": 1})
    v = evaluate_claim(claim, SECTION, rows("a", np.ones(10), cells=2) + rows("b", np.zeros(10), cells=2))
    assert v.n_units == 5
    assert evaluate_claim(compare(), SECTION, rows("b", [1.0])).verdict == "no data"


def trend_rows(slope, seeds, agent="a"):
    return [row(agent, seed, {"score": slope * eps + 0.01 * seed}, {"epsilon": eps})
            for seed in range(seeds) for eps in (0.1, 1.0, 10.0, 100.0)]


def test_trend_sign_test_over_seeds():
    claim = ClaimSpec(id="t", statement="", problem="s", kind="trend", agent="a",
                      axis="epsilon", trend="increasing")
    up = evaluate_claim(claim, SECTION, trend_rows(1.0, 6))
    assert up.verdict == "holds" and up.p_value == pytest.approx(1 / 64)
    assert up.effect == pytest.approx(1.0)  # six of six seeds agree, none disagree
    assert evaluate_claim(claim, SECTION, trend_rows(-1.0, 6)).verdict == "fails"
    assert evaluate_claim(claim, SECTION, trend_rows(1.0, 2)).verdict == "underpowered"


# --- roles, requires, discriminative sections, tallies


def spec_with(claims, trivial=None, reference=None):
    section = SECTION.model_copy(update={"trivial": trivial, "reference": reference})
    return BenchmarkSpec(name="t", family="fixture", paper={"key": "k", "title": "t"},
                         problems=[section], claims=claims)


def test_requires_turns_a_failed_precondition_into_not_evaluable():
    c0 = ClaimSpec(id="C0", statement="", problem="s", kind="compare", agent="b", baseline="c",
                   role="sanity")
    c1 = ClaimSpec(id="C1", statement="", problem="s", kind="compare", agent="a", baseline="b",
                   requires=["C0"])
    data = rows("a", np.arange(10) + 5.0) + rows("b", np.zeros(10)) + rows("c", np.ones(10))
    v1, v0 = evaluate_claims(spec_with([c1, c0]), "smoke", data)  # spec order, C0 first evaluated
    assert (v1.verdict, v0.verdict) == ("not evaluable", "fails")
    assert "requires C0 (fails)" in v1.detail and v1.effect > 0 and v1.role == "paper"
    assert tally([v0, v1]) == {"holds": 0, "fails": 0, "inconclusive": 0, "underpowered": 0,
                               "not evaluable": 1, "other": 0}


def test_non_discriminative_section_gates_paper_claims_only():
    rng = np.random.default_rng(4)
    noise = rng.normal(size=12)
    data = (rows("a", noise + 3) + rows("b", noise + rng.normal(scale=0.5, size=12))
            + rows("c", noise))
    paper = compare(baseline="b")
    sanity = ClaimSpec(id="S", statement="", problem="s", kind="compare", agent="a",
                       baseline="c", role="sanity")
    flat = spec_with([paper, sanity], trivial="c", reference="b")
    check = discrimination(flat, "smoke", data)["s"]
    assert check.status == "non-discriminative" and check.ci[0] <= 0 <= check.ci[1]
    v_paper, v_sanity = evaluate_claims(flat, "smoke", data)
    assert v_paper.verdict == "not evaluable" and "non-discriminative" in v_paper.detail
    assert v_sanity.verdict == "holds"
    sharp = spec_with([paper], trivial="c", reference="a")
    assert discrimination(sharp, "smoke", data)["s"].status == "discriminative"
    assert evaluate_claims(sharp, "smoke", data)[0].verdict == "holds"


# --- contract extensions


def test_units_where_and_group_by_inside_a_trial():
    def trials(agent, bonus):
        return [row(agent, seed, {"score": 0.0}, units=[
            {"instance": f"{p}-{s}", "prompt": p, "hard": p % 2,
             "score": float(p + s + (bonus if p % 2 else 0) + 0.01 * seed)}
            for p in range(8) for s in range(4)]) for seed in range(3)]

    data = trials("a", 1.0) + trials("b", 0.0)
    grouped = compare(unit="instance", units={"group_by": "prompt"})
    v = evaluate_claim(grouped, ITEMS, data)
    assert v.n_units == 3 * 8  # (seed, prompt) units, samples averaged
    hard = compare(unit="instance", units={"where": {"hard": 1}, "group_by": "prompt"})
    v = evaluate_claim(hard, ITEMS, data)
    assert v.n_units == 3 * 4 and v.verdict == "holds" and v.effect == pytest.approx(1.0)
    v = evaluate_claim(hard, SECTION, data)  # seeds as the units: 3 of them
    assert (v.n_units, v.unit, v.verdict) == (3, "seed", "underpowered")
    declared = TierSpec(units_per_trial={"prompt": 8, "instance": 32})
    assert evaluate_claim(grouped, ITEMS, data, tier_spec=declared).verdict == "holds"
    wrong = TierSpec(units_per_trial={"prompt": 10})
    v = evaluate_claim(grouped, ITEMS, data, tier_spec=wrong)
    assert v.verdict == "not evaluable" and "declares 10" in v.detail


def test_units_averaged_over_seeds_are_cell_instances():
    # the agent's per-instance values only repeat over seeds (a deterministic rule): counted
    # per seed they would narrow the interval threefold without new evidence
    values = np.random.default_rng(0).normal(0.3, 0.2, size=12)
    data = instance_rows("a", [values for seed in range(3)], metric="rho")
    fields = dict(id="t", statement="", problem="s", kind="threshold", agent="a", metric="rho",
                  stat="mean", op="<", value=0.5, unit="instance")
    per_seed = ClaimSpec(**fields)
    pooled = ClaimSpec(**fields, units={"average_seeds": True})
    narrow, honest = evaluate_claim(per_seed, ITEMS, data), evaluate_claim(pooled, SECTION, data)
    assert narrow.n_units == 36 and honest.n_units == 12 and honest.unit == "item"
    assert honest.effect == pytest.approx(values.mean())
    assert honest.ci[1] - honest.ci[0] > 1.4 * (narrow.ci[1] - narrow.ci[0])
    # seeds that differ were scored by different artifacts: averaging them is refused
    trained = instance_rows("a", [values + 1e-3 * seed for seed in range(3)], metric="rho")
    refused = evaluate_claim(pooled, SECTION, trained)
    assert refused.verdict == "not evaluable" and "differs between seeds" in refused.detail
    clustered = evaluate_claim(per_seed, SECTION, trained)
    assert (clustered.unit, clustered.n_units) == ("seed", 3)
    assert clustered.effect == pytest.approx(values.mean() + 1e-3)
    rank = ClaimSpec(id="r", statement="", problem="s", kind="rank", agent="a", baseline="b",
                     metric="rho", unit="instance", units={"average_seeds": True})
    data += instance_rows("b", [values - 0.1 for _ in range(3)], metric="rho")
    v = evaluate_claim(rank, SECTION, data)
    assert v.n_units == 12 and v.effect == pytest.approx(1.0)


def test_pairing_across_cells_lag_zero_against_lag_k():
    data = [row(agent, seed, {"score": 1.0 + seed - 0.1 * lag + (0.05 if agent == "a" else 0)},
                {"lag": lag, "d": d})
            for agent in ("a", "b") for seed in range(4) for lag in (0, 8) for d in (2, 3)]
    claim = compare(baseline="a", agent_at={"lag": 0}, baseline_at={"lag": 8})
    claim = claim.model_copy(update={"agent": "b"})
    v = evaluate_claim(claim, SECTION, data)
    assert v.n_units == 8 and v.verdict == "holds"  # (d, seed) units
    assert v.effect == pytest.approx(0.8 - 0.05)


def test_interaction_difference_of_differences():
    def data(gain_few, gain_many):
        out = []
        for seed in range(8):
            for steps, gain in ((10, gain_few), (1000, gain_many)):
                base = seed + 0.1 * steps
                jitter = 0.01 * ((seed * 7) % 5)
                out.append(row("b", seed, {"score": base}, {"steps": steps}))
                out.append(row("a", seed, {"score": base + gain + jitter}, {"steps": steps}))
        return out

    claim = ClaimSpec(id="I", statement="", problem="s", kind="interaction", agent="a",
                      baseline="b", larger_at={"steps": 10}, than_at={"steps": 1000})
    v = evaluate_claim(claim, SECTION, data(1.0, 0.2))
    assert v.verdict == "holds" and v.n_units == 8 and v.effect == pytest.approx(0.8)
    assert evaluate_claim(claim, SECTION, data(0.2, 1.0)).verdict == "fails"


def test_walsh_rank_duality_holds_on_exhaustive_sign_patterns():
    """For n = 6, every sign pattern of ranks 1..6: the bound beyond 0 iff the exact test
    rejects (the interval is the inverted test)."""
    for signs in itertools.product((-1, 1), repeat=6):
        d = np.array(signs) * np.arange(1.0, 7.0)
        _, lo, _ = hl_interval(d, 0.05)
        p = stats.wilcoxon(d, alternative="greater", method="exact").pvalue
        assert (lo > 0) == (p <= 0.05)


def test_tied_signed_ranks_are_exact_by_enumeration():
    from papergym.leaderboard.claims import _signed_rank_p

    d = np.array([1.0, 1.0, 2.0, 2.0, 2.0, -1.0, 3.0, 3.0, -2.0])
    oracle = stats.wilcoxon(d, alternative="greater", method=stats.PermutationMethod()).pvalue
    assert _signed_rank_p(d)[0] == pytest.approx(oracle)


def test_sign_no_worse_within_a_margin():
    same = [1] * 30 + [0] * 30
    claim = compare(test="sign", expect="no_worse", margin=0.1)
    v = evaluate_claim(claim, SECTION, rows("a", same) + rows("b", same))
    assert v.verdict == "holds" and v.effect == 0 and v.ci[0] > -0.1
    worse = [0] * 20 + same[20:]
    assert evaluate_claim(claim, SECTION, rows("a", worse) + rows("b", same)).verdict == "fails"


def rate_trend_rows(shares, n_per_level, agent="a"):
    """One trial per axis level whose instance units hit (score 1) at the given share."""
    out = []
    for level, share in enumerate(shares):
        hits = int(round(share * n_per_level))
        units = [{"instance": i, "score": float(i < hits)} for i in range(n_per_level)]
        out.append(row(agent, 0, {"score": hits / n_per_level}, {"size": 2 * level + 2},
                       units=units))
    return out


def rate_trend_claim(trend="increasing"):
    return ClaimSpec(id="rt", statement="", problem="s", kind="rate_trend", agent="a",
                     metric="score", unit="instance", op=">=", value=0.5, axis="size",
                     trend=trend)


def test_rate_trend_tests_a_rising_share_with_cochran_armitage_and_newcombe():
    up = evaluate_claim(rate_trend_claim(), ITEMS, rate_trend_rows([0.0, 0.5, 1.0], 20))
    assert up.verdict == "holds" and up.effect == pytest.approx(1.0)
    assert up.ci[0] > 0 and up.n_units == 60 and up.p_value < 1e-6
    assert "size=2: 0/20" in up.detail and "size=6: 20/20" in up.detail
    # the mirror image fails, a flat share is inconclusive
    down = evaluate_claim(rate_trend_claim(), ITEMS, rate_trend_rows([1.0, 0.5, 0.0], 20))
    assert down.verdict == "fails" and down.ci[1] < 0
    flat = evaluate_claim(rate_trend_claim(), ITEMS, rate_trend_rows([0.5, 0.5, 0.5], 20))
    assert flat.verdict == "inconclusive" and flat.p_value == pytest.approx(0.5)
    assert evaluate_claim(rate_trend_claim("decreasing"), ITEMS,
                          rate_trend_rows([1.0, 0.5, 0.0], 20)).verdict == "holds"


def test_rate_trend_statistic_matches_a_two_group_z_test_and_power_is_checked():
    from papergym.leaderboard.claims import cochran_armitage

    # two levels: Cochran-Armitage is the pooled two-proportion z test
    k1, n1, k2, n2 = 3, 20, 12, 25
    pooled = (k1 + k2) / (n1 + n2)
    z = (k2 / n2 - k1 / n1) / np.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    assert cochran_armitage([k1, k2], [n1, n2]) == pytest.approx(z, rel=1e-12)
    tiny = evaluate_claim(rate_trend_claim(), ITEMS, rate_trend_rows([0.0, 1.0], 1))
    assert tiny.verdict == "underpowered"
    # best case at n = 2: one unit at each end, p = 1 - Phi(sqrt(2)) = 0.079 > 0.05
    assert not best_case("rate_trend", 2).reachable and best_case("rate_trend", 20).reachable
    assert needed_n("rate_trend") == 4
    with pytest.raises(ValueError, match="axis and trend"):
        ClaimSpec(id="rt", statement="", problem="s", kind="rate_trend", agent="a", op=">=",
                  value=0.5)
# --------------------------------------------------------------------------- rank
def rank_claim(**kw):
    kw.setdefault("baseline", ["b", "c"])
    return ClaimSpec(id="r", statement="a ranks first most often", problem="s", kind="rank",
                     agent="a", unit="instance", **kw)


def ranked_rows(table, seeds=1):
    """table: agent -> per-instance values (the same for every seed)."""
    return [r for agent, values in table.items()
            for r in instance_rows(agent, [values] * seeds)]


def test_rank_holds_when_the_agent_is_first_on_most_instances():
    rng = np.random.default_rng(0)
    base = rng.random(30)
    table = {"a": base + 0.2, "b": base + 0.1 * rng.random(30), "c": base}
    table["a"][:3] = 0.0  # last on three instances
    verdict = evaluate_claim(rank_claim(), ITEMS, ranked_rows(table, seeds=2))
    assert verdict.verdict == "holds"
    assert verdict.n_units == 30  # (cell, instance): seeds are averaged, not counted
    assert verdict.effect == pytest.approx(27 / 30)
    assert "a first on 27 of 30 instances" in verdict.detail
    values = np.array([table[x] for x in "abc"]).T
    friedman = stats.friedmanchisquare(*values.T).pvalue
    assert f"Friedman p={friedman:.3g}" in verdict.detail
    lo, hi = verdict.ci
    assert lo < 0.9 < hi


def test_rank_fails_when_a_baseline_is_first_more_often():
    rng = np.random.default_rng(1)
    base = rng.random(25)
    verdict = evaluate_claim(rank_claim(), ITEMS,
                             ranked_rows({"a": base, "b": base + 0.3, "c": base - 0.1}))
    assert verdict.verdict == "fails" and verdict.effect == 0.0


def test_rank_is_underpowered_with_few_instances_and_shares_ties():
    few = evaluate_claim(rank_claim(), ITEMS,
                         ranked_rows({"a": [1.0, 1.0, 1.0], "b": [0.0] * 3, "c": [0.5] * 3}))
    assert few.verdict == "underpowered"  # 2 x 2^-3 > 0.05 even with three wins
    tied = evaluate_claim(rank_claim(ties_within=0.01), ITEMS,
                          ranked_rows({"a": [1.0] * 12, "b": [0.995] * 12, "c": [0.0] * 12}))
    assert tied.effect == 1.0 and "b 12" in tied.detail  # a and b share every first place
    assert tied.verdict == "inconclusive"  # never first alone against b


def _flip_p(values):
    """Oracle: the one-sided sign-flip p of mean(values) > 0 by brute force over 2^n signs."""
    values = np.asarray(values, dtype=float)
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=len(values))))
    return float(np.mean(signs @ values >= values.sum() - 1e-12))


def per_seed_ranked_rows(tables):
    """tables: per seed, agent -> per-instance values (each seed's own trained models)."""
    return [row(agent, seed, {"score": float(np.mean(v))},
                units=[{"instance": i, "score": float(x)} for i, x in enumerate(v)])
            for seed, table in enumerate(tables) for agent, v in table.items()]


def test_rank_by_seed_tests_the_net_share_of_first_places_over_seeds():
    rng = np.random.default_rng(3)
    tables = []
    for _ in range(8):
        base = rng.random(20)
        tables.append({"a": base + rng.normal(0.1, 0.1, 20), "b": base, "c": base - 0.05})
    verdict = evaluate_claim(rank_claim(), SECTION, per_seed_ranked_rows(tables))
    assert (verdict.unit, verdict.n_units, verdict.n_clusters) == ("seed", 8, 8)
    nets = {b: [np.mean((t["a"] > t[b]) & (t["a"] > t["b" if b == "c" else "c"]))
                - np.mean((t[b] > t["a"]) & (t[b] > t["b" if b == "c" else "c"]))
                for t in tables] for b in "bc"}
    ps = sorted(_flip_p(nets[b]) for b in "bc")  # Holm over 2 baselines
    assert verdict.p_value == pytest.approx(max(2 * ps[0], ps[1]))
    assert verdict.verdict == "holds" and verdict.ci[0] > 0
    assert verdict.effect == pytest.approx(min(np.mean(nets["b"]), np.mean(nets["c"])))


def test_rank_by_seed_does_not_count_one_seeds_luck_once_per_instance():
    """Five seeds where a is far ahead on every instance, three where it is just behind:
    averaged over seeds a is first everywhere (the item-level test holds over 30 instances),
    but 5 of 8 trained models is no evidence."""
    base = np.linspace(0, 1, 30)
    tables = [{"a": base + (1.0 if s < 5 else -0.1), "b": base, "c": base - 0.2}
              for s in range(8)]
    data = per_seed_ranked_rows(tables)
    assert evaluate_claim(rank_claim(), ITEMS, data).verdict == "holds"
    by_seed = evaluate_claim(rank_claim(), SECTION, data)
    assert by_seed.verdict == "inconclusive" and by_seed.unit == "seed"
    assert by_seed.effect == pytest.approx((5 - 3) / 8)
    assert "first on a share 0.625" in by_seed.detail
    # three seeds cannot reach alpha against two baselines (2 x 2^-3): underpowered
    few = evaluate_claim(rank_claim(), SECTION, per_seed_ranked_rows(tables[:3]))
    assert few.verdict == "underpowered" and few.n_units == 3


def per_seed_trend_rows(shares_by_seed, n_items=20):
    """Per seed, one trial per axis level hitting (score 1) on the given share of its items."""
    out = []
    for seed, shares in enumerate(shares_by_seed):
        for level, share in enumerate(shares):
            hits = int(round(share * n_items))
            units = [{"instance": i, "score": float(i < hits)} for i in range(n_items)]
            out.append(row("a", seed, {"score": hits / n_items}, {"size": 2 * level + 2},
                           units=units))
    return out


def test_rate_trend_by_seed_tests_per_seed_fitted_changes_over_seeds():
    rng = np.random.default_rng(4)
    shares = np.clip(np.round(np.array([0.2, 0.4, 0.6]) + rng.normal(0, 0.1, (6, 3)), 2), 0, 1)
    shares = np.round(shares * 20) / 20
    verdict = evaluate_claim(rate_trend_claim(), SECTION, per_seed_trend_rows(shares))
    changes = [2 * np.polyfit([0, 1, 2], s, 1)[0] for s in shares]  # slope x (levels - 1)
    assert (verdict.unit, verdict.n_units) == ("seed", 6)
    assert verdict.effect == pytest.approx(np.mean(changes))
    assert verdict.p_value == pytest.approx(_flip_p(changes))
    assert verdict.verdict == "holds"
    # two levels: the change is the last share minus the first; decreasing flips the sign
    two = evaluate_claim(rate_trend_claim("decreasing"), SECTION,
                         per_seed_trend_rows([[0.5, 0.25]] * 5))
    assert two.effect == pytest.approx(0.25) and two.verdict == "holds"


def test_rate_trend_by_seed_does_not_pool_items_of_three_lucky_seeds():
    """Three seeds rise from 0 to 1, three fall slightly: 120 pooled items rise strongly
    (Cochran-Armitage holds), the per-seed changes do not (p = 8/64)."""
    data = per_seed_trend_rows([[0.0, 1.0]] * 3 + [[0.3, 0.2]] * 3)
    assert evaluate_claim(rate_trend_claim(), ITEMS, data).verdict == "holds"
    by_seed = evaluate_claim(rate_trend_claim(), SECTION, data)
    assert by_seed.verdict == "inconclusive" and by_seed.p_value == pytest.approx(8 / 64)
    assert "conditional on these trained models" in by_seed.detail


def test_rank_claim_needs_instance_units_and_baselines():
    with pytest.raises(ValueError, match="rank claim"):
        ClaimSpec(id="r", statement="", problem="s", kind="rank", agent="a", baseline="b")
    with pytest.raises(ValueError, match="rank claim"):
        ClaimSpec(id="r", statement="", problem="s", kind="rank", agent="a", unit="instance")
# --- censored data (never reached) and changes from reference agents


def censored_rows(agent, bits):
    """One trial per seed; None = the event never happened (no value stored, flag 0)."""
    return [row(agent, seed, {"reached": 0.0} if b is None else {"reached": 1.0, "bits": float(b)})
            for seed, b in enumerate(bits)]


def test_censored_units_rank_behind_every_reached_one_and_two_censored_tie():
    agent = [10.0] * 9 + [None] * 3  # reaches in 9 of 12
    base = [40.0] * 3 + [None] * 9  # reaches in 3 of 12
    claim = compare(metric="bits", direction="min", test="sign", censored="reached", min_ratio=2)
    v = evaluate_claim(claim, SECTION, censored_rows("a", agent) + censored_rows("b", base))
    # every unit counts: 3 reached-both (a wins), 6 only a reached (a wins), 3 both censored (tie)
    assert v.n_units == 12 and v.verdict == "holds"
    assert v.p_value == pytest.approx(0.5 ** 9)
    assert "never reached (reached = 0): a 3/12, b 9/12" in v.detail
    # the same rows without censoring keep only the 3 units where both reached
    plain = compare(metric="bits", direction="min", min_ratio=2)
    assert evaluate_claim(plain, SECTION, censored_rows("a", agent)
                          + censored_rows("b", base)).n_units == 3
    # an agent that never reaches against one that always does fails, whatever its bits
    never = evaluate_claim(claim, SECTION, censored_rows("a", [None] * 12)
                           + censored_rows("b", [1e9] * 12))
    assert never.verdict == "fails"


def test_changes_from_reference_agents_compare_degradations():
    def data(drop_a, drop_b):
        out = []
        for seed in range(10):
            level = 0.8 + 0.01 * seed
            jitter = 0.001 * ((seed * 7) % 5)
            out += [row("a0", seed, {"score": level}), row("a", seed, {"score": level - drop_a - jitter}),
                    row("b0", seed, {"score": level + 0.05}),
                    row("b", seed, {"score": level + 0.05 - drop_b})]
        return out

    claim = compare(agent_ref="a0", baseline_ref="b0")
    v = evaluate_claim(claim, SECTION, data(0.01, 0.10))  # a degrades by 1 pt, b by 10
    assert v.verdict == "holds" and v.n_units == 10
    assert v.effect == pytest.approx(0.09 - 0.002, abs=2e-3)
    assert "changes from a0 / b0" in v.effect_name
    assert evaluate_claim(claim, SECTION, data(0.10, 0.01)).verdict == "fails"
    # levels alone say the opposite: b is above a even when it degrades more
    assert evaluate_claim(compare(), SECTION, data(0.01, 0.02)).verdict == "fails"


def test_censored_and_reference_fields_are_validated():
    with pytest.raises(ValueError, match="test: sign"):
        compare(metric="bits", direction="min", censored="reached")
    with pytest.raises(ValueError, match="go together"):
        compare(agent_ref="a0")
    with pytest.raises(ValueError, match="go together"):
        ClaimSpec(id="c", statement="", problem="s", kind="threshold", agent="a", op=">=",
                  value=0, agent_ref="a0", baseline_ref="b0")


def test_null_distributions_match_scipy():
    """The verdicts' own p-values (numpy and the standard library, no scipy.stats import) against
    scipy.stats as the independent oracle: exact and asymptotic signed-rank tests with and
    without ties, the exact sign test, the normal tails, average ranks and Spearman's rho."""
    from papergym.leaderboard import claims as C

    rng = np.random.default_rng(7)
    for n in (1, 3, 6, 12, 30, 50, 64):
        for rounded in (False, True):
            d = rng.normal(0.3, 1.0, n)
            d = np.round(d, 1) if rounded else d
            d = d[d != 0]
            if not d.size:
                continue
            greater, less = C._signed_rank_p(d)
            if len(np.unique(np.abs(d))) == len(d) or len(d) > C.ENUMERATE_UP_TO:
                method = "exact" if len(d) <= 50 and len(np.unique(np.abs(d))) == len(d) \
                    else "asymptotic"
                for alt, mine in (("greater", greater), ("less", less)):
                    want = stats.wilcoxon(d, alternative=alt, method=method).pvalue
                    assert mine == pytest.approx(want, rel=1e-9, abs=1e-15), (n, rounded, alt)
        ranks = C.average_ranks(np.round(rng.normal(size=n), 1))
        np.testing.assert_array_equal(ranks, stats.rankdata(ranks))
    for n, k in ((1, 1), (5, 5), (9, 2), (40, 31), (300, 170)):
        assert C.binom_half_sf(k, n) == pytest.approx(
            stats.binomtest(k, n, 0.5, alternative="greater").pvalue, rel=1e-12)
    for z in (-9.0, -1.3, 0.0, 2.1, 12.0):
        assert C.norm_sf(z) == pytest.approx(stats.norm.sf(z), rel=1e-12)
        assert C.norm_cdf(z) == pytest.approx(stats.norm.cdf(z), rel=1e-12)
    x, y = rng.normal(size=20), np.round(rng.normal(size=20), 0)
    assert C.spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, rel=1e-12)


def test_discrimination_uses_trial_values_when_the_units_lack_the_primary_metric():
    """A trial-level primary (alpha* is a median over the units) with declared units: the
    check pairs trials instead of finding no shared units."""
    tier = SECTION.tiers["smoke"].model_copy(update={"units_per_trial": 3})
    section = SECTION.model_copy(update={"trivial": "c", "reference": "a", "tiers": {"smoke": tier}})
    spec = BenchmarkSpec(name="t", family="fixture", paper={"key": "k", "title": "t"},
                         problems=[section], claims=[])
    units = [{"instance": i, "shortfall": 0.5} for i in range(3)]
    data = ([row("a", s, {"score": 1.0 + 0.1 * s}, units=units) for s in range(6)]
            + [row("c", s, {"score": 0.0}, units=units) for s in range(6)])
    check = discrimination(spec, "smoke", data)["s"]
    assert check.status == "discriminative" and check.n_units == 6 and check.ci[0] > 0


def test_a_0_1_metric_is_compared_as_a_paired_proportion_difference():
    rng = np.random.default_rng(5)
    a = (rng.random(60) < 0.7).astype(float)
    b = (rng.random(60) < 0.4).astype(float)
    v = evaluate_claim(compare(), SECTION, rows("a", a) + rows("b", b))  # inferred: all 0/1
    wins, losses = int(((a == 1) & (b == 0)).sum()), int(((a == 0) & (b == 1)).sum())
    assert v.effect_name == "paired proportion difference"
    assert v.effect == pytest.approx((wins - losses) / 60)
    assert v.p_value == pytest.approx(stats.binomtest(wins, wins + losses, 0.5,
                                                      alternative="greater").pvalue)
    declared = evaluate_claim(compare(binary=True), SECTION, rows("a", a) + rows("b", b))
    assert declared.effect == v.effect and declared.verdict == v.verdict == "holds"


def test_pages_show_the_design_and_the_tally_beside_each_verdict():
    from papergym.leaderboard.report import fmt_design, fmt_tally

    data = instance_rows("a", [np.full(20, 1.0 + 0.1 * s) for s in range(6)]) + \
        instance_rows("b", [np.zeros(20) for _ in range(6)])
    v = evaluate_claim(compare(unit="instance", sesoi=0.5), SECTION, data)
    assert (v.unit, v.n_clusters, v.verdict) == ("seed", 6, "holds")
    assert fmt_design(v).startswith("unit seed (n=6); ICC ")
    assert "sesoi 0.5" in fmt_design(v) and "power 100%" in fmt_design(v)
    assert fmt_tally([v]) == ("paper claims: 1 holds; by family: 1 holds; "
                              "holds after Benjamini-Hochberg: 1")
