"""The distillation pipeline every student shares (Hauzenberger et al. 2026, Sec. 3): one recipe,
one token budget, one optimizer; only the token mixer (``MIXER``) differs between students.

stage 0 [paper]: embeddings, norms, MLPs and W_q, W_k, W_v, W_o copied from the teacher
    (``LinearizedGPT.from_teacher``); the new parameters (Hedgehog feature maps, mLSTM input and
    forget gate projections, the per-head mixing gate, LoLCATs' γ) keep their initialization
    (forget biases linearly spaced in [3, 6] over the heads [lib]; input-gate bias 5 [recon: the
    Hedgehog features' dot products are about 1/D, so with ĩ = 0 the normalizer's floor exp(−m) = 1
    binds and the mLSTM returns a shrunken sum instead of a weighted mean; a pilot's hybrid then
    failed every copy task]; mixing-gate bias 0, o = 1/2).
stage 1 [paper Eq. 12]: layer-wise alignment, N1 tokens: the student's mixer l gets the teacher's
    h_T^l [recon: the paper does not say whose layer inputs] and minimizes
    Σ_l ‖attn_T^l − ĥ_S^l‖² (mean over non-pad positions); only the new parameters train; AdamW,
    linear warm-up, cosine decay; peak lr 1e-2 [recon; paper 1e-2 at 8B].
stage 2 [paper Eq. 13]: end-to-end distillation, N2 tokens, every parameter trains:
    loss = γ CE(y_t) + β KL(p_T ‖ p_S) at the answer positions, γ = 0.9, β = 0.1 [paper]; the
    top-k of the paper (k = 256) covers this 50-token vocabulary, so the KL is exact; AdamW with
    weight decay 0.1, gradient clip 1.0 [paper], short warm-up then constant lr 1e-3 [recon].
stage 3 [paper Eq. 14], ``merged`` students: one expert per domain runs stage 2 on its domain alone
    from the shared stage-1 weights θ^(0) with N2/K tokens; θ = Σ_d λ_d θ_d, λ_d = 1/K [paper
    default] (the same total N1 + N2 tokens as a single run, App. D.2).

N1 : N2 = 1 : 4 [recon; the paper's base-model ratio is about 1 : 8]. Students without new
parameters (softmax, SWA) skip stage 1 and spend its tokens in stage 2. The budget is counted by
the view: B x ctx tokens per batch, so the number of batches is known in advance.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, ClassVar

import torch
import torch.nn.functional as F
from pydantic import Field

from papergym.agent import Agent, AgentConfig
from papergym.tinylm.gpt import GPTConfig
from papergym.tinylm.linearized import LinearizedGPT, MixerConfig
from papergym.tinylm.train import TrainConfig, train

PAPER = "hauzenberger2026"
PROBLEMS = ("papergym/LosslessDistill-v0",)
FAMILY = "distill"


class DistillConfig(AgentConfig):
    batch: int = Field(32, ge=1, le=1024)
    stage1_fraction: float = Field(0.2, ge=0.0, lt=1.0)
    stage1_lr: float = Field(1e-2, gt=0.0)
    stage2_lr: float = Field(1e-3, ge=0.0)  # 0: no stage-2 update (a test's control)
    gamma: float = Field(0.9, ge=0.0)  # CE weight [paper]
    beta: float = Field(0.1, ge=0.0)  # KL weight [paper]
    weight_decay: float = Field(0.1, ge=0.0)
    warmup_fraction: float = Field(0.05, ge=0.0, le=1.0)
    window: int | None = Field(None, ge=1)  # default: the window the view states (ctx / 8)
    sinks: int | None = Field(None, ge=0)  # default: the view's (4)
    feature_map: str = "hedgehog"  # linear attention only: "hedgehog" | "elu"


def merge(states: Sequence[dict[str, torch.Tensor]], weights: Sequence[float]) -> dict[str, torch.Tensor]:
    """θ = Σ_d λ_d θ_d (Eq. 14) over floating tensors; λ_d >= 0 summing to 1."""
    if len(states) != len(weights) or not states:
        raise ValueError("need one weight per expert")
    if any(w < 0 for w in weights) or abs(sum(weights) - 1.0) > 1e-9:
        raise ValueError(f"merge weights must be >= 0 and sum to 1, got {list(weights)}")
    out = {}
    for name, first in states[0].items():
        if first.is_floating_point():
            out[name] = sum(w * s[name] for w, s in zip(weights, states))
        else:
            out[name] = first.clone()
    return out


def stage1_loss(student: LinearizedGPT, batch: dict[str, Any]) -> torch.Tensor:
    keep = (~batch["pad"]).float()[..., None]
    total = torch.zeros(())
    for layer, (h, target) in enumerate(zip(batch["hidden"], batch["attn"])):
        err = (student.mixer_output(layer, h) - target).pow(2).sum(-1, keepdim=True)
        total = total + (err * keep).sum() / keep.sum()
    return total


def stage2_loss(student: torch.nn.Module, batch: dict[str, Any], gamma: float, beta: float) -> torch.Tensor:
    tokens, mask = batch["tokens"], batch["mask"][:, :-1]
    logits = student(tokens)[:, :-1]
    logp = F.log_softmax(logits, dim=-1)[mask]
    ce = -logp.gather(-1, tokens[:, 1:][mask][:, None]).mean()
    logp_t = F.log_softmax(batch["logits"][:, :-1], dim=-1)[mask]
    kl = (logp_t.exp() * (logp_t - logp)).sum(-1).mean()
    return gamma * ce + beta * kl


class DistillAgent(Agent):
    """A student of the shared pipeline; subclasses set ``MIXER`` (and ``MERGED``)."""

    family: ClassVar[str] = FAMILY
    role: ClassVar[str] = "baseline"
    paper: ClassVar[str] = PAPER
    problems: ClassVar[tuple[str, ...]] = PROBLEMS
    MIXER: ClassVar[str] = "hybrid"
    MERGED: ClassVar[bool] = False
    FORCE_GATE: ClassVar[float | None] = None
    Config = DistillConfig

    def build(self, view: Any) -> LinearizedGPT:
        c = self.config
        mixer = MixerConfig(kind=self.MIXER, window=c.window or view.window,
                            sinks=view.sinks if c.sinks is None else c.sinks, feature_map=c.feature_map)
        teacher_cfg = GPTConfig(**view.teacher_config())
        student = LinearizedGPT.from_teacher(view.teacher_state_dict(), teacher_cfg, mixer)
        student.set_gate(self.FORCE_GATE)
        return student

    def batches(self, view: Any, budget: Any) -> int:
        return int(budget.remaining("tokens")) // (self.config.batch * int(view.ctx))

    def stage1(self, student: LinearizedGPT, view: Any, n: int) -> None:
        if n < 1:
            return
        c = self.config
        cfg = TrainConfig(steps=n, lr=c.stage1_lr, warmup=max(1, int(c.warmup_fraction * n)), decay="cosine",
                          weight_decay=0.01)
        student.requires_grad_(False)
        params = student.new_parameters()
        for p in params:
            p.requires_grad_(True)
        train(student, lambda model, step: stage1_loss(model, view.stream("mix", c.batch, ("layer_io",))),
              cfg, parameters=params)
        student.requires_grad_(True)

    def stage2(self, student: LinearizedGPT, view: Any, n: int, domain: str = "mix") -> None:
        if n < 1:
            return
        c = self.config
        if c.stage2_lr == 0:  # spend the tokens, move nothing
            for _ in range(n):
                view.stream(domain, c.batch, ("logits",))
            return
        cfg = TrainConfig(steps=n, lr=c.stage2_lr, warmup=max(1, int(c.warmup_fraction * n)),
                          decay="constant", weight_decay=c.weight_decay)
        train(student, lambda model, step: stage2_loss(model, view.stream(domain, c.batch, ("logits",)),
                                                       c.gamma, c.beta), cfg)

    def solve(self, view: Any, budget: Any, seed: int) -> LinearizedGPT:
        torch.manual_seed(int(seed))
        student = self.build(view)
        total = self.batches(view, budget)
        n1 = int(round(self.config.stage1_fraction * total)) if student.new_parameters() else 0
        self.stage1(student, view, n1)
        n2 = total - n1
        if not self.MERGED:
            self.stage2(student, view, n2)
            return student.eval()
        domains = list(view.domains)
        base = copy.deepcopy(student.state_dict())
        experts = []
        for index, domain in enumerate(domains):  # N2/K batches each; the remainder to the first ones
            student.load_state_dict(base)
            self.stage2(student, view, n2 // len(domains) + (index < n2 % len(domains)), domain)
            experts.append({k: v.detach().clone() for k, v in student.state_dict().items()})
        student.load_state_dict(merge(experts, [1.0 / len(domains)] * len(domains)))
        return student.eval()
