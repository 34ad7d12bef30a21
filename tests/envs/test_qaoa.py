"""qaoa family: subsolver, QAOA² bookkeeping, references and the two environments."""

from __future__ import annotations

import logging

import gymnasium as gym
import numpy as np
import pytest

import papergym
from papergym.envs.qaoa import references, subsolver
from papergym.envs.qaoa.env import QAOA2AssignEnv, QAOA2PartitionEnv
from papergym.envs.qaoa.instances import (
    OOD_FOLDER,
    TEST_FOLDER,
    TRAIN_FOLDER,
    density_class,
    generate,
    get_instance,
    instance_family,
    instance_set,
    node_features,
    ood_stratified,
)
from papergym.envs.qaoa.logs import (
    build_logged_runs,
    graph_correlations,
    modularity,
    ranking_quality,
)
from papergym.envs.qaoa.partitions import perturb_partition, random_partition
from papergym.envs.qaoa.qaoa2 import coarsen, repair_assignment
from papergym.maxcut import best_known_cut, cut_value, exact_maxcut, list_instances

TINY = ["g05_8_s1000200", "w05_8_s1000201"]  # generated, brute-forced, fast


def random_graph(rng: np.random.Generator, n: int, density: float = 0.6,
                 low: float = -5.0, high: float = 5.0) -> np.ndarray:
    upper = np.triu(rng.uniform(low, high, (n, n)) * (rng.random((n, n)) < density), 1)
    return upper + upper.T


def qiskit_expectation(weights: np.ndarray, gamma: float, beta: float) -> float:
    from qiskit.quantum_info import Statevector

    probabilities = Statevector(subsolver.qaoa_circuit(weights, gamma, beta)).probabilities()
    return float(probabilities @ subsolver.cut_table(weights))


# --------------------------------------------------------------------------- closed form
def test_closed_form_matches_qiskit_statevector_on_weighted_graphs():
    rng = np.random.default_rng(0)
    triangles_seen = 0
    for _ in range(30):
        n = int(rng.integers(3, 9))
        weights = random_graph(rng, n)
        adjacency = weights != 0
        triangles_seen += int(np.trace(np.linalg.matrix_power(adjacency.astype(int), 3)) > 0)
        for gamma, beta in rng.uniform(0, 2 * np.pi, (5, 2)):
            assert subsolver.expectation(weights, gamma, beta) == pytest.approx(
                qiskit_expectation(weights, gamma, beta), abs=1e-9)
    assert triangles_seen >= 20  # the triangle term is exercised


def test_unweighted_formula_matches_qiskit_on_unit_weights():
    rng = np.random.default_rng(1)
    for _ in range(10):
        n = int(rng.integers(3, 9))
        unit = (random_graph(rng, n) != 0).astype(float)
        for gamma, beta in rng.uniform(0, 2 * np.pi, (5, 2)):
            exact = qiskit_expectation(unit, gamma, beta)
            assert subsolver.expectation_unweighted(unit, gamma, beta) == pytest.approx(exact, abs=1e-9)
            assert subsolver.expectation(unit, gamma, beta) == pytest.approx(exact, abs=1e-9)


def test_analytic_gradient_matches_central_differences():
    rng = np.random.default_rng(2)
    h = 1e-6
    for _ in range(10):
        weights = random_graph(rng, int(rng.integers(3, 9)))
        gamma, beta = rng.uniform(0, 2 * np.pi, 2)
        _, d_gamma, d_beta = subsolver.expectation_and_gradient(weights, gamma, beta)
        f = subsolver.expectation
        numeric_gamma = (f(weights, gamma + h, beta) - f(weights, gamma - h, beta)) / (2 * h)
        numeric_beta = (f(weights, gamma, beta + h) - f(weights, gamma, beta - h)) / (2 * h)
        assert d_gamma[0] == pytest.approx(numeric_gamma, abs=1e-6)
        assert d_beta[0] == pytest.approx(numeric_beta, abs=1e-6)


def test_batched_blocks_equal_single_graph_closed_form():
    rng = np.random.default_rng(3)
    graphs = [random_graph(rng, n) for n in (3, 5, 8)]
    angles = rng.uniform(0, 2 * np.pi, (3, 2))
    batched = subsolver.BlocksClosedForm(graphs)(angles[:, 0], angles[:, 1])
    for i, graph in enumerate(graphs):
        single = subsolver.expectation_and_gradient(graph, *angles[i])
        for got, want in zip(batched, single):
            assert got[i] == pytest.approx(want[0], abs=1e-12)


# --------------------------------------------------------------------------- sampling
def test_aer_sampling_is_seeded_and_matches_the_born_distribution():
    rng = np.random.default_rng(4)
    weights = random_graph(rng, 5)
    gamma, beta = 0.7, 0.4
    first = subsolver.sample_bitstrings(weights, gamma, beta, 20_000, np.random.default_rng(9))
    second = subsolver.sample_bitstrings(weights, gamma, beta, 20_000, np.random.default_rng(9))
    assert np.array_equal(np.bincount(first, minlength=32), np.bincount(second, minlength=32))
    born = np.abs(subsolver.statevector(weights, gamma, beta)) ** 2
    for samples in (first, subsolver.sample_bitstrings(weights, gamma, beta, 20_000,
                                                       np.random.default_rng(5), "numpy")):
        empirical = np.bincount(samples, minlength=32) / samples.size
        assert 0.5 * np.abs(empirical - born).sum() < 0.03


def test_numpy_statevector_equals_qiskit_statevector():
    from qiskit.quantum_info import Statevector

    weights = random_graph(np.random.default_rng(6), 6)
    ours = subsolver.statevector(weights, 1.1, 0.3)
    theirs = Statevector(subsolver.qaoa_circuit(weights, 1.1, 0.3)).data
    # equal up to the global phase exp(−iγΣw/2) that rzz drops
    phase = np.vdot(theirs, ours)
    assert abs(phase) == pytest.approx(1.0, abs=1e-12)
    assert np.allclose(ours, phase * theirs, atol=1e-12)


# --------------------------------------------------------------------------- QAOA² bookkeeping
def test_qaoa2_const_plus_coarse_cut_equals_reconstructed_cut():
    rng = np.random.default_rng(7)
    for _ in range(50):
        n = int(rng.integers(6, 30))
        weights = random_graph(rng, n, density=0.4)
        k = int(rng.integers(2, 6))
        labels = rng.integers(0, k, n)
        labels = np.unique(labels, return_inverse=True)[1]
        bits = rng.integers(0, 2, n).astype(np.int8)
        flips = rng.integers(0, 2, labels.max() + 1).astype(np.int8)
        coarse, cross = coarsen(weights, labels, bits)
        block_cut = sum(cut_value(weights[np.ix_(labels == b, labels == b)], bits[labels == b])
                        for b in range(labels.max() + 1))
        total = block_cut + cross + cut_value(coarse, flips)
        assert total == pytest.approx(cut_value(weights, bits ^ flips[labels]),
                                      abs=1e-9 * np.abs(weights).sum())


def test_repair_moves_excess_nodes_and_counts_them():
    labels, moved = repair_assignment(np.zeros(10, dtype=int), n_max=4)
    assert moved == 6 and np.bincount(labels).max() <= 4
    assert list(np.flatnonzero(labels == 0)) == [0, 1, 2, 3]  # highest indices moved first
    same, none = repair_assignment(np.array([0, 0, 1, 1]), n_max=2)
    assert none == 0 and list(same) == [0, 0, 1, 1]


# --------------------------------------------------------------------------- references
def test_brute_force_gka1b_equals_osv():
    instance = get_instance("gka1b")
    value, assignment = exact_maxcut(instance.adjacency())
    assert value == 133 == best_known_cut("gka1b")
    assert instance.cut_value(assignment) == 133


def test_gray_code_equals_plain_enumeration_on_10_nodes():
    rng = np.random.default_rng(8)
    for family in ("g05", "w05", "pm1s", "pw05"):
        instance = generate(family, 10, int(rng.integers(1000)))
        value, assignment = exact_maxcut(instance.adjacency())
        every = (np.arange(1 << 10)[:, None] >> np.arange(10)) & 1
        assert value == pytest.approx(cut_value(instance, every).max(), abs=1e-9)
        assert instance.cut_value(assignment) == pytest.approx(value, abs=1e-9)


def test_every_shared_file_has_an_osv_entry():
    for folder in (TRAIN_FOLDER, TEST_FOLDER, OOD_FOLDER):
        names = list_instances(folder)
        assert names, folder
        for name in names:
            best_known_cut(name)  # raises KeyError when missing


def test_cut_above_optimal_fails_above_best_known_is_logged(caplog):
    with pytest.raises(AssertionError, match="exceeds the optimal"):
        references.check_against_reference("g05_60.1", 1000.0, 536.0, "osv_optimal")
    with caplog.at_level(logging.WARNING):
        references.check_against_reference("t2g10_5555", 1e9, 1.0, "osv_best_known")
    assert references.NEW_BEST_KNOWN["t2g10_5555"] == 1e9
    assert "new best-known" in caplog.text
    assert references.osv_status("g05_60.1") == "optimal"
    assert references.osv_status("t3g7_5555") == "best_known"
    assert references.osv_status("bqp500-1") == "best_known"  # SA beats its osv value
    assert references.osv_status("gka1f") == "best_known"  # 500 nodes: SA beats it too
    assert references.osv_status("bqp100-1") == "optimal"


def test_goemans_williamson_bound_and_rounding_guarantee():
    rng = np.random.default_rng(10)
    for family in ("pw05",):
        instance = generate(family, 12, int(rng.integers(1000)))
        weights = instance.adjacency()
        optimum, _ = exact_maxcut(weights)
        sdp, factor = references.goemans_williamson_sdp(weights)
        assert sdp >= optimum * (1 - 1e-4)
        cuts, _ = references.hyperplane_cuts(weights, factor, 1000, rng)
        assert cuts.mean() >= 0.878 * sdp
        assert cuts.max() <= optimum + 1e-9


def test_ratio_and_normalized_score_ends():
    instance = generate("w05", 12, 3)
    weights = instance.weights
    optimum, _ = exact_maxcut(instance.adjacency())
    negative, total = weights[weights < 0].sum(), weights.sum()
    assert references.performance_ratio(optimum, optimum, negative) == pytest.approx(1.0)
    assert references.performance_ratio(negative, optimum, negative) == pytest.approx(0.0)
    assert references.normalized_score(optimum, optimum, total) == pytest.approx(1.0)
    # the expected cut of a uniform random assignment is Σw/2
    rng = np.random.default_rng(0)
    sides = rng.integers(0, 2, (4000, instance.n))
    mean_cut = np.mean([instance.cut_value(s) for s in sides])
    assert references.normalized_score(total / 2, optimum, total) == 0.0
    assert abs(mean_cut - total / 2) < 0.05 * np.abs(weights).sum()
    for s in sides[:200]:
        r = references.performance_ratio(instance.cut_value(s), optimum, negative)
        assert 0.0 <= r <= 1.0


def test_features_are_zscored_and_pagerank_sums_to_one():
    from papergym.envs.qaoa.instances import pagerank_dense

    weights = generate("w05", 14, 2).adjacency()
    features = node_features(weights)
    assert features.shape == (14, 5)
    assert np.allclose(features.mean(axis=0), 0, atol=1e-9)
    assert pagerank_dense(np.abs(weights)).sum() == pytest.approx(1.0)


# --------------------------------------------------------------------------- environments
def test_partition_env_conforms_and_is_seed_deterministic():
    from papergym.check import check_problem

    report = check_problem("papergym/QAOA2Partition-v0", tier="smoke", throughput_steps=10,
                           make_kwargs={"backend": "numpy", "shots": 64, "instances": TINY})
    assert report.ok, report.summary()
    env = gym.make("papergym:papergym/QAOA2Partition-v0", instances=TINY, n_max=6)
    gym.utils.env_checker.check_env(env.unwrapped, skip_render_check=True)


def test_assign_env_conforms_with_gymnasium_and_sb3():
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    from papergym.check import check_problem

    report = check_problem("papergym/QAOA2Assign-v0", tier="smoke", throughput_steps=10,
                           make_kwargs={"backend": "numpy", "instances": TINY})
    assert report.ok, report.summary()
    sb3_check_env(QAOA2AssignEnv(instances=TINY, n_max=6, backend="numpy"), warn=False)


def test_graph_observation_mode_is_inside_its_space():
    env = QAOA2PartitionEnv(instances=TINY, n_max=6, backend="numpy", obs="graph")
    observation, _ = env.reset(seed=0)
    assert env.observation_space.contains(observation)


def _episode(env, seed, actions_rng):
    observation, _ = env.reset(seed=seed, options={"instance": "gka1b"})
    done = False
    while not done:
        n = int(observation["mask"].sum())
        assign = np.zeros(env.N_max, dtype=np.int64)
        assign[:n] = actions_rng.permutation(n) % max(1, -(-n // env.n_max))
        params = actions_rng.uniform(0, 2 * np.pi, (env.N_max, 2)).astype(np.float32)
        observation, reward, done, _, info = env.step({"assign": assign, "params": params})
    return reward, info


def test_full_episodes_are_seed_deterministic_and_rescored():
    env = QAOA2PartitionEnv(instances="smoke", n_max=6)  # aer backend
    a = _episode(env, 5, np.random.default_rng(1))
    b = _episode(env, 5, np.random.default_rng(1))
    assert a[0] == b[0] and np.array_equal(a[1]["assignment"], b[1]["assignment"])
    info = a[1]
    instance = get_instance("gka1b")
    assert instance.cut_value(info["assignment"]) == info["cut"]
    assert info["opt"] == 133 and info["opt_source"] == "brute_force"
    assert 0.5 <= info["r"] <= 1.0 and info["levels"] >= 2


def test_overfull_action_is_repaired_and_counted_and_nan_rejected():
    env = QAOA2PartitionEnv(instances=["gka1b"], n_max=6, backend="numpy")
    env.reset(seed=0)
    params = np.ones((env.N_max, 2), dtype=np.float32)
    _, _, _, _, _ = env.step({"assign": np.zeros(env.N_max, dtype=np.int64), "params": params})
    assert env.counters["n_repaired"] == 21 - 6
    env.reset(seed=0)
    with pytest.raises(ValueError, match="non-finite"):
        env.step({"assign": np.zeros(env.N_max, dtype=np.int64),
                  "params": np.full((env.N_max, 2), np.nan, dtype=np.float32)})


def test_assign_env_episode_places_every_node_and_respects_capacity():
    env = QAOA2AssignEnv(instances=["gka1b"], n_max=6, backend="numpy")
    observation, info = env.reset(seed=3)
    done, steps = False, 0
    while not done:
        # always ask for block 0: the mask forces repairs once it is full
        observation, reward, done, _, info = env.step(0)
        steps += 1
    assert steps == 21 and np.bincount(env.labels).max() <= 6
    assert info["n_repaired"] == 21 - 6 and 0 < reward <= 1
    with pytest.raises(ValueError):
        env.reset(seed=3)
        env.step(env.K)


def test_registered_and_makeable():
    env = papergym.make("papergym/QAOA2Partition-v0", tier="smoke")
    assert env.unwrapped.n_max == 6
    task = papergym.make_task("papergym/QAOA2Partition-v0", tier="smoke")
    assert set(task.instance_names).isdisjoint(task.train_instances)


# --------------------------------------------------------------------------- v1: logged runs
SMOKE_TRAIN = ["g05_16_s0", "w05_20_s1", "pm1s_16_s2"]


def test_perturbed_partitions_keep_block_sizes():
    rng = np.random.default_rng(4)
    for _ in range(50):
        labels = rng.permutation(np.arange(30) % 4)
        swaps = int(rng.integers(1, 6))
        moved = perturb_partition(labels, swaps, rng)
        assert np.array_equal(np.bincount(moved), np.bincount(labels))
        assert 0 < (moved != labels).sum() <= 2 * swaps


def test_logged_runs_cover_every_graph_with_contrasting_partitions():
    runs = build_logged_runs(SMOKE_TRAIN, 6, 30, 0, {"shots": 64, "backend": "numpy"})
    assert len(runs) == 30
    assert [r.labels.tobytes() for r in runs] == [
        r.labels.tobytes() for r in build_logged_runs(SMOKE_TRAIN, 6, 30, 0,
                                                      {"shots": 64, "backend": "numpy"})]
    for name in SMOKE_TRAIN:
        mine = [r for r in runs if r.instance == name]
        assert len(mine) == 10
        kinds = {r.source.split("+")[0] if "+" not in r.source else "perturbed" for r in mine}
        assert {"random", "perturbed"} <= kinds and kinds & {"modularity", "boundary", "kl"}
        assert len({r.labels.tobytes() for r in mine}) >= 5  # contrasting partitions
        assert all(0.0 <= r.r <= 1.0 for r in mine)
        assert all(np.bincount(r.labels).max() <= 6 for r in mine)


def test_ranking_quality_against_the_per_graph_mean_floor():
    runs = build_logged_runs(SMOKE_TRAIN, 6, 24, 0, {"shots": 8, "backend": "numpy"})
    truth = np.array([r.r for r in runs])
    exact = ranking_quality(runs, truth)
    assert exact["eval_spearman"] == pytest.approx(1.0) and exact["eval_mse"] == 0.0
    names = np.array([r.instance for r in runs])
    means = np.array([truth[names == x].mean() for x in names])
    floor = ranking_quality(runs, means)
    assert floor["eval_spearman"] == 0.0
    assert floor["eval_mse"] == pytest.approx(floor["eval_mse_floor"])
    assert floor["eval_mse_floor"] > 0
    assert ranking_quality(runs, -truth)["eval_spearman"] == pytest.approx(-1.0)


def test_v1_view_charges_logged_runs_once_and_the_task_checks_score():
    task = papergym.make_task("papergym/QAOA2Partition-v1", tier="smoke",
                              instances=["w05_16_s1000002", "gka1b"], runs=1, backend="numpy",
                              logged_runs=24, check_runs=4)
    assert task.instance_names == ["w05_16_s1000002", "gka1b"]
    budget = task.budget
    view = task.train_view(0, budget)
    first = view.logged_runs()
    assert len(first) == 24 and budget.used["qaoa2_runs"] == 24
    assert len(view.logged_runs()) == 24 and budget.used["qaoa2_runs"] == 24
    assert {x["instance"] for x in first} <= set(view.instances)

    class Constant:
        n_max, N_max = 6, task.N_max

        def __call__(self, observation):
            n = int(observation["mask"].sum())
            return {"assign": np.arange(task.N_max) // 6 * (np.arange(task.N_max) < n),
                    "params": np.full((task.N_max, 2), 0.5, np.float32)}

        def score(self, weights, labels, params):
            return 0.9

    result = task.evaluate(Constant(), 0)
    assert result.metrics["eval_spearman"] == 0.0
    assert result.metrics["eval_mse"] >= result.metrics["eval_mse_floor"]
    assert {u["density"] for u in result.units} <= {"sparse", "dense"}
    with pytest.raises(ValueError, match="exceeds"):
        papergym.make_task("papergym/QAOA2Partition-v1", tier="smoke", logged_runs=10**6)


def test_modularity_equals_networkx_on_absolute_weights():
    import networkx as nx

    rng = np.random.default_rng(3)
    for _ in range(10):
        weights = random_graph(rng, 14, density=0.4)
        labels = random_partition(weights, 5, rng)
        parts = [set(np.flatnonzero(labels == b).tolist()) for b in range(labels.max() + 1)]
        expected = nx.community.modularity(nx.from_numpy_array(np.abs(weights)), parts)
        assert modularity(weights, labels) == pytest.approx(expected, abs=1e-12)
    assert modularity(np.zeros((4, 4)), np.array([0, 0, 1, 1])) == 0.0


def test_a_proxy_score_gets_correlations_per_instance_and_no_mse():
    runs = build_logged_runs(SMOKE_TRAIN, 6, 24, 0, {"shots": 8, "backend": "numpy"})
    truth = np.array([r.r for r in runs])
    proxy = 3.0 * truth - 7.0  # a monotone proxy on another scale ranks perfectly
    quality = ranking_quality(runs, proxy, calibrated=False)
    assert set(quality) == {"eval_spearman", "eval_pearson"}
    assert quality["eval_spearman"] == pytest.approx(1.0)
    assert quality["eval_pearson"] == pytest.approx(1.0)
    per_graph = graph_correlations(runs, -proxy)
    assert per_graph and all(g["eval_pearson"] == pytest.approx(-1.0) for g in per_graph.values())

    task = papergym.make_task("papergym/QAOA2Partition-v1", tier="smoke",
                              instances=["w05_16_s1000002", "gka1b"], runs=1, backend="numpy",
                              logged_runs=24, check_runs=4)
    view = task.train_view(0, task.budget)
    from papergym.agent import REGISTRY

    artifact = REGISTRY.get("qaoa2_modularity", family="qaoa")({}).solve(view, task.budget, 0)
    result = task.evaluate(artifact, 0)
    assert "eval_mse" not in result.metrics and -1 <= result.metrics["eval_pearson"] <= 1
    scored = [u for u in result.units if "eval_pearson" in u]
    assert scored and np.mean([u["eval_pearson"] for u in scored]) == pytest.approx(
        result.metrics["eval_pearson"])


def test_v1_instance_sets_keep_the_papers_test_set_and_stratify_ood():
    names = instance_set("std_v1")
    assert len(names) == 78 and set(instance_set("test")) <= set(names)
    sample = ood_stratified()
    counts = {f: sum(instance_family(x) == f for x in sample) for f in ("gka", "ising", "t2g", "t3g")}
    assert counts == {"gka": 14, "ising": 8, "t2g": 3, "t3g": 3}
    assert density_class("bqp100-1") == "sparse" and density_class("g05_100.1") == "dense"
    assert density_class("t2g10_6666") == "sparse" and density_class("gka2b") == "dense"
