"""Claim kind ``correlation``: a Spearman rho pooled over the runs of several agents. Oracles are
independent: scipy.stats.spearmanr on pairs built here by index arithmetic, a bootstrap loop
with scipy's rho, and constructed data of known sign (reversed data must fail)."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from scipy import stats

from papergym.benchmarks.spec import (
    ClaimSpec,
    MetricSpec,
    ProblemSection,
    SpecError,
    TierSpec,
    claim_units,
    find_spec,
    load_spec,
    power_table,
)
from papergym.leaderboard.claims import evaluate_claim, needed_units
from papergym.leaderboard.correlation import pooled_spearman, run_pairs, spearman_rho
from papergym.leaderboard.power import best_case, needed_n
from papergym.leaderboard.report import fmt_units
from papergym.leaderboard.store import Row
from tests.conftest import TOY_SPEC

AGENTS = ["a", "b", "c"]
SECTION = ProblemSection(
    name="s", problem="papergym/FixtureReach-v0", metric=MetricSpec(name="score", direction="max"),
    tiers={"smoke": TierSpec()}, agents=[{"id": a} for a in AGENTS],
)
X = {"curve": "ess", "window": 10, "stat": "min"}
Y = {"curve": "acc", "lead": 20, "change": "drop"}
UPDATES, EVERY = 100, 10


def claim(**kw):
    base = dict(id="B4", statement="low ESS precedes a drop", problem="s", kind="correlation",
                agents=AGENTS, x=X, y=Y, op="<", value=0.0, min_runs=5, min_pairs=20)
    return ClaimSpec(**{**base, **kw})


def run_row(agent, seed, ess, acc):
    curves = {"ess": [[float(s), float(v)] for s, v in enumerate(ess)],
              "acc": [[float(EVERY * i), float(v)] for i, v in enumerate(acc)]}
    return Row(key=f"{agent}-{seed}", benchmark="t", section="s", tier="smoke", problem_id="p",
               problem_kwargs={}, agent=agent, agent_id=agent, agent_role="baseline",
               agent_config={}, seed=seed, status="ok", metrics={"score": 0.0}, curves=curves)


def make_runs(sign, seeds=4, agents=AGENTS, noise=0.03, offsets=None, seed=0):
    """Per run: an ESS series and an accuracy curve (every EVERY updates) whose drop over the
    next 20 updates is ``sign`` x (1 - window min-ESS before the point) plus noise."""
    rng = np.random.default_rng(seed)
    out = []
    for j, agent in enumerate(agents):
        for s in range(seeds):
            ess = rng.uniform(0.05, 1.0, size=UPDATES)
            shift = 0.0 if offsets is None else offsets[j]
            ess = np.clip(ess + shift, 0.01, 2.0)
            acc = np.zeros(UPDATES // EVERY + 1)
            acc[0], acc[1] = 0.5, 0.5
            for i in range(1, len(acc) - 2):  # acc[i + 2] set from the window before point i
                low = ess[EVERY * i - 10:EVERY * i].min()
                acc[i + 2] = acc[i] - sign * (1 - low) - noise * rng.normal()
            out.append(run_row(agent, s, ess, acc))
    return out


def oracle_pairs(r):
    """The B4 construction by index arithmetic: t = 10, 20, ... while t + 20 is on the curve."""
    ess = np.array([v for _, v in r.curves["ess"]])
    acc = np.array([v for _, v in r.curves["acc"]])
    return [(ess[t - 10:t].min(), acc[t // EVERY] - acc[t // EVERY + 2])
            for t in range(EVERY, UPDATES - 20 + 1, EVERY)]


def test_spearman_matches_scipy_with_ties():
    rng = np.random.default_rng(1)
    for _ in range(20):
        x, y = rng.integers(0, 6, size=40), rng.normal(size=40)
        assert spearman_rho(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert np.isnan(spearman_rho(np.ones(5), np.arange(5)))


def test_pairs_follow_the_window_and_lead_rules():
    r = make_runs(1.0, seeds=1, agents=["a"])[0]
    got = run_pairs(X, Y, r.curves, r.metrics)
    assert np.allclose(got, oracle_pairs(r)) and len(got) == 8  # t = 10 .. 80
    # t = 0 has no complete window before it; t = 90, 100 have no point 20 updates ahead
    gain = run_pairs(X, {**Y, "change": "gain"}, r.curves, r.metrics)
    assert [b for _, b in gain] == pytest.approx([-b for _, b in got])
    # a window statistic at the anchors, and a metric side repeated at every anchor
    mean = run_pairs({**X, "stat": "mean"}, Y, r.curves, r.metrics)
    ess = np.array([v for _, v in r.curves["ess"]])
    assert [a for a, _ in mean] == pytest.approx([ess[t - 10:t].mean() for t in range(10, 81, 10)])
    assert [a for a, _ in run_pairs({"metric": "score"}, Y, r.curves, r.metrics)] == [0.0] * 9
    # two metrics: one pair per run; a missing curve: none
    assert run_pairs({"metric": "score"}, {"metric": "score"}, {}, {"score": 1.0}) == [(1.0, 1.0)]
    assert run_pairs(X, Y, {}, {}) == []


def test_negative_association_holds_and_matches_scipy_on_the_pooled_pairs():
    data = make_runs(1.0)
    v = evaluate_claim(claim(within="none"), SECTION, data)
    pooled = np.array([p for r in data for p in oracle_pairs(r)])
    assert v.effect == pytest.approx(stats.spearmanr(pooled[:, 0], pooled[:, 1]).statistic)
    assert v.verdict == "holds" and v.ci[0] <= v.effect <= v.ci[1] < 0
    assert (v.n_units, v.n_pairs) == (12, 96) and fmt_units(v) == "12 runs, 96 pairs"
    assert "per agent" in v.detail and "96 pairs of 12 runs" in v.detail


def test_reversed_data_fail_and_the_other_side_holds():
    data = make_runs(-1.0)
    assert evaluate_claim(claim(), SECTION, data).verdict == "fails"
    assert evaluate_claim(claim(op=">"), SECTION, data).verdict == "holds"
    # no association at all: the interval straddles 0
    flat = make_runs(0.0, noise=1.0, seed=3)
    assert evaluate_claim(claim(), SECTION, flat).verdict == "inconclusive"


def test_bootstrap_resamples_whole_runs():
    data = make_runs(0.5, noise=0.5)
    runs = [oracle_pairs(r) for r in data]
    got = pooled_spearman(runs, alpha=0.05, reps=300, seed=7)
    rng = np.random.default_rng(7)
    draws = rng.integers(0, len(runs), size=(300, len(runs)))
    boot = []
    for draw in draws:
        pairs = np.array([p for i in draw for p in runs[i]])
        boot.append(stats.spearmanr(pairs[:, 0], pairs[:, 1]).statistic)
    assert (got.lo, got.hi) == pytest.approx(tuple(np.percentile(boot, [5, 95])))
    assert got.n_runs == 12 and got.n_pairs == 96 and got.undefined == 0


def test_too_few_runs_or_pairs_is_no_data_and_few_runs_underpowered():
    data = make_runs(1.0)
    few = [r for r in data if r.seed == 0]  # 3 runs
    v = evaluate_claim(claim(), SECTION, few)
    assert v.verdict == "no data" and "needs at least 5 runs" in v.detail and v.n_units == 3
    assert evaluate_claim(claim(min_pairs=200), SECTION, data).verdict == "no data"
    assert evaluate_claim(claim(agents=["a"], min_runs=None), SECTION, []).verdict == "no data"
    # 4 runs that agree perfectly: above min_runs 2, below the 5 runs of the power check
    strong = [r for r in make_runs(1.0, noise=0.0) if r.agent == "a"]
    v = evaluate_claim(claim(agents=["a"], min_runs=None), SECTION, strong)
    assert v.verdict == "underpowered" and "needs 5 runs" in v.detail


def test_within_agent_removes_differences_between_agents():
    # inside each agent a low ESS precedes a rise; agents with lower ESS sit lower overall
    data = make_runs(-1.0, offsets=[0.0, 0.6, 1.2], seeds=5)
    for r in data:  # the low-ESS agent also falls more: a between-agent negative association
        shift = {"a": 10.0, "b": 5.0, "c": 0.0}[r.agent]
        r.curves["acc"] = [[s, v - shift * s / 100.0] for s, v in r.curves["acc"]]
    pooled, within = (evaluate_claim(claim(within=w), SECTION, data) for w in ("none", "agent"))
    # the pooled bound alone would hold (Simpson's paradox, rlvr_vcpo B4); the rho inside
    # each run lies on the other side of 0, so holds is refused
    assert pooled.ci[1] < 0 and pooled.verdict == "inconclusive"
    assert "holds is refused" in pooled.detail and within.verdict == "fails"
    assert evaluate_claim(claim(), SECTION, data).verdict == "fails"  # a paper claim: within run
    rhos = [stats.spearmanr(*np.array([p for r in data if r.agent == a
                                       for p in oracle_pairs(r)]).T).statistic for a in AGENTS]
    assert within.effect == pytest.approx(np.mean(rhos))  # 40 pairs each: equal weights
    assert "within each agent" in within.detail


def test_power_is_two_to_the_minus_runs_and_min_runs():
    assert needed_n("correlation") == 5 and needed_n("correlation", alpha=0.01) == 7
    assert needed_n("correlation", min_n=10) == 10
    assert not best_case("correlation", 4).reachable and best_case("correlation", 5).reachable
    assert needed_units(claim(min_runs=12)) == 12


def toy_with(**fields):
    data = yaml.safe_load(TOY_SPEC.read_text())
    c = {"id": "R1", "statement": "s", "problem": "reach", "kind": "correlation",
         "agents": ["greedy", "random"], "x": {"metric": "return"},
         "y": {"metric": "episode_length"}, "op": "<", "value": 0, "tiers": ["standard"]}
    c.update(fields)
    data["claims"].append({k: v for k, v in c.items() if v is not None})
    return data


def _write(tmp_path, data):
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_units_are_runs_and_the_power_check_counts_them(tmp_path):
    spec = load_spec(_write(tmp_path, toy_with()), strict_power=True)
    c = spec.claims[-1]
    assert claim_units(spec, c, "standard") == (2 * 2 * 5, "")  # agents x cells x seeds
    data = toy_with(min_runs=30)
    with pytest.raises(SpecError, match=r"R1 at tier standard cannot reach.*needs n >= 30"):
        load_spec(_write(tmp_path, data), strict_power=True)


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"x": None}, "field claims.3.x: a correlation claim needs x and y"),
        ({"agents": []}, "field claims.3.agents"),
        ({"agents": ["greedy", "nobody"]}, "'nobody' is not in section"),
        ({"op": ">="}, "field claims.3.op"),
        ({"value": 1.5}, "field claims.3.value"),
        ({"agent": "greedy"}, "field claims.3.agent"),
        ({"x": {"curve": "ess", "window": 10}}, "field claims.3.x: window and stat go together"),
        ({"y": {"metric": "return", "curve": "ess"}}, "field claims.3.y: name exactly one"),
        ({"y": {"metric": "return", "lead": 2, "change": "drop"}}, "field claims.3.y"),
        ({"min_runs": 1}, "field claims.3.min_runs"),
        ({"within": "seed"}, "field claims.3.within"),
        ({"axis": "horizon"}, "field claims.3.axis"),
    ],
)
def test_schema_errors_name_the_field(tmp_path, fields, field):
    path = _write(tmp_path, toy_with(**fields))
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert str(path) in str(info.value) and field in str(info.value)


def test_other_kinds_refuse_correlation_fields_and_still_need_an_agent(tmp_path):
    data = yaml.safe_load(TOY_SPEC.read_text())
    data["claims"][1]["x"] = {"metric": "return"}
    with pytest.raises(SpecError, match="claims.1.*belong to a correlation claim"):
        load_spec(_write(tmp_path, data))
    data = yaml.safe_load(TOY_SPEC.read_text())
    del data["claims"][1]["agent"]
    with pytest.raises(SpecError, match=r"field claims\.1\.agent: a threshold claim needs agent"):
        load_spec(_write(tmp_path, data))


def test_registry_check_names_an_unknown_metric_of_x_or_y(tmp_path):
    from papergym.benchmarks.runner import checked_imports, resolve_imports
    from papergym.benchmarks.spec_checks import check_spec
    from tests.conftest import FIXTURES

    data = toy_with(y={"metric": "no_such_metric"})
    data["imports"] = [str(FIXTURES / "toy_problem.py")]
    path = _write(tmp_path, data)
    spec = load_spec(path)
    checked_imports(resolve_imports(spec, path), str(path))
    with pytest.raises(SpecError, match=r"field claims\.3\.y\.metric: .*no_such_metric"):
        check_spec(spec, path, "standard")


def test_rlvr_vcpo_b4_is_within_run_over_sixty_async_runs_at_standard():
    spec = find_spec("rlvr_vcpo")
    b4 = next(c for c in spec.claims if c.id == "B4")
    assert b4.kind == "correlation" and b4.role == "paper" and len(b4.agents) == 5
    assert b4.within is None and b4.within_groups == "run"  # the default for a paper claim
    assert claim_units(spec, b4, "standard") == (60, "")
    row = {(r.claim, r.tier): r for r in power_table(spec)}[("B4", "standard")]
    assert row.ok and row.needed == 10
    pooled = next(c for c in spec.claims if c.id == "B4-pooled")
    assert pooled.role == "diagnostic" and pooled.within_groups == "none"


def test_the_bootstrap_draws_whole_seeds_from_five_seeds():
    few, many = make_runs(1.0, seeds=4), make_runs(1.0, seeds=5)
    assert "bootstrap over runs" in evaluate_claim(claim(), SECTION, few).detail
    v = evaluate_claim(claim(), SECTION, many)
    assert "bootstrap over seeds" in v.detail and v.n_units == 15
