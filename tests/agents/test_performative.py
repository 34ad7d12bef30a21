"""Agents of the performative family: each runs the smoke tier; the theorems' checks hold on
their trajectories; the equivalence of RRM and gradient play; methods beat trivial rules."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import papergym
from papergym.agent import REGISTRY
from papergym.agents.performative._deploy import AffineAdapter
from papergym.agents.performative.ellipsoid import EllipsoidRule
from papergym.agents.performative.games.gradient_play import GradientPlayPolicy
from papergym.agents.performative.halpern import HalpernRule
from papergym.agents.performative.km import KMRule
from papergym.agents.performative.rrm import RRMRule
from papergym.envs.performative.affine import PerformativeAffineEnv, run_rule, trajectory_metrics
from papergym.envs.performative.game import PerformativeGameEnv, run_game

AFFINE = "papergym/PerformativeAffine-v0"
AFFINE_V1 = "papergym/PerformativeAffine-v1"
DEPLOYERS = ["rrm", "rgd", "km", "extragradient", "halpern", "ellipsoid", "exact"]


def solve_and_score(problem, agent_id, seed=0, tier="smoke", **kwargs):
    task = papergym.make_task(problem, tier=tier, **kwargs)
    budget = task.budget
    agent = REGISTRY.get(agent_id, family="performative")()
    task.set_agent_role(agent.role)  # as the runner does: oracle access for references only
    artifact = agent.solve(task.train_view(seed, budget), budget, seed)
    return task.evaluate(artifact, seed), budget


@pytest.mark.parametrize("agent_id", DEPLOYERS)
def test_deployers_run_the_smoke_tier_within_budget_and_deterministically(agent_id):
    for family in ("contractive", "nonexpansive"):
        result, budget = solve_and_score(AFFINE, agent_id, family=family, d=3)
        again, _ = solve_and_score(AFFINE, agent_id, family=family, d=3)
        assert result.metrics == again.metrics
        assert budget.used["deployments"] <= budget.limits["deployments"]
        assert result.metrics["contraction_violations"] >= 0
    if agent_id == "exact":
        assert result.metrics["oracle_access"] == 1.0 and result.metrics["success"] == 1.0


@pytest.mark.parametrize("problem, kwargs, metric, value", [
    (AFFINE, {"family": "contractive", "d": 3}, "gap_reduction", 0.0),
    (AFFINE, {"family": "bimatrix", "m": 2, "n": 2, "lam": 0.2}, "gap_reduction", 0.0),
    ("papergym/StrategicJury-v0", {}, "score", 0.0),
])
def test_stay_is_trivial_by_construction(problem, kwargs, metric, value):
    result, budget = solve_and_score(problem, "stay", **kwargs)
    assert result.metrics[metric] == value and result.metrics["success" if problem == AFFINE
                                                                 else "flips"] == 0.0
    assert sum(budget.used.values()) == 0


def test_stay_keeps_the_starting_strategies_of_a_game():
    stay, _ = solve_and_score("papergym/PerformativeGame-v0", "stay")
    ogda, _ = solve_and_score("papergym/PerformativeGame-v0", "ogda")
    assert stay.metrics["exploitability"] > 10 * ogda.metrics["exploitability"]


@pytest.mark.parametrize("mapping", ["negation", "rotation"])
def test_ellipsoid_needs_many_deployments_on_v1_nonexpansive_instances(mapping):
    # v0 centred these instances at 1/2 * 1, the center of the ellipsoid's E_0; v1 draws
    # x_s ~ U[0.2, 0.8]^d, and the method has to search for it
    result, _ = solve_and_score(AFFINE_V1, "ellipsoid", tier="standard", family="nonexpansive",
                                d=3, map=mapping, T=2000, n_eval_instances=4)
    taus = [u["hitting_time"] for u in result.units]
    assert min(taus) > 10 and result.metrics["success"] == 1.0


def test_exact_reference_solves_savani_games_where_local_dynamics_fail():
    kwargs = dict(family="bimatrix", game="savani", m=4, n=4, lam=0.2, T=2000, n_eval_instances=3)
    exact, _ = solve_and_score(AFFINE_V1, "exact", tier="standard", **kwargs)
    rrm, _ = solve_and_score(AFFINE_V1, "rrm", tier="standard", **kwargs)
    assert exact.metrics["success"] == 1.0 and rrm.metrics["success"] == 0.0


def test_ellipsoid_is_not_applicable_on_simplex_products():
    with pytest.raises(ValueError, match="box domains only"):
        solve_and_score(AFFINE, "ellipsoid", family="bimatrix")


def test_rrm_contracts_at_rate_rho_and_halpern_bound_holds():
    for rho in (0.5, 0.9):
        env = PerformativeAffineEnv(family="contractive", d=5, rho=rho, T=300, eps=1e-12)
        for seed in range(5):
            xs, _ = run_rule(env, RRMRule(AffineAdapter(env.instance.domain)), seed)
            m = trajectory_metrics(env.instance, xs, env.eps, env.T, 0.0)
            assert m["contraction_violations"] == 0 and m["steps_checked"] > 20
    env = PerformativeAffineEnv(family="nonexpansive", d=4, map="rotation", T=2000)
    for seed in range(3):
        xs, _ = run_rule(env, HalpernRule(AffineAdapter(env.instance.domain)), seed)
        m = trajectory_metrics(env.instance, xs, env.eps, env.T, 0.0)
        assert m["halpern_violations"] == 0 and m["success"] == 1.0  # O(1/eps) converges
        xs, _ = run_rule(env, RRMRule(AffineAdapter(env.instance.domain)), seed)
        m = trajectory_metrics(env.instance, xs, env.eps, env.T, 0.0)
        assert m["gap_spread"] < 1e-12 and m["success"] == 0.0  # RRM rotates forever
    from papergym.envs.performative.affine import PerformativeAffineEnvV1

    env = PerformativeAffineEnvV1(family="nonexpansive", d=4, map="negation", T=500)
    for seed in range(5):  # claim C2a on v1: a 2-cycle inside X from t = 1 on
        xs, _ = run_rule(env, RRMRule(AffineAdapter(env.instance.domain)), seed)
        m = trajectory_metrics(env.instance, xs, env.eps, env.T, 0.0)
        assert m["gap_spread_from_1"] < 1e-12 and m["success"] == 0.0


def test_km_residual_never_increases_on_nonexpansive_maps():
    """Claim C2c as a fact of the implementation: for nonexpansive G the Krasnosel'skii-Mann
    residual ||x_t - G(x_t)|| is non-increasing, on the maps where RRM cycles."""
    for mapping in ("negation", "rotation"):
        env = PerformativeAffineEnv(family="nonexpansive", d=4, map=mapping, T=500)
        for seed in range(3):
            for a in (0.25, 0.5, 0.75):
                xs, _ = run_rule(env, KMRule(AffineAdapter(env.instance.domain), a), seed)
                m = trajectory_metrics(env.instance, xs, env.eps, env.T, 0.0)
                assert m["residual_increases"] == 0 and len(xs) >= 2, (mapping, seed, a)


def test_rrm_hitting_time_is_log_gap_over_one_minus_rho():
    """Claims C3c/C3d as a fact of the implementation: RRM's rate constant
    tau (1 - rho) / log(gap_0 / eps) lies in [0.75, 1.25] for rho in {0.9, 0.99, 0.999}."""
    for rho in (0.9, 0.99, 0.999):
        env = PerformativeAffineEnv(family="contractive", d=5, rho=rho, T=20000)
        for seed in range(2):
            xs, _ = run_rule(env, RRMRule(AffineAdapter(env.instance.domain)), seed)
            m = trajectory_metrics(env.instance, xs, env.eps, env.T, 0.0)
            assert m["success"] == 1.0 and 0.75 <= m["rate_constant"] <= 1.25, (rho, seed, m)


def test_exact_reference_finds_a_stable_point_on_every_polymatrix_instance():
    """Claim C4a as a fact of the implementation: the exact enumerator succeeds on every
    held-out polymatrix instance, for every lambda."""
    for lam in (0.05, 1.0):
        result, _ = solve_and_score(AFFINE, "exact", family="polymatrix", d=5, lam=lam,
                                    n_eval_instances=4)
        assert [u["success"] for u in result.units] == [1.0] * 4


def test_ellipsoid_keeps_x_s_in_every_ellipsoid_and_beats_rrm_near_rho_one():
    env = PerformativeAffineEnv(family="contractive", d=4, rho=0.995, T=5000)
    times = {"ellipsoid": [], "rrm": []}
    for seed in range(3):
        rule = EllipsoidRule(env.instance.domain, env.T, record=True)
        xs, _ = run_rule(env, rule, seed)
        x_s = env.instance.known_ps
        c0, P0 = rule.history[0]
        for center, P in rule.history:  # every cut is valid: the PS point is never cut off
            assert (x_s - center) @ np.linalg.solve(P, x_s - center) <= 1 + 1e-6
        for x in xs[1:]:  # deployed points are centers inside X (feasibility cuts) within E_0
            assert np.all((x >= 0) & (x <= 1))
            assert (x - c0) @ np.linalg.solve(P0, x - c0) <= 1 + 1e-12
        times["ellipsoid"].append(len(xs) - 1)
        xs, _ = run_rule(env, RRMRule(AffineAdapter(env.instance.domain)), seed)
        times["rrm"].append(len(xs) - 1)
    # ellipsoid: a few hundred deployments; RRM: about log(gap0 / eps) / (1 - rho) ~ 1,600
    assert max(times["ellipsoid"]) * 5 < min(times["rrm"])
    env = PerformativeAffineEnv(family="contractive", d=4, rho=0.5, T=2000)
    xs_rrm, _ = run_rule(env, RRMRule(AffineAdapter(env.instance.domain)), 0)
    xs_ell, _ = run_rule(env, EllipsoidRule(env.instance.domain, env.T), 0)
    assert len(xs_rrm) * 5 < len(xs_ell)


def test_tuned_baselines_beat_rrm_on_nonexpansive_rotations():
    kwargs = dict(family="nonexpansive", map="rotation", d=4, T=1500, n_eval_instances=3)
    rrm, _ = solve_and_score(AFFINE, "rrm", **kwargs)
    for agent_id in ("km", "rgd", "halpern", "ellipsoid"):
        result, _ = solve_and_score(AFFINE, agent_id, **kwargs)
        assert result.metrics["gap_reduction"] > rrm.metrics["gap_reduction"] + 0.5, agent_id


def test_rrm_equals_gradient_play_step_for_step():
    for kind, kwargs in (("polymatrix", {"d": 5, "lam": 1.0}),
                         ("bimatrix", {"m": 3, "n": 3, "lam": 0.5, "game": "cyclic"})):
        game = PerformativeGameEnv(kind=kind, T=200, **kwargs)
        policy = GradientPlayPolicy(kind, {a: game.action_space(a).shape[0]
                                           for a in game.possible_agents}, 200, kwargs["lam"])
        affine = PerformativeAffineEnv(family=kind, T=200, eps=1e-300, **kwargs)
        for seed in (0, 7):
            profiles = run_game(game, policy, seed)
            xs, _ = run_rule(affine, RRMRule(AffineAdapter(affine.instance.domain)), seed)
            assert len(profiles) == 201
            # the affine env stops once the gap is exactly 0 (a pure PS point); gradient play
            # then stays on that fixed point
            padded = np.array(xs + [xs[-1]] * (201 - len(xs)))
            assert np.max(np.abs(np.array(profiles) - padded)) < 1e-12


@pytest.mark.parametrize("agent_id", ["gradient_play", "ogda", "hedge"])
def test_game_learners_run_the_smoke_tier(agent_id):
    result, budget = solve_and_score("papergym/PerformativeGame-v0", agent_id)
    assert 0 <= result.metrics["exploitability"] <= 1.5
    assert budget.used["rounds"] <= budget.limits["rounds"]


def test_ogda_converges_on_cyclic_games_where_gradient_play_cycles():
    kwargs = dict(m=2, n=2, game="cyclic", T=500, n_eval_games=3, n_train_games=1)
    ogda, _ = solve_and_score("papergym/PerformativeGame-v0", "ogda", **kwargs)
    gp, _ = solve_and_score("papergym/PerformativeGame-v0", "gradient_play", **kwargs)
    assert ogda.metrics["success"] == 1.0 and ogda.metrics["exploitability"] <= 1e-4
    assert min(u["exploitability"] for u in gp.units) >= 1e-3


JURY = ["local_search", "first_improvement", "random_restart", "simulated_annealing",
        "brute_force"]


@pytest.mark.parametrize("agent_id", JURY)
def test_jury_agents_run_the_smoke_tier(agent_id):
    result, budget = solve_and_score("papergym/StrategicJury-v0", agent_id)
    assert result.metrics["identity_violations"] == 0
    assert budget.used["flips"] <= budget.limits["flips"]
    if agent_id in ("local_search", "first_improvement"):
        # from all-negative, improving flips end in vertex-only 1-flip local max cuts
        assert result.metrics["local_opt"] == 1.0 and result.metrics["vertex_only"] == 1.0
        assert result.metrics["local_opt_violations"] == 0 and result.metrics["score"] >= 0.5
    if agent_id == "brute_force":
        assert all(u["score"] == 1.0 for u in result.units)


def test_jury_search_beats_a_random_labeling_by_a_margin():
    task = papergym.make_task("papergym/StrategicJury-v0", tier="smoke", n_vertices=10,
                              edge_prob=0.5, n_eval_graphs=5)
    rng = np.random.default_rng(0)

    class RandomFlips:
        def __call__(self, obs):
            return int(rng.integers(obs["f"].size))

    random_score = task.evaluate(RandomFlips(), 0).metrics["score"]
    result, _ = solve_and_score("papergym/StrategicJury-v0", "local_search", n_vertices=10,
                                edge_prob=0.5, n_eval_graphs=5)
    assert result.metrics["score"] > 0.9 and result.metrics["score"] > random_score + 0.5


@pytest.mark.skipif(importlib.util.find_spec("whynot") is None,
                    reason="the credit data: pip install --no-deps whynot==0.12.0")
@pytest.mark.parametrize("agent_id", ["rrm", "rgd", "km", "extragradient", "halpern"])
def test_deployers_run_the_credit_smoke_tier(agent_id):
    result, budget = solve_and_score("papergym/StrategicCredit-v0", agent_id, epsilon=10.0)
    assert 0.3 < result.metrics["pr_test"] < 0.8
    assert budget.used["deployments"] <= budget.limits["deployments"]
    if agent_id == "rrm":
        assert result.metrics["gap_train_round3"] <= 1e-10  # the degeneracy (C7a)


def test_deep_cut_ellipsoid_keeps_every_stable_point_and_converges():
    env = PerformativeAffineEnv(family="contractive", d=3, rho=0.9, T=2000)
    for seed in range(3):
        rule = EllipsoidRule(env.instance.domain, env.T, cut="deep", record=True)
        xs, _ = run_rule(env, rule, seed)
        x_s = env.instance.known_ps
        for center, P in rule.history:
            assert (x_s - center) @ np.linalg.solve(P, x_s - center) <= 1 + 1e-6
        assert env.instance.gap(xs[-1]) <= env.eps


@pytest.mark.parametrize("agent_id", ["stay", "ellipsoid", "halpern", "rrm", "exact"])
def test_rules_declared_seed_free_score_the_same_at_every_training_seed(agent_id):
    # seed_artifact = False lets a section count instances as units: the rule a seed's solve
    # returns must not depend on that seed (scored on the same held-out instances)
    agent_cls = REGISTRY.get(agent_id, family="performative")
    assert agent_cls.seed_artifact is False
    task = papergym.make_task(AFFINE_V1, tier="smoke", family="contractive", rho=0.9, d=3)
    task.set_agent_role(agent_cls.role)
    scores = [task.evaluate(agent_cls().solve(task.train_view(seed, task.budget), task.budget,
                                              seed), 0).metrics for seed in (0, 1, 7)]
    assert scores[0] == scores[1] == scores[2]


def test_tuned_deployers_keep_a_seed_artifact():
    for agent_id in ("rgd", "km", "extragradient"):
        assert REGISTRY.get(agent_id, family="performative").seed_artifact is True
