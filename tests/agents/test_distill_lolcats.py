"""The LoLCATs student as published (Hedgehog map [softmax(W x), softmax(−W x)], attention
transfer of the feature maps and window factors, then rank-8 adapters on q, k, v, o) learns copy16
on the benchmark's teacher setup (LosslessDistill-v1: the standard tier's d = 64 x 2 layers x
2 heads at context 64 and window 8, on a mixture of tasks), on as many seeds as plain linear
attention does.

Both students learn the copy on a seed or not at all (scores near 0 or near 1), so the test counts
seeds over four consecutive ones instead of comparing means. Measured (copy16 per seed 0-3):
linear attention 1.00, 0.92, 1.00, 0.12; LoLCATs 0.14, 0.95, 1.00, 0.92. On the standard tier's own
teacher (0.3M tokens; seeds 0, 1): linear attention 0.65, 0.69; LoLCATs 0.41, 0.95. The superseded
forms stayed near 0 there (v1's exp(−max)-scaled linear branch 0.00-0.02; v2's softmax(W x) map and
full fine-tune 0.09), as did the official configs' Kaiming-uniform feature-map init (0.23 on seed
1, and 0.00 after attention transfer alone), which is why the student starts W at the identity.
"""

from __future__ import annotations

import pytest

import papergym
from papergym.agent import REGISTRY

# the standard tier's teacher architecture on the smoke tier's task mixture, 500 steps (it passes
# copy16: 1.0), and half the standard student budget
CONFIG = {"tasks": ["vartrack3", "copy16", "hmm32"], "d_model": 64, "ctx": 64, "teacher_steps": 500,
          "token_budget": 150_000, "eval_items": 64}
SEEDS = (0, 1, 2, 3)


def copy16(task, name: str, seed: int) -> float:
    cls = REGISTRY.get(name, "distill")
    task.set_agent_role(cls.role)
    budget = task.budget
    student = cls(cls.Config()).solve(task.train_view(seed, budget), budget, seed)
    metrics = task.evaluate(student, seed).metrics
    assert metrics["teacher_copy16"] == 1.0
    return metrics["score_copy16"]


@pytest.mark.slow
def test_lolcats_learns_copy16_on_as_many_seeds_as_linear_attention():
    task = papergym.make_task("papergym/LosslessDistill-v1", tier="smoke", **CONFIG)
    scores = {name: [copy16(task, name, seed) for seed in SEEDS] for name in ("linear-attn", "lolcats")}
    learned = {name: sum(s >= 0.5 for s in values) for name, values in scores.items()}
    assert learned["linear-attn"] >= 3, scores
    assert learned["lolcats"] >= learned["linear-attn"], scores
