"""Every aero agent on the smoke tier, through the problem's own evaluation."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import papergym
from papergym.agents.aero.cmaes_lbm import CMAESLBM
from papergym.agents.aero.random_search import RandomSearch
from papergym.agents.aero.surrogate_agents import CdOnly, MultitaskNaive, UniDragSurrogate
from papergym.agents.aero.surrogate_noeot import SurrogateNoEoT
from papergym.agents.aero.unidrag import UniDragFFD
from papergym.agents.aero.zero import Zero

FAST = {"epochs": 3, "width": 16}


@pytest.fixture(autouse=True)
def one_thread():
    # as in the runner's workers: torch with one thread
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _run(problem, agent, seed=0):
    task = papergym.make_task(problem, tier="smoke")
    budget = task.budget
    artifact = agent.solve(task.train_view(seed, budget), budget, seed)
    return task.evaluate(artifact, seed)


FFD_AGENTS = [Zero(), RandomSearch(), CMAESLBM(), UniDragFFD(UniDragFFD.Config(**FAST, steps=10)),
              SurrogateNoEoT(SurrogateNoEoT.Config(**FAST, steps=10))]


@pytest.mark.parametrize("agent", FFD_AGENTS, ids=lambda a: a.id)
def test_ffd_agents_finish_with_a_feasible_design(agent):
    result = _run("papergym/DragFFD2D-v0", agent)
    m = result.metrics
    assert m["feasible"] == 1.0 and np.isfinite(m["reduction"])
    if agent.id == "zero":
        assert m["reduction"] == 0.0 and m["lbm_calls"] == 0.0
    if agent.id in ("random_search", "cmaes_lbm"):
        # verification = evaluation resolution at smoke and z = 0 is a candidate
        assert m["reduction"] >= 0.0 and m["lbm_calls"] == 3.0


@pytest.mark.parametrize("cls", [UniDragSurrogate, CdOnly, MultitaskNaive], ids=lambda c: c.id)
def test_surrogate_agents_give_a_finite_r2(cls):
    result = _run("papergym/DragSurrogate-v0", cls(cls.Config(**FAST)))
    assert np.isfinite(result.metrics["cd_r2"])


def test_cma_policy_repeats_by_seed():
    task = papergym.make_task("papergym/DragFFD2D-v0", tier="smoke")
    a = CMAESLBM().solve(task.train_view(0, task.budget), task.budget, 0)
    b = CMAESLBM().solve(task.train_view(0, task.budget), task.budget, 0)
    obs, _ = papergym.make("papergym/DragFFD2D-v0", tier="smoke").reset(seed=0)
    np.testing.assert_array_equal(a(obs)["z"], b(obs)["z"])
