"""Stage III as the paper's merging stage runs it (Hauzenberger et al. 2026, Eq. 14): every
domain expert starts its stage-II run from the same weights θ^(0), the student after stage I
(not the stage-0 copy of the teacher, nor another expert's end), trains on its own domain only,
and the merged student is the uniform average of the experts' ends."""

from __future__ import annotations

import torch

import papergym
from papergym.agent import REGISTRY
from papergym.agents.distill._pipeline import DistillAgent, merge
from papergym.envs.distill.tasks import TAGS, TOKENIZER

TASK = "papergym/LosslessDistill-v0"
TINY = {"teacher_steps": 20, "token_budget": 14 * 8 * 48, "eval_items": 8}


def _copy(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def test_experts_branch_from_the_stage1_weights_and_merge_uniformly(monkeypatch):
    record: dict[str, list] = {k: [] for k in ("stage0", "stage1", "starts", "ends", "domains", "merged")}
    stage1, stage2 = DistillAgent.stage1, DistillAgent.stage2

    def spy_stage1(self, student, view, n):
        record["stage0"].append(_copy(student))
        stage1(self, student, view, n)
        record["stage1"].append(_copy(student))

    def spy_stage2(self, student, batches, lr, best=None, label=""):
        record["starts"].append(_copy(student))
        record["domains"].append({int(t) for b in batches for t in b.tokens[:, 1]})  # the domain tag
        stage2(self, student, batches, lr, best, label)
        record["ends"].append(_copy(student))

    def spy_merge(states, weights):
        out = merge(states, weights)
        record["merged"].append((len(states), list(weights), out))
        return out

    monkeypatch.setattr(DistillAgent, "stage1", spy_stage1)
    monkeypatch.setattr(DistillAgent, "stage2", spy_stage2)
    monkeypatch.setattr("papergym.agents.distill._pipeline.merge", spy_merge)
    cls = REGISTRY.get("xlstm-hybrid-merged", "distill")
    task = papergym.make_task(TASK, tier="smoke", **TINY)
    task.set_agent_role(cls.role)
    budget = task.budget
    view = task.train_view(0, budget)
    lrs = (3e-4, 1e-3)
    cls(cls.Config(batch=8, val_batches=1, stage2_lrs=lrs, stage2_lr=1e-3)).solve(view, budget, 0)

    domains = view.domains
    assert len(domains) == 3 and len(record["stage1"]) == 1
    theta0, stage0 = record["stage1"][0], record["stage0"][0]
    # stage I moved the new parameters, so "from the stage-1 weights" is not "from the teacher copy"
    assert any(not torch.equal(theta0[k], stage0[k]) for k in theta0)
    assert len(record["starts"]) == len(lrs) * len(domains)
    for start in record["starts"]:  # every expert, at every lr, starts at θ^(0) exactly
        assert all(torch.equal(start[k], theta0[k]) for k in theta0)
    for index, seen in enumerate(record["domains"]):  # expert d sees domain d's items only
        assert seen == {TOKENIZER.encode(TAGS[domains[index % len(domains)]])[0]}
    # each lr's merge is the uniform average of that lr's expert ends
    assert [(n, w) for n, w, _ in record["merged"]] == [(3, [1 / 3] * 3)] * len(lrs)
    for run, (_, _, merged) in enumerate(record["merged"]):
        ends = record["ends"][run * len(domains): (run + 1) * len(domains)]
        key = "blocks.0.attn.qkv.weight"
        assert not torch.equal(ends[0][key], ends[1][key])  # the experts differ ...
        torch.testing.assert_close(merged[key], sum(e[key] for e in ends) / 3)  # ... and are averaged
