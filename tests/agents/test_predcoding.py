"""predcoding agents on the smoke tier, tuning through the view, determinism, BP's depth curve."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import papergym
from papergym.agent import REGISTRY
from papergym.agents.predcoding.deeppc import DeepPC
from papergym.agents.predcoding.pc import PC

AGENTS = ("bp", "bp_ce", "pc", "ipc", "deeppc", "deeppc_nos", "deeppc_nofu")


def run(agent_id, problem="papergym/PCDepth-v0", seed=0, config=None, **kwargs):
    task = papergym.make_task(problem, tier="smoke", **kwargs)
    agent = REGISTRY.get(agent_id, "predcoding")(config or {})
    budget = task.budget
    with threadpool_limits(1):
        artifact = agent.solve(task.train_view(seed, budget), budget, seed)
    return task.evaluate(artifact, seed).metrics, budget


@pytest.fixture(scope="module")
def smoke_l3():
    return {a: run(a, depth=3)[0] for a in (*AGENTS, "untrained")}


def test_every_agent_learns_at_smoke_depth_3(smoke_l3):
    assert smoke_l3["bp"]["accuracy"] >= 0.85
    assert smoke_l3["untrained"]["accuracy"] <= 0.25
    for agent in AGENTS:
        assert smoke_l3[agent]["accuracy"] >= 0.1 + 0.3, agent
        assert smoke_l3[agent]["energy_imbalance"] >= 0


def test_declared_inference_is_what_the_problem_reports(smoke_l3):
    assert smoke_l3["bp"]["inference_steps"] == 0
    assert smoke_l3["pc"]["inference_steps"] == 3 + 2  # T = L + extra_steps


def test_residual_agents_run_with_and_without_auxiliary_neurons():
    for agent in ("deeppc", "deeppc_noaux", "bp"):
        metrics, _ = run(agent, "papergym/PCDepthResidual-v0", blocks=1, epochs=2)
        assert metrics["accuracy"] > 0.3, agent
    assert not REGISTRY.get("deeppc_noaux", "predcoding").can_act_on("papergym/PCDepth-v0")


def test_same_seed_same_accuracy():
    first, _ = run("deeppc", depth=4, epochs=2)
    again, _ = run("deeppc", depth=4, epochs=2)
    other, _ = run("deeppc", depth=4, epochs=2, seed=1)
    assert first["accuracy"] == again["accuracy"] and first["energy_imbalance"] == again["energy_imbalance"]
    assert other["accuracy"] != first["accuracy"] or other["energy_imbalance"] != first["energy_imbalance"]


def test_tuning_runs_on_the_tuning_split_and_spends_the_budget():
    metrics, budget = run("bp", depth=3, epochs=5, tuning_runs=2)
    assert budget.used == {"epochs": 5, "tuning_runs": 2}
    assert 0.3 < metrics["accuracy"] <= 1


def test_every_agent_tries_its_defaults_and_its_own_draws_with_the_sections_budget():
    task = papergym.make_task("papergym/PCDepth-v0", tier="standard", depth=3)
    view = task.train_view(0, task.budget)
    pcs, deeps = (agent.tuning_candidates(int(view.tuning_runs), view) for agent in (PC(), DeepPC()))
    assert len(pcs) == len(deeps) == int(view.tuning_runs) == 4
    assert pcs[0] == PC().config and deeps[0] == DeepPC().config  # the defaults, always tried
    assert [c.lr for c in pcs[1:]] != [c.lr for c in deeps[1:]]  # no shared draws
    assert {c.alpha for c in deeps} <= {1e-3, 1e-2} and all(1e-4 <= c.lr <= 3e-3 for c in pcs)


def test_backprop_does_not_degrade_with_depth_at_the_standard_scale():
    """The benchmark's premise: BP at L = 17 stays within 5 points of L = 3 (10 epochs, width 64)."""
    shallow, _ = run("bp", depth=3, epochs=10)
    deep, _ = run("bp", depth=17, epochs=10)
    assert deep["accuracy"] >= shallow["accuracy"] - 0.05
    assert np.isfinite(deep["energy_imbalance"])
