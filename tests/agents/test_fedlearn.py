"""fedlearn agents: compressors, algorithm identities, bit ratios, the smoke tier."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import papergym
from papergym.agent import REGISTRY
from papergym.agents.fedlearn.common import TUNING_CONFIGS, protocol_grid
from papergym.agents.fedlearn.comparfrefl import ComParFreFL
from papergym.agents.fedlearn.compressors import Identity, ScaledSign, TopK, make_compressor
from papergym.agents.fedlearn.constants import padamfed_constants, parfrefl_constants
from papergym.agents.fedlearn.ef21m import EF21M
from papergym.agents.fedlearn.fedadam import FedAdam
from papergym.agents.fedlearn.fedavg import FedAvg
from papergym.agents.fedlearn.padamfed import PAdaMFed
from papergym.agents.fedlearn.parfrefl import ParFreFL
from papergym.agents.fedlearn.scafcom import Scafcom
from papergym.agents.fedlearn.scaffold import Scaffold
from papergym.benchmarks.spec import find_spec
from papergym.envs.fedlearn.data import make_instance
from papergym.envs.fedlearn.task import run_algorithm

PROBLEM = "papergym/FedRounds-v1"
SMOKE = papergym.spec(PROBLEM).tier_kwargs("smoke")
ENV_KWARGS = {k: v for k, v in SMOKE.items() if k != "tuning_seeds"}
AGENTS = ["trivial", "parfrefl", "comparfrefl", "padamfed", "padamfed_vr", "fedavg",
          "scaffold", "fedadam", "ef21m", "scafcom"]


@pytest.fixture(autouse=True)
def _one_blas_thread(monkeypatch):
    monkeypatch.setenv("PAPERGYM_CACHE", "off")  # tests never read or write ~/.cache
    with threadpool_limits(1):
        yield


def solve(agent_cls, config=None, tier="smoke", **kwargs):
    task = papergym.make_task(PROBLEM, tier=tier, **kwargs)
    budget = task.budget
    return task, agent_cls(config).solve(task.train_view(0, budget), budget, 0)


# -------------------------------------------------------------------------- compressors

@pytest.mark.parametrize("ratio", [0.01, 0.1, 0.5])
def test_topk_keeps_exactly_k_and_is_contractive(ratio):
    rng = np.random.default_rng(0)
    compressor = TopK(ratio)
    for p in (50, 610, 4810):
        v = rng.standard_normal(p) * rng.exponential(1.0, p)
        c = compressor.compress(v)
        k = compressor.k(p)
        assert np.count_nonzero(c) == k
        assert np.sum((c - v) ** 2) <= (1 - k / p) * np.sum(v**2)
        decoded, (codec_id, values, support, _) = compressor(v)
        assert codec_id == 1 and support.sum() == k
        assert np.allclose(decoded, c, rtol=1e-6)


def test_scaled_sign_error_identity():
    rng = np.random.default_rng(1)
    for p in (50, 610, 4810):
        v = rng.standard_normal(p) * rng.exponential(1.0, p)
        c = ScaledSign().compress(v)
        error = np.sum((c - v) ** 2)
        expected = np.sum(v**2) - np.sum(np.abs(v)) ** 2 / p
        assert error == pytest.approx(expected, rel=1e-5)
    assert isinstance(make_compressor("topk", 1.0), Identity)


# ---------------------------------------------------------------- algorithm identities

def test_fedavg_full_participation_one_step_is_gradient_descent():
    kwargs = {**ENV_KWARGS, "participants": 10, "local_steps": 1, "batch_size": None,
              "rounds": 10}
    eta = 0.003
    env = run_algorithm(FedAvg({"eta_l": eta}).build(eta), kwargs, seed=5)
    # gradient descent on F = (1/N) sum_i f_i from the same theta_0, in float64
    theta = env.theta0.copy()
    for _ in range(10):
        theta = theta - eta * env.instance.objective(theta)[1]
    assert np.linalg.norm(env.theta - theta) <= 1e-6 * np.linalg.norm(theta)


def test_scaffold_removes_client_drift_that_fedavg_keeps():
    kwargs = dict(data="lsq_synth", zeta=5.0, kappa=10.0, num_clients=10, participants=10,
                  local_steps=10, batch_size=None, rounds=300)
    eta = 0.1
    gaps = {}
    for name, agent in (("scaffold", Scaffold), ("fedavg", FedAvg)):
        env = run_algorithm(agent({"eta_l": eta}).build(eta), kwargs, seed=0)
        gap = np.array([r["gap"] for r in env.metrics_log])
        gaps[name] = gap / gap[0]
    assert gaps["scaffold"].min() <= 1e-6
    assert gaps["fedavg"][-1] >= 100 * 1e-6


def test_comparfrefl_with_identity_reproduces_parfrefl():
    kwargs = {**ENV_KWARGS, "rounds": 20}
    _, parfrefl = solve(ParFreFL)
    _, identity = solve(ComParFreFL, {"compressor": "identity"})
    thetas = []
    for algorithm in (parfrefl, identity):
        env = run_algorithm(algorithm, kwargs, seed=11)
        thetas.append(env.theta)
    assert np.linalg.norm(thetas[0] - thetas[1]) <= 1e-6 * np.linalg.norm(thetas[0])


class RecordingOracle:
    def __init__(self, oracle, log):
        self.oracle, self.log = oracle, log

    def __call__(self, points):
        self.log.append(np.array(points, dtype=np.float64))
        return self.oracle(points)


@pytest.mark.parametrize("agent_cls, constants", [(ParFreFL, parfrefl_constants),
                                                  (PAdaMFed, padamfed_constants)])
def test_local_steps_have_norm_exactly_eta(agent_cls, constants):
    _, algorithm = solve(agent_cls)
    from papergym.envs.fedlearn.env import FedRoundsEnv

    env = FedRoundsEnv(server=algorithm.make_server(), **ENV_KWARGS)
    observations, _ = env.reset(seed=0)
    eta = constants(env.setting)[1]
    logs = {a: [] for a in env.possible_agents}
    clients = {a: algorithm.make_client(i, RecordingOracle(env.oracle(a), logs[a]), env.setting)
               for i, a in enumerate(env.possible_agents)}
    for round_index in range(4):
        for log in logs.values():
            log.clear()
        actions = {a: clients[a](o) for a, o in observations.items() if o["participating"]}
        for agent in actions:
            points = logs[agent]
            assert len(points) == env.setting.local_steps
            steps = [np.linalg.norm(b - a) for a, b in zip(points, points[1:])]
            # ParFreFL's warm-up round (every client, first participation) evaluates its K
            # gradients at theta to initialise m_i; every later round moves by eta
            first = round_index == 0 and agent_cls is ParFreFL
            assert np.allclose(steps, 0.0 if first else eta, atol=1e-6)
        observations, *_ = env.step(actions)


def test_bits_per_round_ratios_are_exact():
    bits = {}
    for name in ("parfrefl", "padamfed", "fedavg", "scaffold"):
        task, algorithm = solve(REGISTRY.get(name, family="fedlearn"),
                                {"eta_l": 0.01, "tune": False} if name in ("fedavg", "scaffold") else None)
        bits[name] = task.evaluate(algorithm, 0).metrics
    for key in ("bits_up_per_round", "bits_down_per_round", "bits_per_round"):
        assert bits["parfrefl"][key] / bits["padamfed"][key] == 0.5
        assert bits["scaffold"][key] / bits["fedavg"][key] == 2.0


def test_ef21m_tunes_at_ratio_01_and_reuses_the_constants():
    _, at_tuning_ratio = solve(EF21M, {"ratio": 0.1})
    _, at_other_ratio = solve(EF21M, {"ratio": 0.01})
    chosen = dict(at_tuning_ratio.info)
    reused = dict(at_other_ratio.info)
    assert (chosen["gamma"], chosen["momentum"]) == (reused["gamma"], reused["momentum"])
    assert reused["ratio"] == 0.01


def test_scafcom_without_momentum_or_compression_is_scaffold():
    kwargs = {**ENV_KWARGS, "rounds": 15}
    eta = 0.05
    scaffold = Scaffold({"eta_l": eta}).build(eta)
    scafcom = Scafcom({"compressor": "identity", "ratio": 1.0}).build(eta, beta=1.0, ratio=1.0)
    thetas = [run_algorithm(a, kwargs, seed=2).theta for a in (scaffold, scafcom)]
    assert np.linalg.norm(thetas[0] - thetas[1]) <= 1e-5 * np.linalg.norm(thetas[0])
    # with momentum the two differ, and SCAFCOM sends one vector up where SCAFFOLD sends two
    with_momentum = Scafcom().build(eta, beta=0.2, ratio=1.0)
    assert np.linalg.norm(run_algorithm(with_momentum, kwargs, seed=2).theta - thetas[0]) > 1e-3
    task = papergym.make_task(PROBLEM, tier="smoke")
    up = {n: task.evaluate(a, 0).metrics["bits_up_per_round"]
          for n, a in (("scaffold", scaffold), ("scafcom", scafcom))}
    assert up["scafcom"] * 2 == up["scaffold"]


def test_scafcom_tunes_at_ratio_01_and_reuses_the_constants():
    _, tuned = solve(Scafcom, {"ratio": 0.1})
    _, reused = solve(Scafcom, {"ratio": 0.01})
    _, dense = solve(Scafcom, {"compressor": "identity", "ratio": 1.0})
    chosen, kept, uncompressed = dict(tuned.info), dict(reused.info), dict(dense.info)
    assert (chosen["eta_l"], chosen["beta"]) == (kept["eta_l"], kept["beta"])
    # the uncompressed variant reuses the constants tuned under top-k 10% too
    assert (chosen["eta_l"], chosen["beta"]) == (uncompressed["eta_l"], uncompressed["beta"])
    assert dict(reused.info)["ratio"] == 0.01


def test_step_scale_multiplies_the_base_step_and_marks_parameter_free_runs():
    task, base = solve(ParFreFL)
    _, scaled = solve(ParFreFL, {"step_scale": 3.0})
    info, scaled_info = dict(base.info), dict(scaled.info)
    assert scaled_info["eta"] == pytest.approx(3 * info["eta"])
    assert scaled_info["gamma"] == pytest.approx(3 * info["gamma"])
    assert scaled_info["beta"] == info["beta"] and scaled.overridden and not base.overridden
    result = task.evaluate(scaled, 0)
    metrics = result.metrics
    assert metrics["param_step_scale"] == 3.0 and metrics["param_eta"] == scaled_info["eta"]
    # the step-size sweep's figure: one (gamma, final accuracy) point per run
    assert result.curves["final_acc_vs_gamma"] == [(scaled_info["gamma"], metrics["final_acc"])]
    _, fedavg = solve(FedAvg, {"step_scale": 0.3})
    _, tuned = solve(FedAvg)
    assert dict(fedavg.info)["eta_l"] == pytest.approx(0.3 * dict(tuned.info)["eta_l"])
    _, padamfed = solve(PAdaMFed, {"step_scale": 0.3})
    assert padamfed.overridden
    assert dict(padamfed.info)["gamma"] == pytest.approx(0.3 * padamfed_constants(
        task.setting)[2])


def step_constants(section, label, tier):
    """(beta, eta, gamma) that agent ``label`` of a spec section resolves at ``tier``."""
    entry = section.agent(label)
    _, algorithm = solve(REGISTRY.get(entry.id, family="fedlearn"), entry.config_at(tier), tier)
    info = dict(algorithm.info)
    return info["beta"], info["eta"], info["gamma"]


@pytest.mark.parametrize("tier", ["smoke", "standard"])
def test_step_matched_claims_compare_agents_at_the_same_step_constants(tier):
    # a claim matched on both the schedule (`constants`) and `step_scale` compares rules, not
    # step sizes: its agents (ParFreFL against PAdaMFed in C1, ComParFreFL's ratios in C3)
    # must run at exactly the same (beta, eta, gamma) on the tier's federation
    spec = find_spec("fedlearn")
    sections = {s.name: s for s in spec.problems}
    matched = [c for c in spec.claims if {"constants", "step_scale"} <= set(c.matched)]
    assert {"C1-accuracy", "C1-accuracy-padamfed-constants", "C1-bits-to-target",
            "C1-bits-to-target-padamfed-constants"} <= {c.id for c in matched}
    for claim in matched:
        section = sections[claim.problem]
        constants = {label: step_constants(section, label, tier) for label in claim.policies
                     if section.runs_at(label, tier)}
        assert len(set(constants.values())) == 1, (claim.id, constants)
    # the comparison at each method's own schedule is the one that differs
    own = next(c for c in spec.claims if c.id == "C1-accuracy-own")
    assert "constants" not in own.matched
    parfrefl, padamfed = (step_constants(sections["main"], label, tier) for label in own.policies)
    assert parfrefl != padamfed
    assert parfrefl == parfrefl_constants(papergym.make_task(PROBLEM, tier=tier).setting)


def test_parameter_free_agents_do_not_tune_and_overrides_are_marked():
    task, algorithm = solve(ParFreFL)
    assert not algorithm.overridden and not algorithm.constants_verified
    assert task._budgets[0].used["tuning_runs"] == 0
    _, overridden = solve(ParFreFL, {"gamma": 0.1})
    assert overridden.overridden


# ----------------------------------------------------------------------- the smoke tier

def test_every_agent_completes_the_smoke_tier_and_beats_trivial():
    results = {}
    # EF21-M tuned on smoke's single tuning instance picks gamma = 0.3, whose training loss
    # rises on the held-out instance (accuracy 0.71); it runs here at fixed constants
    fixed = {"ef21m": {"gamma": 0.1, "momentum": 1.0, "tune": False}}
    for name in AGENTS:
        task, algorithm = solve(REGISTRY.get(name, family="fedlearn"), fixed.get(name))
        results[name] = task.evaluate(algorithm, 0).metrics
    trivial = results.pop("trivial")
    assert trivial["bits_total"] == 0 and trivial["acc_at_budget"] == trivial["acc_trivial"]
    for name, metrics in results.items():
        assert metrics["loss_decreased"] == 1.0, name
        # chance level is 10%; every method must be far above the untouched theta_0
        assert metrics["acc_at_budget"] >= trivial["acc_at_budget"] + 0.3, (name, metrics)
        if metrics["tuning_runs"] > 0:  # the baseline's sensitivity to its grid
            assert metrics["tuning_score_worst"] <= metrics["tuning_score_median"]
            assert metrics["tuning_score_median"] <= metrics["tuning_score_best"]
        # every tuned baseline evaluates the same number of configurations (was 7, 7, 15, 10)
        assert metrics["tuning_runs"] == (0 if name in ("parfrefl", "comparfrefl", "padamfed",
                                                        "padamfed_vr", "ef21m") else
                                          TUNING_CONFIGS)


def test_evaluation_is_deterministic_by_seed():
    task, algorithm = solve(ComParFreFL)
    first, second = task.evaluate(algorithm, 3), task.evaluate(algorithm, 3)
    assert first.metrics == second.metrics
    assert task.evaluate(algorithm, 4).metrics != first.metrics


def test_lsq_instances_give_gap_metrics():
    from papergym.agents.fedlearn.trivial import Trivial

    task, algorithm = solve(ParFreFL, data="lsq_synth", zeta=1.0, rounds=60)
    metrics = task.evaluate(algorithm, 0).metrics
    _, still = solve(Trivial, data="lsq_synth", zeta=1.0, rounds=60)
    untouched = task.evaluate(still, 0).metrics
    assert "acc_at_budget" not in metrics
    assert metrics["log10_gap_final"] < untouched["log10_gap_final"] - 0.5
    assert make_instance("lsq_synth", np.random.default_rng(0), 3).f_star >= 0


def test_every_tuned_baseline_gets_the_same_budget_its_defaults_first_and_its_own_draws():
    grids = {cls.id: protocol_grid(cls()) for cls in (FedAvg, Scaffold, FedAdam, Scafcom, EF21M)}
    for grid in grids.values():
        assert len(grid) == TUNING_CONFIGS and len({tuple(p.values()) for p in grid}) == len(grid)
    assert grids["fedavg"][0] == {"eta_l": FedAvg().config.eta_l}  # the default is always tried
    assert grids["fedadam"][0] == {"eta_s": 0.1, "eta_l": 0.1}
    assert [p["eta_l"] for p in grids["fedavg"][1:]] != [p["eta_l"] for p in grids["scaffold"][1:]]
    # FedAdam's old grid chose its top corner (0.1, 0.1): the range now reaches past it
    assert max(p["eta_s"] for p in grids["fedadam"]) > 0.3 and max(p["eta_l"] for p in grids["fedadam"]) > 0.3
    # SCAFCOM's labels (top-k 10%, 1%, dense) try the same candidates, at the tuning ratio
    top1 = protocol_grid(Scafcom({"ratio": 0.01}), ratio=0.1, compressor="topk")
    assert top1 == protocol_grid(Scafcom({"ratio": 0.1}), ratio=0.1, compressor="topk")


def test_an_agent_cannot_plant_a_tuning_score_for_another_agent(monkeypatch, tmp_path):
    """The tuning cache is keyed by the trial agent's identity, which the harness sets: a
    hostile agent that sends a diverging algorithm under the honest agent's own cache_key
    stores its score among its own entries only, and the honest agent's run is its own."""
    from papergym.agents.fedlearn.fedavg import FedAvg

    monkeypatch.setenv("PAPERGYM_CACHE", "on")
    monkeypatch.setenv("PAPERGYM_CACHE_DIR", str(tmp_path))
    honest = FedAvg(FedAvg.Config())
    key = honest.build(honest.config.eta_l).cache_key

    def view_for(identity):
        task = papergym.make_task("papergym/FedRounds-v0", tier="smoke")
        task.set_agent_role("baseline", identity)
        return task.train_view(0, task.budget)

    # a step size that diverges, stored under the honest configuration's key
    poison = dataclasses.replace(honest.build(1e6), cache_key=key)
    planted = view_for("thief.py:Thief@0000").validation_score(poison, 0)
    score = view_for(f"fedlearn/fedavg@{FedAvg.code_hash()}").validation_score(
        honest.build(honest.config.eta_l), 0)
    assert score > planted + 0.1, (score, planted)
    assert score == view_for(None).validation_score(honest.build(honest.config.eta_l), 0)
