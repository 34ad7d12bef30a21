"""Every abstraction agent on small cells, with the behaviour each one is there to show."""

from __future__ import annotations

import numpy as np
import pytest

import papergym
from papergym.agent import REGISTRY
from papergym.envs.abstraction.core import MDP

TASK = "papergym/StateAbstraction-v0"
AGENTS = ("bisim_refinement", "metric_cluster", "qstar_aggregation", "one_step", "dbc_encoder",
          "random_partition", "trivial")


def _run(agent_id: str, config: dict | None = None, seed: int = 0, **cell):
    task = papergym.make_task(TASK, tier="smoke", **cell)
    cls = REGISTRY.get(agent_id, "abstraction")
    task.set_agent_role(cls.role)
    budget = task.budget
    artifact = cls(config).solve(task.train_view(seed, budget), budget, seed)
    return task, task.evaluate(artifact, seed)


PERTURBED = dict(family="perturbed", delta=0.02, n_abstract=5, copies=[1, 3], n_actions=2,
                 branching=3, spread=1, n_eval_instances=6, n_train_instances=3)


def test_every_agent_is_registered_for_the_family():
    for agent_id in AGENTS:
        cls = REGISTRY.get(agent_id, "abstraction")
        assert cls.can_act_on(TASK)


def test_bisim_refinement_returns_the_planted_kernel_with_safe_compression_one():
    _, result = _run("bisim_refinement", n_eval_instances=10)
    assert result.metrics["c1_violation"] == 0 and result.metrics["safe_compression"] == 1
    assert result.metrics["value_loss"] == 0 and result.metrics["invariant_transfer_error"] == 0


def test_bisim_refinement_is_the_identity_on_garnets():
    _, result = _run("bisim_refinement", family="garnet", n_states=12, n_eval_instances=10)
    assert result.metrics["is_identity"] == 1 and result.metrics["false_merge_rate"] == 0


def test_metric_cluster_pays_for_a_sound_metric_and_compresses_perturbed_instances():
    _, result = _run("metric_cluster", **PERTURBED)
    assert result.metrics["soundness_violations"] == 0
    assert result.metrics["spread_violations"] == 0
    assert result.metrics["safe_compression"] > 0.5
    _, one_step = _run("one_step", **PERTURBED)
    assert one_step.metrics["safe_compression"] == 0  # perturbed rewards: one-step = identity


def test_qstar_aggregation_merges_twins_and_breaks_the_invariant():
    cell = dict(family="lifted", n_abstract=8, twin_frac=0.3, copies=[1, 3], n_actions=3,
                branching=3, n_eval_instances=20, n_train_instances=3)
    _, qstar = _run("qstar_aggregation", config={"eps": 0.0}, **cell)
    _, bisim = _run("bisim_refinement", **cell)
    assert qstar.metrics["it_positive"] > 0 and bisim.metrics["it_positive"] == 0
    assert qstar.metrics["merge_precision"] < 1 and bisim.metrics["merge_precision"] == 1


def test_one_step_merges_states_that_differ_two_steps_ahead():
    from papergym.agents.abstraction.bisim_refinement import BisimRefinement
    from papergym.agents.abstraction.one_step import OneStep

    P = np.zeros((6, 1, 6))
    for s, t in ((0, 1), (1, 2), (2, 2), (3, 4), (4, 5), (5, 5)):
        P[s, 0, t] = 1.0
    R = np.array([[0.1], [0.1], [0.0], [0.1], [0.1], [0.5]])
    mdp = MDP(R, P, np.zeros(6, dtype=bool), 0.9)
    local = OneStep().solve(None, None, 0)(mdp)
    exact = BisimRefinement().solve(None, None, 0)(mdp)
    assert local[0] == local[3] and exact[0] != exact[3]


def test_random_partition_gets_the_reference_k_only_as_a_reference():
    task, result = _run("random_partition", n_eval_instances=6)
    assert result.metrics["oracle_k"] == 1 and task.privileged_used
    from papergym.agents.abstraction.random_partition import RandomRoutine

    routine = RandomRoutine(0)
    task = papergym.make_task(TASK, tier="smoke", n_eval_instances=3)
    task.set_agent_role("baseline")
    assert task.evaluate(routine, 0).metrics["oracle_k"] == 0 and not task.privileged_used


def test_dbc_encoder_learns_from_metered_samples_only():
    cell = dict(PERTURBED, n_eval_instances=2, n_train_instances=1)
    task, result = _run("dbc_encoder", config={"steps": 60, "tune_mdps": 1}, **cell)
    assert 0 <= result.metrics["safe_compression"] and result.metrics["blocks"] >= 1
    from papergym.agents.abstraction.dbc_encoder import DBCRoutine

    assert DBCRoutine.access == "samples"
    view = task.train_view(0, task.budget)
    sampler = view.sampler(0)
    with pytest.raises(Exception, match="budget"):
        sampler.sample(np.zeros(sampler.remaining() + 1, dtype=int),
                       np.zeros(sampler.remaining() + 1, dtype=int))


def test_trivial_partitions_score_the_ends_of_the_scale():
    _, identity = _run("trivial")
    assert identity.metrics["safe_compression"] == 0 and identity.metrics["is_identity"] == 1
    _, single = _run("trivial", config={"partition": "single"}, family="garnet", n_states=12)
    assert single.metrics["false_merge_rate"] == 1 and single.metrics["blocks"] == 1


def test_the_quotient_learns_faster_on_the_grid():
    cell = dict(family="grid", size=5, n_bits=1, learner_episodes=300, learner_runs=2,
                n_train_instances=1)
    _, quotient = _run("bisim_refinement", **cell)
    _, raw = _run("trivial", **cell)
    assert quotient.metrics["safe_compression"] == 1
    assert quotient.metrics["episodes_to_95"] < raw.metrics["episodes_to_95"]
