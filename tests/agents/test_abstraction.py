"""Every abstraction agent on small cells, with the behaviour each one is there to show."""

from __future__ import annotations

import numpy as np
import pytest

import papergym
from papergym.agent import REGISTRY
from papergym.envs.abstraction.core import MDP

TASK = "papergym/StateAbstraction-v1"
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
    _, exact = _run("one_step", config={"tune": False}, **PERTURBED)
    # perturbed rewards: exact signatures merge only states whose rewards were all clipped
    assert exact.metrics["safe_compression"] < 0.5
    _, tuned = _run("one_step", **PERTURBED)
    assert tuned.metrics["safe_compression"] > 0  # a tuned tolerance rounds the noise away


@pytest.mark.parametrize("agent_id,key,default", [
    ("metric_cluster", "eps", 0.0), ("qstar_aggregation", "eps", 0.0), ("one_step", "tol", 1e-9)])
def test_tuned_agents_follow_the_one_protocol_with_the_same_budget(agent_id, key, default):
    task, result = _run(agent_id, **PERTURBED)
    tuning = result.info["tuning"]
    tried = [c["config"][key] for c in tuning["candidates"]]
    scores = [c["validation_score"] for c in tuning["candidates"]]
    assert tuning["budget"] == task.tuning_runs == len(tried) == 8
    assert tried[0] == default and len(set(tried)) == 8  # the default first, then own draws
    assert tuning["validation_score"] == max(scores)
    assert tuning["chosen"] == tuning["candidates"][scores.index(max(scores))]["config"]
    _, untuned = _run(agent_id, config={"tune": False}, **PERTURBED)
    assert "tuning" not in untuned.info


@pytest.mark.parametrize("seed", [0, 3, 7])
def test_tied_candidates_go_to_the_default_and_the_record_names_the_choice(seed):
    from papergym.agents.abstraction.metric_cluster import MetricCluster
    from papergym.envs.abstraction.task import StateAbstractionView
    from papergym.problem import Budget, Privileges

    view = StateAbstractionView([], [], Budget(tuning_runs=8), seed, "perturbed", 0.02, 200,
                                Privileges(), 8, lambda routine, config: 1.0)  # every run ties
    routine = MetricCluster().solve(view, None, seed)
    tuning = view.tuning.summary()
    assert routine.eps == tuning["chosen"]["eps"] == 0.0 and len(tuning["candidates"]) == 8


def test_validation_runs_are_scored_on_the_fixed_tuning_mdps_whatever_the_seed():
    a, _ = _run("one_step", seed=0, **PERTURBED)
    b, _ = _run("one_step", seed=5, **PERTURBED)
    assert sorted(a._view.tuning.runs, key=str) == sorted(b._view.tuning.runs, key=str)
    view = a.train_view(0, a.budget)
    for _ in range(a.tuning_runs):
        view.validation_score(lambda mdp: np.arange(mdp.n_states), {"identity": True})
    with pytest.raises(Exception, match="budget"):
        view.validation_score(lambda mdp: np.arange(mdp.n_states), {"identity": True})


COLLIDING = dict(family="lifted", n_abstract=[6, 10], copies=[1, 3], n_actions=2, branching=2,
                 n_eval_instances=20, n_train_instances=2)


def test_the_fixed_point_transfers_what_one_step_signatures_lose():
    _, exact = _run("bisim_refinement", **COLLIDING)
    _, local = _run("one_step", config={"tune": False}, **COLLIDING)
    assert exact.metrics["exact_transfer"] == 1 and exact.metrics["merge_precision"] == 1
    assert local.metrics["exact_transfer"] < 0.5 and local.metrics["merge_precision"] < 1


def test_the_metric_control_is_the_first_iterate_without_composition():
    from papergym.agents.abstraction.metric_cluster import MetricRoutine
    from papergym.envs.abstraction.instances import make_instance
    from papergym.envs.abstraction.oracles import (
        coarsest_bisimulation,
        one_step_metric,
        one_step_partition,
    )

    differ = 0
    for seed in range(10):
        mdp = make_instance("lifted", seed, n_abstract=(6, 10), n_actions=2, branching=2,
                            spread=1, reward_levels=3).mdp  # supports <= 2: exact transport
        local, full = MetricRoutine(0.0, local_only=True)(mdp), MetricRoutine(0.0)(mdp)
        np.testing.assert_array_equal(local["metric"], one_step_metric(mdp))
        assert np.array_equal(local["labels"], one_step_partition(mdp))
        assert np.array_equal(full["labels"], coarsest_bisimulation(mdp))
        differ += not np.array_equal(local["labels"], full["labels"])
    assert differ >= 7


def test_random_refinement_splits_one_step_blocks_to_the_reference_k():
    from papergym.agents.abstraction.random_partition import random_refinement

    base = np.array([0, 0, 0, 1, 1, 2, 0, 1])
    for seed in range(20):
        out = random_refinement(base, 6, np.random.default_rng(seed))
        assert np.unique(out).size == 6
        pairs = {(int(b), int(o)) for b, o in zip(base, out)}
        assert len({o for _, o in pairs}) == len(pairs)  # every new block inside one old block
    np.testing.assert_array_equal(random_refinement(base, 2, np.random.default_rng(0)), base)


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
    task, result = _run("dbc_encoder", config={"steps": 60}, **cell)
    assert 0 <= result.metrics["safe_compression"] and result.metrics["blocks"] >= 1
    assert result.info["tuning"]["budget"] == 8  # the protocol, on the validation samplers
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
