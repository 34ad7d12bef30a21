"""Correctness tests of the abstraction family (spec: "Tests that must hold")."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import papergym
from papergym.envs.abstraction.core import (
    MDP,
    bellman_q,
    block_matrix,
    canonical,
    greedy,
    optimal_values,
    policy_value,
    pullback_homomorphism_errors,
    safety_invariant,
)
from papergym.envs.abstraction.grid import AbstractedGridEnv, grid_model, layout
from papergym.envs.abstraction.instances import make_instance
from papergym.envs.abstraction.oracles import (
    bisimulation_metric,
    build_oracle,
    coarsest_bisimulation,
    is_bisimulation,
    metric_operator,
    one_step_partition,
)
from papergym.envs.abstraction.task import TransitionSampler, partition_metrics
from papergym.envs.abstraction.transport import TreeTransport, pad_support, w1_linprog, w1_trees
from papergym.problem import BudgetExceeded

LIFTED = dict(n_abstract=(4, 6), copies=(1, 3), n_actions=2, branching=2)


def _chain_mdp(rewards_a: list[float], rewards_b: list[float]) -> MDP:
    """Two deterministic chains a0 -> a1 -> a2 (absorbing) and b0 -> b1 -> b2, one action."""
    n = len(rewards_a) + len(rewards_b)
    P = np.zeros((n, 1, n))
    for offset, length in ((0, len(rewards_a)), (len(rewards_a), len(rewards_b))):
        for i in range(length):
            P[offset + i, 0, offset + min(i + 1, length - 1)] = 1.0
    R = np.array(rewards_a + rewards_b, dtype=float)[:, None]
    return MDP(R, P, np.zeros(n, dtype=bool), 0.9)


# ----------------------------------------------------------------------------- generators


@pytest.mark.parametrize("family,kwargs", [
    ("garnet", dict(n_states=15, n_actions=3, branching=3)),
    ("lifted", LIFTED),
    ("lifted", dict(LIFTED, twin_frac=0.4)),
    ("perturbed", dict(LIFTED, delta=0.05)),
])
def test_generators_give_distributions_and_repeat_by_seed(family, kwargs):
    for seed in range(5):
        a, b = make_instance(family, seed, **kwargs), make_instance(family, seed, **kwargs)
        assert np.abs(a.mdp.P.sum(-1) - 1).max() <= 1e-12 and a.mdp.P.min() >= 0
        for x, y in ((a.mdp.P, b.mdp.P), (a.mdp.R, b.mdp.R), (a.mdp.unsafe, b.mdp.unsafe)):
            assert np.array_equal(x, y)
        a.mdp.check()


def test_lifted_h_is_an_exact_homomorphism_onto_a_reduced_abstract_mdp():
    for seed in range(20):
        inst = make_instance("lifted", seed, **dict(LIFTED, twin_frac=0.3))
        errors = pullback_homomorphism_errors(inst.mdp, inst.abstract, inst.planted)
        assert errors["reward"] <= 1e-12 and errors["transition"] <= 1e-12
        assert errors["label"] == 0
        assert coarsest_bisimulation(inst.abstract).max() + 1 == inst.abstract.n_states


def test_repeated_rewards_make_one_step_signatures_miss_the_bisimulation():
    # v1's generator (rewards from {0, 0.5, 1}) against v0's (U[0, 1]) on the same cells
    cell = dict(n_abstract=(6, 10), copies=(1, 3), n_actions=2, branching=2)
    differ = {0: 0, 3: 0}
    for levels in differ:
        for seed in range(100):
            inst = make_instance("lifted", seed, reward_levels=levels, **cell)
            if levels:
                assert set(np.unique(inst.mdp.R)) <= {0.0, 0.5, 1.0}
            bisim = coarsest_bisimulation(inst.mdp)
            np.testing.assert_array_equal(bisim, canonical(inst.planted))
            local = one_step_partition(inst.mdp)
            assert bisim.max() >= local.max()  # the fixed point refines the one-step partition
            differ[levels] += bisim.max() != local.max()
    assert differ[0] == 0 and differ[3] >= 80  # measured: 0 and 94 of 100


def test_v1_draws_repeated_rewards_and_v0_keeps_its_generator():
    v1 = papergym.make_task("papergym/StateAbstraction-v1", tier="smoke")
    v0 = papergym.make_task("papergym/StateAbstraction-v0", tier="smoke")
    assert set(np.unique(v1._instance(7).mdp.R)) <= {0.0, 0.5, 1.0}
    assert not set(np.unique(v0._instance(7).mdp.R)) <= {0.0, 0.5, 1.0}
    np.testing.assert_array_equal(v0._instance(7).mdp.R,
                                  make_instance("lifted", 7, **dict(v0.generator)).mdp.R)
    assert "reward_levels" not in v0.generator
    with pytest.raises(ValueError, match="unknown arguments"):
        papergym.make_task("papergym/StateAbstraction-v0", tier="smoke", reward_levels=3)


def test_v1_cells_draw_their_own_instances():
    cell = dict(tier="smoke", family="perturbed", n_abstract=[5, 8], branching=3, spread=1)
    tasks = {delta: [papergym.make_task("papergym/StateAbstraction-v1", delta=delta, **cell)
                     for _ in range(2)] for delta in (0.01, 0.05)}
    for seed in range(5):
        same = [t._instance(seed) for t in tasks[0.01]]
        np.testing.assert_array_equal(same[0].mdp.P, same[1].mdp.P)  # one cell: repeatable
        other = tasks[0.05][0]._instance(seed)
        assert same[0].mdp.n_states != other.mdp.n_states or not np.array_equal(
            same[0].planted, other.planted)
    v0 = [papergym.make_task("papergym/StateAbstraction-v0", delta=d, **cell) for d in (0.01, 0.05)]
    np.testing.assert_array_equal(v0[0]._instance(3).planted, v0[1]._instance(3).planted)


def test_twins_have_equal_q_and_opposite_labels():
    for seed in range(10):
        inst = make_instance("lifted", seed, **dict(LIFTED, twin_frac=0.5))
        _, Q = optimal_values(inst.abstract)
        assert inst.twins
        for s, t in inst.twins:
            assert np.abs(Q[s] - Q[t]).max() <= 1e-10
            assert inst.abstract.unsafe[s] != inst.abstract.unsafe[t]


# ----------------------------------------------------------------------------- values


def test_value_iteration_matches_the_exact_value_of_its_greedy_policy():
    for seed in range(10):
        mdp = make_instance("garnet", seed, n_states=20, n_actions=3, branching=3).mdp
        V, Q = optimal_values(mdp)
        assert np.abs(policy_value(mdp, greedy(Q)) - V).max() <= 1e-9
        assert np.abs(bellman_q(mdp, V) - Q).max() <= 1e-10
        assert np.abs(Q.max(axis=1) - V).max() <= 1e-10


# ----------------------------------------------------------------------------- bisimulation


def test_refinement_merges_symmetric_chains_and_splits_a_late_reward_difference():
    same = _chain_mdp([0.1, 0.2, 0.0], [0.1, 0.2, 0.0])
    assert np.array_equal(coarsest_bisimulation(same), [0, 1, 2, 0, 1, 2])
    late = _chain_mdp([0.1, 0.1, 0.0], [0.1, 0.1, 0.5])   # differs two steps ahead
    bisim = coarsest_bisimulation(late)
    assert bisim[0] != bisim[3]                              # refinement splits the starts
    assert one_step_partition(late)[0] == one_step_partition(late)[3]  # one step merges them


def _set_partitions(n: int):
    if n == 0:
        yield []
        return
    for rest in _set_partitions(n - 1):
        for block in range(max(rest, default=-1) + 2):
            yield [*rest, block]


def test_refinement_equals_brute_force_largest_bisimulation_on_tiny_mdps():
    for seed in range(15):
        inst = make_instance("lifted", seed, n_abstract=3, copies=(1, 3), n_actions=2, branching=2)
        mdp = inst.mdp
        if mdp.n_states > 7:
            continue
        bisims = [np.array(p) for p in _set_partitions(mdp.n_states)
                  if is_bisimulation(mdp, canonical(np.array(p)))]
        coarsest = min(bisims, key=lambda p: p.max())
        for p in bisims:  # every bisimulation refines the largest one
            assert all(len(set(coarsest[p == b])) == 1 for b in range(p.max() + 1))
        assert np.array_equal(coarsest_bisimulation(mdp), canonical(coarsest))


def test_refinement_equals_the_planted_kernel_on_50_lifted_instances():
    for seed in range(50):
        inst = make_instance("lifted", seed, n_abstract=(6, 10), copies=(1, 3), n_actions=3,
                             branching=2)
        assert np.array_equal(coarsest_bisimulation(inst.mdp), canonical(inst.planted))


# ----------------------------------------------------------------------------- transport


@pytest.mark.parametrize("m,n", [(2, 2), (2, 3), (3, 3), (3, 2), (1, 3)])
def test_tree_solver_equals_the_transport_lp(m, n):
    rng = np.random.default_rng([m, n])
    N = 200 if (m, n) in ((2, 2), (2, 3), (3, 3)) else 50
    mu, nu = rng.dirichlet(np.ones(m), size=N), rng.dirichlet(np.ones(n), size=N)
    C = rng.random((N, m, n))
    trees = w1_trees(mu, nu, C)
    lp = np.array([w1_linprog(mu[i], nu[i], C[i]) for i in range(N)])
    assert np.abs(trees - lp).max() <= 1e-9


def test_dirac_transport_is_the_cost_and_batched_costs_agree():
    rng = np.random.default_rng(0)
    C = rng.random((50, 1, 1))
    assert np.allclose(w1_trees(np.ones((50, 1)), np.ones((50, 1)), C), C[:, 0, 0], atol=1e-15)
    S = 6
    d = rng.random((S, S))
    P = np.zeros((40, S))
    for row in P:
        row[rng.choice(S, size=rng.integers(1, 4), replace=False)] = 1.0
    P[:, :] = P * rng.random(P.shape)
    P /= P.sum(1, keepdims=True)
    idx, mass = pad_support(P)
    solver = TreeTransport(mass[:20], mass[20:], idx[:20], idx[20:])
    for i in range(20):
        xs, ys = np.nonzero(P[i])[0], np.nonzero(P[20 + i])[0]
        assert abs(solver.cost(d)[i] - w1_linprog(P[i, xs], P[20 + i, ys], d[np.ix_(xs, ys)])) <= 1e-9


# ----------------------------------------------------------------------------- the metric


def _metric_instance(seed: int, **kw):
    return make_instance("lifted", seed, **{**dict(n_abstract=3, copies=(1, 3), n_actions=2,
                                                   branching=3, spread=1), **kw})


def test_metric_is_a_sound_fixed_point_pseudometric_zero_on_bisimilar_pairs():
    for seed in range(4):
        inst = _metric_instance(seed)
        mdp = inst.mdp
        d, _ = bisimulation_metric(mdp)
        assert np.abs(metric_operator(mdp, d) - d).max() <= 1e-9 * mdp.v_range  # LP reference
        assert np.array_equal(d, d.T) and np.all(np.diag(d) == 0)
        assert np.all(d[:, None, :] <= d[:, :, None] + d[None, :, :] + 1e-9)    # triangle
        V, _ = optimal_values(mdp)
        assert np.all(np.abs(V[:, None] - V[None, :]) <= d + 1e-9)              # soundness
        bisim = coarsest_bisimulation(mdp)
        assert np.array_equal(d <= 1e-9, bisim[:, None] == bisim[None, :])


def test_metric_with_large_supports_uses_the_lp_and_agrees_on_soundness():
    inst = make_instance("lifted", 1, n_abstract=3, copies=(2, 3), n_actions=1, branching=2)
    assert (inst.mdp.P > 0).sum(-1).max() > 3
    d, _ = bisimulation_metric(inst.mdp)
    V, _ = optimal_values(inst.mdp)
    assert np.all(np.abs(V[:, None] - V[None, :]) <= d + 1e-9)
    bisim = coarsest_bisimulation(inst.mdp)
    assert np.array_equal(d <= 1e-9, bisim[:, None] == bisim[None, :])


# ----------------------------------------------------------------------------- invariant


def test_invariant_is_the_greatest_fixed_point_on_a_hand_example():
    # 0 -> {0} or 1; 1 -> 2 only; 2 unsafe (absorbing); 3 -> {3, 0}
    P = np.zeros((4, 2, 4))
    P[0, 0, 0] = 1.0
    P[0, 1, 1] = 1.0
    P[1, :, 2] = 1.0
    P[2, :, 2] = 1.0
    P[3, :, [3, 0]] = 0.5
    unsafe = np.array([False, False, True, False])
    inv = safety_invariant(P, unsafe)
    assert inv.tolist() == [True, False, False, True]
    for seed in range(10):
        mdp = make_instance("garnet", seed, n_states=20, n_actions=2, branching=2,
                            label_rate=0.3).mdp
        inv = safety_invariant(mdp.P, mdp.unsafe)
        assert not np.any(inv & mdp.unsafe)
        for s in np.nonzero(inv)[0]:
            assert any(np.all(inv[mdp.P[s, a] > 0]) for a in range(mdp.n_actions))


# ----------------------------------------------------------------------------- scoring


def test_identity_scores_zero_and_the_planted_kernel_scores_one():
    for seed in range(10):
        inst = make_instance("lifted", seed, **LIFTED)
        oracle = build_oracle(inst.mdp)
        identity = partition_metrics(inst.mdp, oracle, np.arange(inst.mdp.n_states), 0.02)
        assert identity["value_loss"] == identity["value_transfer_error"] == 0
        assert identity["invariant_transfer_error"] == 0 and identity["safe_compression"] == 0
        planted = partition_metrics(inst.mdp, oracle, canonical(inst.planted), 0.02)
        assert planted["value_loss"] <= 1e-12 and planted["invariant_transfer_error"] == 0
        assert planted["safe_compression"] == 1 and planted["merge_recall"] == 1


def test_sampler_enforces_its_budget_and_matches_the_model():
    mdp = make_instance("garnet", 0, n_states=5, n_actions=2, branching=2).mdp
    sampler = TransitionSampler(mdp, 40_000, (0,))
    r, nxt, _ = sampler.sample(np.zeros(40_000, dtype=int), np.ones(40_000, dtype=int))
    assert np.allclose(r, mdp.R[0, 1])
    freq = np.bincount(nxt, minlength=5) / nxt.size
    assert np.abs(freq - mdp.P[0, 1]).sum() / 2 <= 0.01
    with pytest.raises(BudgetExceeded):
        sampler.sample([0], [0])


def test_task_rejects_bad_partitions_and_unknown_arguments():
    task = papergym.make_task("papergym/StateAbstraction-v0", tier="smoke", n_eval_instances=2)
    with pytest.raises(ValueError, match="block id"):
        task.evaluate(lambda mdp: np.zeros(3), 0)
    with pytest.raises(TypeError):
        task.evaluate("not a routine", 0)
    with pytest.raises(ValueError, match="unknown arguments"):
        papergym.make_task("papergym/StateAbstraction-v0", tier="smoke", n_rooms=3)


# ----------------------------------------------------------------------------- the grid


def test_grid_passes_the_checker_and_repeats_by_seed():
    check_env(gym.make("papergym/AbstractedGrid-v0").unwrapped)
    runs = []
    for _ in range(2):
        env = AbstractedGridEnv(size=9, n_bits=3, obs="multi")
        obs, _ = env.reset(seed=3)
        trace, rng = [obs.tolist()], np.random.default_rng(0)
        for _ in range(1000):
            obs, r, term, trunc, _ = env.step(int(rng.integers(4)))
            trace.append([*obs.tolist(), r])
            if term or trunc:
                obs, _ = env.reset()
        runs.append(trace)
    assert runs[0] == runs[1]


def test_grid_bits_change_neither_motion_nor_reward():
    a, b = AbstractedGridEnv(size=9, n_bits=3), AbstractedGridEnv(size=9, n_bits=3)
    a.reset(seed=1)
    b.reset(seed=1)
    b.bits = 1 - a.bits
    for step in range(200):
        ra, rb = a.step(step % 4)[1], b.step(step % 4)[1]
        assert (a.x, a.y, ra) == (b.x, b.y, rb)
        if (a.x, a.y) in a.info["lava"] or (a.x, a.y) == a.info["goal"]:
            break


def test_grid_model_matches_sampled_transitions():
    env = AbstractedGridEnv(size=5, n_bits=1)
    mdp, h = env.model()
    env.reset(seed=0)
    wall = layout(5)["wall"]
    for x, y, action in ((0, 0, 1), (1, 1, 2), (2, 1, 1), (4, 2, 3)):
        assert not wall[y, x] and (x, y) not in layout(5)["lava"]
        counts = np.zeros(mdp.n_states)
        n = 20_000
        for _ in range(n):
            env.x, env.y, env.bits = x, y, np.zeros(1, dtype=np.int64)
            env.t = 0
            env.step(action)
            counts[env.state_index()] += 1
        s = (y * 5 + x) * 2
        assert np.abs(counts / n - mdp.P[s, action]).sum() / 2 <= 0.01
    assert np.array_equal(coarsest_bisimulation(mdp)[::2], coarsest_bisimulation(mdp)[1::2])
    E = block_matrix(h)
    assert np.abs(mdp.P @ E - (mdp.P @ E)[::2].repeat(2, axis=0)).max() <= 1e-12


def test_grid_abstraction_observations_and_bad_actions():
    mdp, h = grid_model(5, 1, 0.1)
    env = AbstractedGridEnv(size=5, n_bits=1, abstraction=h)
    obs, _ = env.reset(seed=0)
    assert env.observation_space.n == 25 and obs == 0
    with pytest.raises(ValueError):
        env.step(4)
    with pytest.raises(ValueError):
        AbstractedGridEnv(size=5, n_bits=1, abstraction=np.zeros(3, dtype=int))
