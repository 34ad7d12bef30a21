"""qaoa v2: the oracle evaluator, the evaluator gate, spectral node features, held-out data."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import papergym
from papergym.agent import REGISTRY
from papergym.agents.qaoa.features import laplacian_encoding
from papergym.agents.qaoa.neural_qaoa2 import Config, GraphBatch, OracleEvaluator, evaluator_gate
from papergym.envs.qaoa.instances import generate, get_instance, instance_set, node_features
from papergym.envs.qaoa.oracle import exact_objective, objective_ratio
from papergym.envs.qaoa.partitions import (
    kl_partition,
    modularity_partition,
    perturb_partition,
    random_angles,
    random_partition,
)

PROBLEM = "papergym/QAOA2Partition-v2"
TINY_GEN = {"evaluator_samples": 60, "evaluator_epochs": 2, "generator_steps": 4,
            "tta_steps": 2, "max_train_graphs": 8}


# --------------------------------------------------------------------------- spectral features
@pytest.mark.parametrize("name", ["t2g10_5555", "t3g5_5555", "bqp100-1", "pm1s_100.1"])
def test_adjacent_nodes_are_closer_in_the_spectral_features_than_random_pairs(name):
    weights = get_instance(name).adjacency()
    rng = np.random.default_rng(0)
    edges = np.argwhere(np.triu(weights != 0, 1))
    a, b = rng.integers(0, len(weights), (2, 4000))
    a, b = a[a != b], b[a != b]

    def gap(x):  # mean distance of random pairs over that of adjacent pairs
        adjacent = np.linalg.norm(x[edges[:, 0]] - x[edges[:, 1]], axis=1).mean()
        return np.linalg.norm(x[a] - x[b], axis=1).mean() / adjacent

    assert gap(laplacian_encoding(weights, 8)) > 1.2  # measured: 1.28 (bqp100-1) to 2.3 (tori)
    if name.startswith("t"):  # on the tori the structural features carry no locality
        assert gap(node_features(weights)) < 1.15


def test_laplacian_encoding_shape_padding_and_sign_convention():
    weights = generate("w05", 6, 1).adjacency()
    encoding = laplacian_encoding(weights, 8)
    assert encoding.shape == (6, 8) and np.all(encoding[:, 5:] == 0)
    peaks = encoding[np.argmax(np.abs(encoding[:, :5]), axis=0), np.arange(5)]
    assert np.all(peaks > 0)


# --------------------------------------------------------------------------- the gate
class _View:
    def weights(self, name):
        return get_instance(name).adjacency()

    def features(self, weights):
        return node_features(weights)


class _Ranker(torch.nn.Module):
    """An 'evaluator' that predicts the oracle value (sign +1) or its negative (−1)."""

    def __init__(self, sign: float) -> None:
        super().__init__()
        self.sign, self.oracle = sign, OracleEvaluator(6)

    def forward(self, batch: GraphBatch, assignment, angles):
        return self.sign * self.oracle(batch, assignment, angles)


def _validation_runs():
    rng = np.random.default_rng(5)
    runs = []
    for seed in range(4):
        name = f"pm1s_24_s{seed}"
        weights = get_instance(name).adjacency()
        base = kl_partition(weights, 6, rng)
        for labels in [base, *(perturb_partition(base, s, rng) for s in (1, 2, 4)),
                       random_partition(weights, 6, rng), random_partition(weights, 6, rng)]:
            runs.append({"instance": name, "labels": labels,
                         "params": random_angles(int(labels.max()) + 1, rng)})
    return runs


def test_gate_opens_only_for_an_evaluator_that_ranks_better_than_modularity():
    runs, config = _validation_runs(), Config()
    good = evaluator_gate(_Ranker(1.0), runs, _View(), config, 6)
    bad = evaluator_gate(_Ranker(-1.0), runs, _View(), config, 6)
    assert good["graphs"] == 4 and good["learned_spearman"] == pytest.approx(1.0)
    assert good["open"] and good["learned_spearman"] > good["modularity_spearman"]
    assert not bad["open"] and bad["learned_spearman"] == pytest.approx(-1.0)
    assert good["modularity_spearman"] == bad["modularity_spearman"]  # the same proxy


def test_closed_gate_falls_back_to_the_modularity_baseline_and_says_so():
    task = papergym.make_task(PROBLEM, tier="smoke", instances=["w05_16_s1000002"], runs=1,
                              backend="numpy", logged_runs=48, check_runs=4)
    budget = task.budget
    # no evaluator training: nothing can beat modularity, so the gate stays closed
    agent = REGISTRY.get("neural_qaoa2", family="qaoa")(
        {**TINY_GEN, "gate": True, "evaluator_epochs": 0})
    policy = agent.solve(task.train_view(0, budget), budget, 3)
    assert policy.gate["open"] is False
    weights = get_instance("w05_16_s1000002").adjacency()
    labels, params = policy._adapt(weights, node_features(weights))
    rng = np.random.default_rng(3)
    assert np.array_equal(labels, modularity_partition(weights, 6, rng))
    assert np.allclose(params, random_angles(int(labels.max()) + 1, rng))
    result = task.evaluate(policy, 0)
    assert result.metrics["gate_open"] == 0.0


# --------------------------------------------------------------------------- the oracle evaluator
def test_oracle_evaluator_scores_partitions_exactly_and_trains_the_generator():
    task = papergym.make_task(PROBLEM, tier="smoke", instances=["w05_16_s1000002"], runs=1,
                              backend="numpy", logged_runs=48, check_runs=4)
    budget = task.budget
    agent = REGISTRY.get("neural_qaoa2", family="qaoa")({**TINY_GEN, "evaluator": "oracle"})
    policy = agent.solve(task.train_view(0, budget), budget, 0)
    assert budget.used.get("qaoa2_runs", 0) == 0  # no logged runs read
    weights = get_instance("w05_16_s1000002").adjacency()
    labels = np.arange(16) % 3
    assert policy.score(weights, labels, np.zeros((3, 2))) == pytest.approx(
        objective_ratio(weights, exact_objective(weights, labels, 6)[0]))
    result = task.evaluate(policy, 0)
    assert result.metrics["eval_oracle_spearman"] == pytest.approx(1.0)  # it is the target
    assert "eval_mse" not in result.metrics  # a proxy scale: correlations only


# --------------------------------------------------------------------------- held-out data
def test_standard_evaluation_instances_never_appear_in_training_or_tuning():
    task = papergym.make_task(PROBLEM, tier="standard", logged_runs=0, check_runs=0)
    evaluation = set(task.instance_names)
    assert len(evaluation) == 54 and max(get_instance(x).n for x in evaluation) <= 150
    train = set(task.train_instances)
    assert train and not train & evaluation
    assert train <= set(instance_set("train"))  # tuning reads only the view's graphs
    fingerprints = {get_instance(x).adjacency().tobytes() for x in train}
    assert not any(get_instance(x).adjacency().tobytes() in fingerprints for x in evaluation)
    view = task.train_view(0, task.budget)
    with pytest.raises(PermissionError):
        view.weights(sorted(evaluation)[0])
