"""qaoa family agents: GEN's pieces, the tuned baselines, and every agent on the smoke tier."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import papergym
from papergym.agent import REGISTRY
from papergym.agents.qaoa.neural_qaoa2 import (
    GEN,
    ClosedFormEvaluator,
    Config,
    Evaluator,
    GraphBatch,
    PartitionGenerator,
    _one_hot,
    greedy_capacity_assignment,
)
from papergym.agents.qaoa.qaoa2_fixed_angle import tune_fixed_angles
from papergym.envs.qaoa.instances import generate, node_features
from papergym.envs.qaoa.subsolver import ClosedForm
from papergym.maxcut import exact_maxcut
from papergym.problem import deterministic_metrics

PROBLEM = "papergym/QAOA2Partition-v1"
TINY_GEN = {"evaluator_samples": 30, "evaluator_epochs": 2, "generator_steps": 5,
            "tta_steps": 2, "max_train_graphs": 8}


def test_greedy_capacity_assignment_property():
    rng = np.random.default_rng(0)
    for _ in range(500):
        n_max = int(rng.integers(2, 8))
        n = int(rng.integers(1, 40))
        k = -(-n // n_max)
        scores = rng.random((n, k))
        if rng.random() < 0.3:  # ties everywhere
            scores = np.round(scores, 1)
        labels = greedy_capacity_assignment(scores, n_max)
        assert (labels >= 0).all() and (labels < k).all()
        assert np.bincount(labels, minlength=k).max() <= n_max
        assert np.array_equal(labels, greedy_capacity_assignment(scores.copy(), n_max))


def test_orthogonal_complement_queries_are_orthonormal_and_orthogonal_to_mean():
    generator = PartitionGenerator(hidden=16, layers=2, temperature=0.05, seed=0)
    graphs = [generate("w05", n, s) for n, s in ((14, 1), (20, 2))]
    batch = GraphBatch([(g.adjacency(), node_features(g.adjacency())) for g in graphs])
    h = torch.nn.functional.normalize(
        generator.encoder(batch.features, batch.weights, batch.full_support), dim=-1)
    queries = generator.queries(h, batch.node_mask, 5)
    mean = torch.nn.functional.normalize(
        (h * batch.node_mask[:, :, None]).sum(1) / batch.node_mask.sum(1, keepdim=True), dim=-1)
    gram = queries.transpose(1, 2) @ queries
    assert torch.allclose(gram, torch.eye(5).expand(2, 5, 5), atol=1e-6)
    assert (mean[:, None, :] @ queries).abs().max() < 1e-6
    soft = generator(batch, [4, 5])
    assert torch.allclose(soft[0, :14].sum(-1), torch.ones(14), atol=1e-5)
    assert soft[0, :, 4:].abs().max() < 1e-6  # clusters beyond k get no mass


def test_straight_through_training_raises_the_frozen_evaluator_score():
    torch.manual_seed(0)
    graphs = [generate(f, 16, s) for s, f in enumerate(["g05", "w05", "pm1s", "pw05"] * 2)]
    batch = GraphBatch([(g.adjacency(), node_features(g.adjacency())) for g in graphs])
    evaluator = Evaluator(hidden=16, layers=2, dropout=0.0).eval()
    for p in evaluator.parameters():
        p.requires_grad_(False)
    gen = GEN(Config(generator_hidden=16), seed=0)
    optimizer = torch.optim.AdamW(gen.parameters(), lr=4e-3)
    ks = [4] * len(graphs)

    def score():
        with torch.no_grad():
            ste, _, angles, _ = gen(batch, ks, 6)
            return float(evaluator(batch, ste, angles).mean())

    before = score()
    for _ in range(25):
        ste, _, angles, _ = gen(batch, ks, 6)
        loss = -evaluator(batch, ste, angles).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    assert score() > before + 1e-3


def test_tuned_fixed_angles_beat_random_angles_on_held_out_blocks():
    rng = np.random.default_rng(1)
    train = [generate("w05", 8, s).adjacency() for s in range(6)]
    held_out = [generate("w05", 8, 100 + s).adjacency() for s in range(6)]
    gamma, beta = tune_fixed_angles(train, grid=32)

    def mean_ratio(g, b):
        return np.mean([ClosedForm(w / np.abs(w).max())(g, b)[0][0]
                        / np.abs(np.triu(w / np.abs(w).max(), 1)).sum() for w in held_out])

    tuned = mean_ratio(gamma, beta)
    random = np.mean([mean_ratio(*rng.uniform(0, 2 * np.pi, 2)) for _ in range(50)])
    assert tuned > random + 0.05


def test_simulated_annealing_finds_the_optimum_and_gw_is_sandwiched():
    from papergym.agents.qaoa.gw import GoemansWilliamsonSolver
    from papergym.agents.qaoa.sa import anneal

    instance = generate("w05", 16, 11)
    weights = instance.adjacency()
    optimum, _ = exact_maxcut(weights)
    sides = anneal(weights, 300, 1.0, 0.01, np.random.default_rng(0))
    assert instance.cut_value(sides) == optimum
    gw_sides = GoemansWilliamsonSolver(20).solve_instance(weights, np.random.default_rng(0))
    assert 0.878 * optimum <= instance.cut_value(gw_sides) <= optimum


@pytest.mark.parametrize("agent_id", ["neural_qaoa2", "qaoa2_random", "qaoa2_modularity",
                                      "qaoa2_boundary", "qaoa2_kl", "qaoa2_fixed_angle", "sa",
                                      "gw", "bruteforce"])
def test_every_agent_runs_the_smoke_tier(agent_id):
    overrides = {"instances": ["gka1b", "w05_16_s1000002"], "runs": 1, "backend": "numpy",
                 "logged_runs": 48, "check_runs": 4}
    task = papergym.make_task(PROBLEM, tier="smoke", **overrides)
    budget = task.budget
    config = TINY_GEN if agent_id == "neural_qaoa2" else {}
    if agent_id == "sa":
        config = {"sweeps": 200, "tuning_sweeps": 20}
    if agent_id == "qaoa2_fixed_angle":
        config = {"grid": 32, "max_blocks": 16, "max_train_graphs": 6}
    agent = REGISTRY.get(agent_id, family="qaoa")(config)
    artifact = agent.solve(task.train_view(0, budget), budget, 0)
    result = task.evaluate(artifact, 0)  # the env re-scores every assignment itself
    assert 0.5 <= result.metrics["r"] <= 1.0 and not result.non_finite()
    assert {u["instance"] for u in result.units} == {"gka1b", "w05_16_s1000002"}
    if agent_id == "neural_qaoa2":
        assert budget.used["qaoa2_runs"] == 48  # the logged runs, charged when read
        assert -1 <= result.metrics["eval_spearman"] <= 1
        assert result.metrics["eval_mse_floor"] <= result.metrics["eval_mse"] + 1.0
        budget = task.budget
        again = task.evaluate(agent.solve(task.train_view(0, budget), budget, 0), 0)
        assert task.nondeterministic_metrics == {"agent_seconds"}  # wall clock
        assert deterministic_metrics(task, again.metrics) == \
            deterministic_metrics(task, result.metrics)  # deterministic by seed
    if agent_id == "bruteforce":
        assert result.metrics["r"] == 1.0


def test_closed_form_evaluator_is_the_exact_first_level_expectation():
    rng = np.random.default_rng(3)
    for seed in range(5):
        weights = generate("w05", 12, seed).adjacency()
        labels = rng.permutation(np.arange(12) % 3)
        params = rng.uniform(0, 2 * np.pi, (3, 2))
        batch = GraphBatch([(weights, node_features(weights))])
        hard = _one_hot([labels], (1, 12, 3))
        angles = torch.tensor(params, dtype=torch.float32, requires_grad=True)
        score = ClosedFormEvaluator()(batch, hard, angles[None], hard)[0]
        expected = 0.5 * np.triu(weights * (labels[:, None] != labels[None, :]), 1).sum()
        for c in range(3):
            block = weights[np.ix_(labels == c, labels == c)]
            scale = np.abs(block).max()
            expected += scale * ClosedForm(block / scale)(*params[c])[0][0]
        negative, positive = (np.triu(f(weights, 0), 1).sum() for f in (np.minimum, np.maximum))
        assert float(score.detach()) == pytest.approx((expected - negative) / (positive - negative), abs=1e-5)
        score.backward()
        assert angles.grad.abs().sum() > 0  # the angle generator gets a gradient


@pytest.mark.parametrize("variant", [{"evaluator": "closed_form"},
                                     {"evaluator_epochs": 0, "generator_steps": 0, "tta_steps": 0}])
def test_gen_ablations_run_and_read_no_logged_runs(variant):
    task = papergym.make_task(PROBLEM, tier="smoke", instances=["w05_16_s1000002"], runs=1,
                              backend="numpy", logged_runs=48, check_runs=4)
    budget = task.budget
    agent = REGISTRY.get("neural_qaoa2", family="qaoa")({**TINY_GEN, **variant})
    artifact = agent.solve(task.train_view(0, budget), budget, 0)
    result = task.evaluate(artifact, 0)
    assert budget.used.get("qaoa2_runs", 0) == 0  # neither fits an evaluator
    assert 0.5 <= result.metrics["r"] <= 1.0 and "eval_spearman" in result.metrics
