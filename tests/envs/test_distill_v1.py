"""LosslessDistill-v1: one teacher (and one HMM language) for every trial seed, built once; the
trial seed still sets the training stream and the held-out items. v0 keeps a teacher per seed."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import papergym

TINY = {"teacher_steps": 4, "token_budget": 4 * 8 * 48, "eval_items": 8}


def test_v1_shares_one_teacher_across_seeds_and_v0_does_not():
    v1 = papergym.make_task("papergym/LosslessDistill-v1", tier="smoke", **TINY)
    v0 = papergym.make_task("papergym/LosslessDistill-v0", tier="smoke", **TINY)
    assert v1.teacher_seed == 0 and v0.teacher_seed is None
    assert len({v1.teacher_entry(s).key for s in range(5)}) == 1
    assert len(v1.cache_entries(range(5))) == 1  # built once in the prepare phase
    assert len({v0.teacher_entry(s).key for s in range(5)}) == 5
    a, b = v1.teacher(3), v1.teacher(7)
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))
    assert v1.suite(3).language is not None
    np.testing.assert_array_equal(v1.suite(3).language.transition, v1.suite(7).language.transition)


def test_v1_seeds_draw_their_own_stream_and_held_out_items():
    task = papergym.make_task("papergym/LosslessDistill-v1", tier="smoke", **TINY)
    first, second = (task.train_view(s, task.budget).stream("mix", 8, ()) for s in (1, 2))
    assert not torch.equal(first["tokens"], second["tokens"])
    one, two = (task.eval_items_for(task.suite(s), s) for s in (1, 2))
    assert [it.prompt for it in one["copy16"]] != [it.prompt for it in two["copy16"]]


def test_v1_standard_tier_has_no_task_its_teacher_cannot_pass_and_rejects_a_bad_teacher_seed():
    spec = papergym.registry.spec("papergym/LosslessDistill-v1")
    assert not any(t.startswith("recall") for t in spec.tiers["standard"]["tasks"])
    with pytest.raises(ValueError, match="teacher_seed"):
        papergym.make_task("papergym/LosslessDistill-v1", tier="smoke", teacher_seed=-1, **TINY)
