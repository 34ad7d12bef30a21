"""A Wilcoxon signed-rank test against a margin is refused on a metric declared bounded
(``metric.bounded`` on the section, ``bounded`` on a claim of another metric): values at a
bound tie, and the test against a margin counts every tie as a win. The claim is refused both
by the spec check and at evaluation, with what to use instead."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from papergym.benchmarks.spec import (
    ClaimSpec,
    MetricSpec,
    ProblemSection,
    SpecError,
    TierSpec,
    load_spec,
)
from papergym.leaderboard.claims import evaluate_claim
from papergym.leaderboard.store import Row
from tests.conftest import FIXTURES, TOY_SPEC


def section(bounded=None):
    return ProblemSection(
        name="s", problem="papergym/FixtureReach-v0",
        metric=MetricSpec(name="score", direction="max", bounded=bounded),
        tiers={"smoke": TierSpec()}, agents=[{"id": "a"}, {"id": "b"}])


def trial_rows(a_values, b_values):
    def row(agent, seed, metrics, units=()):
        return Row(key=f"{agent}-{seed}", benchmark="t", section="s", tier="smoke",
                   problem_id="p", problem_kwargs={}, agent=agent, agent_id=agent,
                   agent_role="baseline", agent_config={}, seed=seed, status="ok",
                   metrics=metrics, units=list(units))
    return ([row("a", s, {"score": float(v), "other": float(v)}) for s, v in enumerate(a_values)]
            + [row("b", s, {"score": float(v), "other": float(v)}) for s, v in enumerate(b_values)])


def no_worse(**kw):
    kw.setdefault("margin", 0.05)
    return ClaimSpec(id="c", statement="", problem="s", kind="compare", agent="a", baseline="b",
                     expect="no_worse", **kw)


# a is 0.1 worse on every seed, an accuracy-like metric in [0, 1] with no zero differences
RNG = np.random.default_rng(0)
B = RNG.uniform(0.3, 0.9, 12)
ROWS = trial_rows(B - 0.1, B)


def test_a_margin_signed_rank_test_on_a_bounded_metric_is_not_evaluable_and_says_why():
    refused = evaluate_claim(no_worse(), section(bounded=[0, 1]), ROWS)
    assert refused.verdict == "not evaluable" and refused.effect is None
    assert "declared bounded in [0, 1]" in refused.detail
    assert "test: sign" in refused.detail and "margin: 0" in refused.detail
    # the same claim on an undeclared metric, or without a margin, or as paired proportions
    assert evaluate_claim(no_worse(), section(), ROWS).verdict == "fails"
    assert evaluate_claim(no_worse(margin=0.0), section(bounded=[0, 1]), ROWS).verdict == "fails"
    sign = evaluate_claim(no_worse(test="sign"), section(bounded=[0, 1]), ROWS)
    assert sign.verdict == "fails" and sign.effect_name == "paired proportion difference"


def test_a_claims_own_bounded_metric_is_refused_and_the_sections_range_is_not_its():
    other = no_worse(metric="other", direction="max")
    assert evaluate_claim(other, section(bounded=[0, 1]), ROWS).verdict == "fails"
    refused = evaluate_claim(no_worse(metric="other", direction="max", bounded=[0, 1]),
                             section(), ROWS)
    assert refused.verdict == "not evaluable" and "'other'" in refused.detail
    with pytest.raises(ValueError, match="claim's own metric"):
        no_worse(bounded=[0, 1])
    with pytest.raises(ValueError, match="both finite with low < high"):
        MetricSpec(name="score", direction="max", bounded=[1, 0])


def test_the_spec_check_refuses_a_margin_wilcoxon_on_a_bounded_metric(tmp_path):
    from papergym.benchmarks.runner import checked_imports, resolve_imports
    from papergym.benchmarks.spec_checks import check_spec

    data = yaml.safe_load(TOY_SPEC.read_text())
    data["imports"] = [str(FIXTURES / "toy_problem.py")]
    data["problems"][0]["metric"]["bounded"] = [-10, 0]
    data["claims"][0].update(expect="no_worse", margin=0.5)
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(data))
    spec = load_spec(path)
    checked_imports(resolve_imports(spec, path), str(path))
    with pytest.raises(SpecError, match=r"claims\.0\.margin: a Wilcoxon .* test: sign"):
        check_spec(spec, path, "smoke")
    data["claims"][0]["test"] = "sign"
    path.write_text(yaml.safe_dump(data))
    check_spec(load_spec(path), path, "smoke")
