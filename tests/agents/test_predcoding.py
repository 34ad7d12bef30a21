"""predcoding agents on the smoke tier, tuning through the view, determinism, BP's depth curve."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import papergym
from papergym.agent import REGISTRY
from papergym.agents.predcoding.deeppc import DeepPC, DeepPCNoAux, DeepPCNoFU, DeepPCNoS
from papergym.agents.predcoding.ipc import IPC
from papergym.agents.predcoding.pc import PC, stable_lr_h
from papergym.datasets import digits_split
from papergym.envs.predcoding import core as C

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
    assert len(pcs) == len(deeps) == int(view.tuning_runs) == 9  # the defaults + 8 own draws
    assert pcs[0] == PC().config and deeps[0] == DeepPC().config  # the defaults, always tried
    assert [c.lr for c in pcs[1:]] != [c.lr for c in deeps[1:]]  # no shared draws
    assert {c.alpha for c in deeps} <= {1e-3, 1e-2} and all(5e-4 <= c.lr <= 3e-2 for c in pcs)


# ------------------------------------------------------------------ the latent step's stable region

def relaxation_growth(arch, schedule, aux, lr_h, momentum, steps=100):
    """Energy after ``steps`` relaxation steps over the energy at the forward initialization
    (He init, seed 0, the first 64 training digits, label clamped)."""
    X, y, _, _ = digits_split()
    params = C.init_params(arch, np.random.default_rng(0))
    state = C.init_state(params, arch, X[:64], C.one_hot(y[:64]), aux=aux)
    start = C.energy(params, arch, state)
    config = C.InferenceConfig(T=steps, lr_h=lr_h, momentum=momentum, schedule=schedule, aux=aux)
    with np.errstate(over="ignore", invalid="ignore"):
        C.relax(params, arch, state, config)
        return C.energy(params, arch, state) / start


@pytest.mark.parametrize("momentum", [0.0, 0.5, 0.9])
@pytest.mark.parametrize("agent,arch", [
    (PC, C.Architecture.mlp(9, 64)),
    (DeepPC, C.Architecture.mlp(9, 64)),
    (DeepPC, C.Architecture.residual(3, 64)),
    (DeepPCNoAux, C.Architecture.residual(3, 64)),
], ids=["pc-L9", "deeppc-L9", "deeppc-B3", "deeppc_noaux-B3"])
def test_a_relaxation_converges_inside_the_stable_region_and_diverges_outside(agent, arch, momentum):
    """At 0.95 of the stable step the energy falls; at twice the step it grows (> 3x in 100 steps).
    The v1 search's corner (lr_h 0.76, momentum 0.87) lies outside for every PC agent."""
    learner = agent()
    bound = stable_lr_h(momentum, learner.curvature(arch))
    growth = [relaxation_growth(arch, learner.schedule, learner.aux and arch.blocks > 0, share * bound,
                                momentum) for share in (0.95, 2.0)]
    assert growth[0] < 1.0 < 3.0 < growth[1], growth
    assert 0.76 > stable_lr_h(0.87, learner.curvature(arch))


def test_stable_step_is_nesterovs_bound_on_a_quadratic():
    """On f = lam x^2 / 2, Nesterov SGD (PyTorch's form) converges just below the bound and
    diverges just above it."""
    lam = 3.0

    def final(lr, mu, steps=2000):
        x, v = 1.0, 0.0
        for _ in range(steps):
            g = lam * x
            v = mu * v + g
            x -= lr * (g + mu * v)
        return abs(x)

    for mu in (0.0, 0.3, 0.9):
        bound = stable_lr_h(mu, lam)
        assert final(0.99 * bound, mu) < 1e-3 and final(1.01 * bound, mu) > 1e3
    with pytest.raises(ValueError, match="momentum"):
        stable_lr_h(1.0, lam)


def test_every_drawn_latent_step_lies_inside_its_agents_stable_region():
    cells = (("papergym/PCDepth-v0", {"depth": 17}), ("papergym/PCDepthResidual-v0", {"blocks": 6}))
    for problem, kwargs in cells:
        task = papergym.make_task(problem, tier="standard", **kwargs)
        view = task.train_view(0, task.budget)
        for agent in (PC(), IPC(), DeepPC(), DeepPCNoS(), DeepPCNoFU(), DeepPCNoAux()):
            if not agent.can_act_on(problem):
                continue
            curvature = agent.curvature(view.arch)
            for c in agent.tuning_candidates(int(view.tuning_runs), view)[1:]:
                assert 0.2 * stable_lr_h(c.momentum, curvature) <= c.lr_h  # a share in [0.2, 0.95]
                assert c.lr_h <= 0.95 * stable_lr_h(c.momentum, curvature) + 1e-12, (agent.id, c)


def test_backprop_does_not_degrade_with_depth_at_the_standard_scale():
    """The benchmark's premise: BP at L = 17 stays within 5 points of L = 3 (8 epochs, width 64)."""
    shallow, _ = run("bp", depth=3, epochs=8)
    deep, _ = run("bp", depth=17, epochs=8)
    assert deep["accuracy"] >= shallow["accuracy"] - 0.05
    assert np.isfinite(deep["energy_imbalance"])
