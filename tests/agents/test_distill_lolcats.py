"""The LoLCATs student as published (its linear branch not scaled by exp(-max window score))
learns copy16, where plain linear attention does, on one small copy-only configuration."""

from __future__ import annotations

import papergym
from papergym.agent import REGISTRY

# copy16 only: the teacher passes it (1.0) after 600 steps; the students get the standard tier's
# token budget. With the linear branch scaled by exp(-m) LoLCATs scored 0.00 and 0.58 here
# (seeds 0, 1; KL 0.72, 0.11) against linear attention's 1.00; as published 0.92 and 1.00 (KL
# 0.028, 0.011).
CONFIG = {"tasks": ["copy16"], "teacher_steps": 600, "token_budget": 600_000, "eval_items": 64}


def copy16(name: str, seed: int) -> float:
    cls = REGISTRY.get(name, "distill")
    task = papergym.make_task("papergym/LosslessDistill-v0", tier="smoke", **CONFIG)
    task.set_agent_role(cls.role)
    budget = task.budget
    student = cls(cls.Config(batch=16)).solve(task.train_view(seed, budget), budget, seed)
    metrics = task.evaluate(student, seed).metrics
    assert metrics["teacher_copy16"] == 1.0
    return metrics["score_copy16"]


def test_lolcats_copies_at_least_as_well_as_linear_attention():
    linear, lolcats = copy16("linear-attn", 1), copy16("lolcats", 1)
    assert linear >= 0.9
    assert lolcats >= linear - 0.05  # the superseded form: 0.58 against 1.00 on this seed
