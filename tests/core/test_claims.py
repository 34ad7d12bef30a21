"""Claims: verdicts follow the data, in both directions, and say when data are too few."""

from __future__ import annotations

import numpy as np
import pytest

from papergym.benchmarks.spec import ClaimSpec, MetricSpec, ProblemSection, TierSpec
from papergym.leaderboard.claims import evaluate_claim, holm
from papergym.leaderboard.store import Row

SECTION = ProblemSection(
    name="s", problem="papergym/FixtureReach-v0", metric=MetricSpec(name="score", direction="max"),
    tiers={"smoke": TierSpec()}, agents=[{"id": "a"}, {"id": "b"}],
)


def rows(agent, values, cells=1):
    out = []
    for i, v in enumerate(values):
        out.append(Row(key=f"{agent}{i}", benchmark="t", section="s", tier="smoke",
                       problem_id="p", problem_kwargs={"cell": i % cells}, agent=agent,
                       agent_id=agent, agent_role="baseline", agent_config={}, seed=i // cells,
                       status="ok", metrics={"score": float(v), "steps": float(10 * v)}))
    return out


def compare(**kw):
    return ClaimSpec(id="c", statement="a beats b", problem="s", kind="compare", agent="a",
                     baseline="b", **kw)


def test_compare_holds_fails_and_is_inconclusive():
    rng = np.random.default_rng(0)
    base = rng.normal(size=20)
    assert evaluate_claim(compare(), SECTION, rows("a", base + 1) + rows("b", base)).verdict == "holds"
    assert evaluate_claim(compare(), SECTION, rows("a", base - 1) + rows("b", base)).verdict == "fails"
    few = evaluate_claim(compare(), SECTION, rows("a", base[:3] + 1) + rows("b", base[:3]))
    assert few.verdict == "inconclusive"  # three pairs cannot reach p < 0.05 one-sided
    assert few.effect == pytest.approx(1.0)


def test_compare_min_ratio_and_no_worse():
    a, b = np.arange(1, 21, dtype=float), np.arange(1, 21, dtype=float) * 3
    claim = compare(metric="steps", direction="min", min_ratio=5)
    assert evaluate_claim(claim, SECTION, rows("a", a) + rows("b", b)).verdict == "fails"
    claim = compare(metric="steps", direction="min", min_ratio=2)
    assert evaluate_claim(claim, SECTION, rows("a", a) + rows("b", b)).verdict == "holds"
    same = compare(expect="no_worse", margin=0.1)
    v = evaluate_claim(same, SECTION, rows("a", a) + rows("b", a))
    assert v.verdict == "holds" and v.effect == 0


def test_sign_test_is_exact_mcnemar():
    a = [1] * 12 + [0] * 8
    b = [0] * 12 + [0] * 8
    v = evaluate_claim(compare(test="sign"), SECTION, rows("a", a) + rows("b", b))
    assert v.p_value == pytest.approx(0.5 ** 12) and v.verdict == "holds"


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


def test_holm_adjustment():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])


def test_trend_sign_test_over_seeds():
    def trend_rows(slope, seeds):
        out = []
        for seed in range(seeds):
            for eps in (0.1, 1.0, 10.0, 100.0):
                out.append(Row(key=f"{seed}-{eps}", benchmark="t", section="s", tier="smoke",
                               problem_id="p", problem_kwargs={"epsilon": eps}, agent="a",
                               agent_id="a", agent_role="baseline", agent_config={}, seed=seed,
                               status="ok", metrics={"score": slope * eps + 0.01 * seed}))
        return out

    claim = ClaimSpec(id="t", statement="", problem="s", kind="trend", agent="a",
                      axis="epsilon", trend="increasing")
    assert evaluate_claim(claim, SECTION, trend_rows(1.0, 6)).verdict == "holds"  # p = 1/64
    assert evaluate_claim(claim, SECTION, trend_rows(-1.0, 6)).verdict == "fails"
    two = evaluate_claim(claim, SECTION, trend_rows(1.0, 2))
    assert two.verdict == "inconclusive" and two.effect == pytest.approx(1.0)  # p = 1/4
