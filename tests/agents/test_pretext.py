"""pretext agents: the factor measurements on hand-made cases, the calibrated variant's
ranking, and every agent on the smoke tier of both problems (the reference only as reference)."""

from __future__ import annotations

import types

import numpy as np
import pytest

import papergym
from papergym.agent import REGISTRY
from papergym.agents.pretext import _common as C
from papergym.agents.pretext.baselines import probe_accuracy

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
