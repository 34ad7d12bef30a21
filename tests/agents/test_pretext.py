"""pretext agents: the factor measurements on hand-made cases, the calibrated variant's
ranking, every agent on the smoke tier of both problems (the reference only as reference), and
the harm claim (P3_harm) under the engine: an estimator that sees harm passes it, the random
estimator does not."""

from __future__ import annotations

import types

import numpy as np
import pytest

import papergym
from papergym.agent import REGISTRY
from papergym.agents.pretext import _common as C
from papergym.agents.pretext.baselines import RandomScores, probe_accuracy
from papergym.benchmarks.spec import find_spec
from papergym.envs.pretext import metrics
from papergym.envs.pretext.task import HARM_MARGIN
from papergym.leaderboard.claims import evaluate_claims
from papergym.leaderboard.store import Row

AGENTS = ("random", "lrc", "lrc_calibrated", "l_only", "r_only", "c_only", "pretext_loss", "short_probe")
PROBLEMS = ("papergym/PretextImpactSynth-v0", "papergym/PretextImpactDigits-v0")


def test_factor_measurements_on_known_cases():
    assert C.chance_normalized(0.1, 10) == 0.0 and C.chance_normalized(1.0, 10) == 1.0
    run = {"pretext_loss_reference": 2.0, "pretext_loss_final": 0.5, "pretext_acc_final": None}
    assert C.learnability(run, {"classification": False}) == pytest.approx(0.75)
    assert C.learnability({**run, "pretext_acc_final": 0.625}, {"classification": True}) == pytest.approx(0.5)
    X = np.r_[np.zeros((5, 2)), np.ones((5, 2))] + 0.01 * np.arange(10)[:, None]
    y = np.r_[np.zeros(5, int), np.ones(5, int)]
    assert C.loo_accuracy(X, y, 2) == 1.0
    view = types.SimpleNamespace(
        X_labelled=X, y_labelled=y, classes=2, partners=lambda pid, d, s: np.stack([1.0 - X] * d)
    )  # swaps the clusters
    assert C.reliability(view, {"id": "p", "assumption": "invariance"}, 0) == 0.0
    view.partners = lambda pid, d, s: np.stack([X + 1e-3] * d)
    assert C.reliability(view, {"id": "p", "assumption": "invariance"}, 0) == 1.0
    assert probe_accuracy(np.c_[X, -X], y, 2, 0) == 1.0


@pytest.mark.parametrize("problem", PROBLEMS)
def test_every_agent_on_the_smoke_tier(problem):
    results = {}
    for agent_id in AGENTS:
        task = papergym.make_task(problem, tier="smoke")
        task.set_agent_role(REGISTRY.get(agent_id, "pretext").role)
        budget = task.budget
        artifact = REGISTRY.get(agent_id, "pretext")().solve(task.train_view(1, budget), budget, 1)
        result = task.evaluate(artifact, 1)
        assert not result.non_finite(), agent_id
        assert all(budget.used[k] <= budget.limits[k] for k in budget.limits), agent_id
        results[agent_id] = (artifact, result.metrics)
    assert np.isfinite(results["lrc"][1]["spearman"])
    # the calibrated variant keeps the ranking (an increasing affine map)
    lrc, cal = results["lrc"][0], results["lrc_calibrated"][0]
    keys = sorted(lrc)
    assert np.array_equal(np.argsort([lrc[k] for k in keys]), np.argsort([cal[k] for k in keys]))
    assert results["lrc"][1]["compute_ratio"] > 0


def test_the_oracle_is_reference_only():
    task = papergym.make_task(PROBLEMS[0], tier="smoke")
    budget = task.budget
    agent = REGISTRY.get("full_training", "pretext")()
    with pytest.raises(PermissionError):
        agent.solve(task.train_view(1, budget), budget, 1)
    task.set_agent_role("reference")
    artifact = agent.solve(task.train_view(1, budget), budget, 1)
    assert task.privileged_used and task.evaluate(artifact, 1).metrics["spearman"] > 0


# ----------------------------------------------------------------------------- P3_harm, engine

SUP = 0.85  # the fixture's supervised accuracy; 20 scored pretexts per split, 6 of them hurting
GAINS = np.array([-0.6, -0.5, -0.14, -0.08, -0.05, -0.03, -0.005, 0.0, 0.004, 0.02, 0.03, 0.03, 0.04,
                  0.05, 0.05, 0.06, 0.07, 0.08, 0.09, 0.1])
ROLES = {"lrc": "method", "random": "baseline", "full_training": "reference"}


def _row(agent: str, seed: int, estimates: dict[str, float], actual: dict[str, float]) -> Row:
    ids = sorted(actual)
    e, a = np.array([estimates[i] for i in ids]), np.array([actual[i] for i in ids])
    balanced, caught = metrics.harm_detection(e, estimates["supervised"], a, SUP, HARM_MARGIN)
    return Row(key=f"{agent}-{seed}", benchmark="pretext", section="digits", tier="standard",
               problem_id="papergym/PretextImpactDigits-v0", problem_kwargs={}, agent=agent,
               agent_id=f"pretext/{agent}", agent_role=ROLES[agent], agent_config={}, seed=seed,
               status="ok", metrics={"spearman": metrics.spearman(e, a), "harm_balanced": balanced,
                                     "harm_caught": caught})


def _harm_rows(method: str) -> list[Row]:
    """Eight digits splits: the reference and the random estimator as they are, and in the
    method's place either an estimator that sees harm (noisy actual accuracies) or the random one."""
    spec = find_spec("pretext")
    rows = []
    for seed in spec.section("digits").tiers["standard"].seeds:
        rng = np.random.default_rng(seed)
        actual = {f"p{i:02d}": SUP + g + rng.normal(0, 0.003) for i, g in enumerate(GAINS)}
        pool = types.SimpleNamespace(pool=[{"id": i} for i in sorted(actual)])
        random = RandomScores().solve(pool, None, seed)
        seeing = {**{i: a + rng.normal(0, 0.01) for i, a in actual.items()}, "supervised": SUP}
        rows += [_row("random", seed, random, actual), _row("full_training", seed, seeing, actual),
                 _row("lrc", seed, seeing if method == "seeing" else random, actual)]
    return rows


def test_the_harm_claim_holds_for_an_estimator_that_sees_harm_and_never_for_the_random_one():
    spec = find_spec("pretext")
    claim = next(c for c in spec.claims if c.id == "P3_harm")
    assert claim.role == "paper" and claim.control == "random" and claim.metric == "harm_balanced"
    [seeing] = [v for v in evaluate_claims(spec, "standard", _harm_rows("seeing")) if v.id == "P3_harm"]
    assert seeing.verdict == "holds" and seeing.n_units == 8
    assert seeing.control_verdict == "fails"  # the random control is evaluated in lrc's place
    [blind] = [v for v in evaluate_claims(spec, "standard", _harm_rows("random")) if v.id == "P3_harm"]
    assert blind.verdict == "fails" and blind.ci[1] < 0.8


def test_harm_detection_is_half_for_blind_flags_and_one_for_right_ones():
    actual = SUP + GAINS
    right = metrics.harm_detection(actual, SUP, actual, SUP, HARM_MARGIN)
    assert right == (1.0, 1.0)
    # an estimator that calls every pretext harmful catches all of them, yet tells nothing apart
    assert metrics.harm_detection(np.zeros(20), 1.0, actual, SUP, HARM_MARGIN) == (0.5, 1.0)
    rng = np.random.default_rng(0)
    blind = [metrics.harm_detection(rng.uniform(size=20), 0.5, actual, SUP, HARM_MARGIN)[0]
             for _ in range(2000)]
    assert abs(np.mean(blind) - 0.5) < 0.02  # sd of the mean ~0.003
    # no pretext hurts: every one is caught (vacuously) and the score is the share left unflagged
    assert metrics.harm_detection(np.array([0.9, 0.8]), 0.85, np.array([0.9, 0.9]), 0.85, 0.01) == (0.5, 1.0)
