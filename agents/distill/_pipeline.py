"""The distillation pipeline every student shares (Hauzenberger et al. 2026, Sec. 3): one recipe,
one token budget, one optimizer, one selection rule; only the token mixer (``MIXER``) differs
between students.

stage 0 [paper]: embeddings, norms, MLPs and W_q, W_k, W_v, W_o copied from the teacher
    (``LinearizedGPT.from_teacher``); the new parameters (Hedgehog feature maps, mLSTM input and
    forget gate projections, the per-head mixing gate, LoLCATs' γ) keep their initialization
    (forget biases linearly spaced in [3, 6] over the heads [lib]; input-gate bias 5 [recon: the
    Hedgehog features' dot products are about 1/D, so with ĩ = 0 the normalizer's floor exp(−m) = 1
    binds and the mLSTM returns a shrunken sum instead of a weighted mean; a pilot's hybrid then
    failed every copy task]; mixing-gate bias 0, o = 1/2).
validation [recon]: ``val_batches`` batches drawn from the stream first (training items, never an
    evaluation item; charged to the budget like every batch) with the teacher's logits on them.
stage 1 [paper Eq. 12]: layer-wise alignment, N1 tokens: the student's mixer l gets the teacher's
    h_T^l [recon: the paper does not say whose layer inputs] and minimizes
    Σ_l ‖attn_T^l − ĥ_S^l‖² (mean over non-pad positions); only the new parameters train; AdamW,
    linear warm-up, cosine decay; peak lr 1e-2 [paper].
stage 2 [paper Eq. 13]: end-to-end distillation, N2 tokens, every parameter trains:
    loss = γ CE(y_t) + β KL(p_T ‖ p_S) at the answer positions, γ = 0.9, β = 0.1 [paper]; the
    top-k of the paper (k = 256) covers this 50-token vocabulary, so the KL is exact; AdamW with
    weight decay 0.1, gradient clip 1.0 [paper], short warm-up then constant lr. The paper's lr
    (1e-5 for an 8B model) does not transfer to this scale, so the lr is tuned by the one tuning
    protocol (papergym.tuning): the candidates are the whole grid ``stage2_lrs`` ({3e-4, 1e-3,
    3e-3} [recon], the same for every student, so equal budgets), the default ``stage2_lr`` (1e-3)
    first (``grid_candidates``); each runs on the same N2 batches (drawn once, replayed in the
    same order) and the student returned is the one of lowest validation KL(teacher ‖ student)
    among the stage-2 start and ``checkpoints`` evenly spaced checkpoints of every run [recon:
    model selection on held-aside training items]; ``selection["tuning"]`` is the record
    (``TuningRecord``: each lr's best validation KL, the chosen lr, and whether it sits at the
    grid's edge). The start is a candidate, so stage 2 never returns a student
    further from the teacher on validation than it began: a student equal to the teacher (the
    identity student) comes back unchanged.
stage 3 [paper Eq. 14], ``merged`` students: one expert per domain runs stage 2 on its domain alone
    from the shared stage-1 weights θ^(0) with N2/K batches; θ = Σ_d λ_d θ_d, λ_d = 1/K [paper
    default] (the same total tokens as a single run, App. D.2); per lr the merged model is the
    candidate (and the start, as above).

N1 : N2 = 1 : 4 [recon; the paper's base-model ratio is about 1 : 8]. Students without new
parameters (softmax, SWA) skip stage 1 and spend its tokens in stage 2. The budget is counted by
the view: B x ctx tokens per batch, so the number of batches is known in advance.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import torch
import torch.nn.functional as F
from pydantic import Field, field_validator, model_validator

from papergym.agent import Agent, AgentConfig
from papergym.tinylm.gpt import GPTConfig
from papergym.tinylm.linearized import LinearizedGPT, MixerConfig
from papergym.tinylm.train import TrainConfig, train
from papergym.tuning import TuningRecord, grid_candidates

PAPER = "hauzenberger2026"
PROBLEMS = ("papergym/LosslessDistill-v*",)
FAMILY = "distill"


class DistillConfig(AgentConfig):
    batch: int = Field(32, ge=1, le=1024)
    stage1_fraction: float = Field(0.2, ge=0.0, lt=1.0)
    stage1_lr: float = Field(1e-2, gt=0.0)  # peak [paper]
    stage2_lr: float = Field(1e-3, ge=0.0)  # the default candidate, tried first [recon]
    stage2_lrs: tuple[float, ...] = (3e-4, 1e-3, 3e-3)  # the grid stage 2 selects from; 0: no update
    checkpoints: int = Field(4, ge=1)  # validation checks per stage-2 run (besides the start)
    val_batches: int = Field(4, ge=1)  # validation batches, drawn first
    gamma: float = Field(0.9, ge=0.0)  # CE weight [paper]
    beta: float = Field(0.1, ge=0.0)  # KL weight [paper]
    weight_decay: float = Field(0.1, ge=0.0)
    warmup_fraction: float = Field(0.05, ge=0.0, le=1.0)
    window: int | None = Field(None, ge=1)  # default: the window the view states (ctx / 8)
    sinks: int | None = Field(None, ge=0)  # default: the view's (4)
    feature_map: str = "hedgehog"  # linear attention only: "hedgehog" | "elu"

    @field_validator("stage2_lrs")
    @classmethod
    def _grid(cls, value: tuple[float, ...]) -> tuple[float, ...]:
        if not value or any(not math.isfinite(lr) or lr < 0 for lr in value):
            raise ValueError(f"stage2_lrs must be a non-empty list of finite lrs >= 0, got {list(value)}")
        return value

    @model_validator(mode="after")
    def _default_in_grid(self) -> DistillConfig:
        if self.stage2_lr not in self.stage2_lrs:
            raise ValueError(f"stage2_lr {self.stage2_lr:g} (the default candidate) must be one of "
                             f"stage2_lrs {list(self.stage2_lrs)}; add it to the grid or pick another")
        return self


@dataclass(frozen=True)
class Batch:
    """What the pipeline keeps of a streamed batch: the ids, the answer positions (B, T-1; the
    positions that predict an answer token or EOS) and the teacher's log-probabilities there."""

    tokens: torch.Tensor
    mask: torch.Tensor
    teacher_logp: torch.Tensor  # (answer positions, V)

    @classmethod
    def draw(cls, view: Any, domain: str, batch: int) -> Batch:
        raw = view.stream(domain, batch, ("logits",))
        mask = raw["mask"][:, :-1]
        return cls(raw["tokens"], mask, F.log_softmax(raw["logits"][:, :-1], dim=-1)[mask])

    def student_logp(self, student: torch.nn.Module) -> torch.Tensor:
        return F.log_softmax(student(self.tokens)[:, :-1], dim=-1)[self.mask]

    def kl(self, logp: torch.Tensor) -> torch.Tensor:
        """KL(p_T ‖ p_S) per answer position."""
        return (self.teacher_logp.exp() * (self.teacher_logp - logp)).sum(-1)


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


def stage2_loss(student: torch.nn.Module, batch: Batch, gamma: float, beta: float) -> torch.Tensor:
    """γ CE(y_t) + β KL(p_T ‖ p_S), token means over the answer positions (Eq. 13)."""
    logp = batch.student_logp(student)
    ce = -logp.gather(-1, batch.tokens[:, 1:][batch.mask][:, None]).mean()
    return gamma * ce + beta * batch.kl(logp).mean()


@torch.no_grad()
def validation_kl(student: torch.nn.Module, batches: Sequence[Batch]) -> float:
    """Token-mean KL(teacher ‖ student) over the answer positions of the validation batches."""
    was_training = student.training
    student.eval()
    total = sum(float(b.kl(b.student_logp(student)).sum()) for b in batches)
    student.train(was_training)
    return total / sum(int(b.mask.sum()) for b in batches)


class Best:
    """The weights of lowest validation KL offered so far (the first offered wins a tie)."""

    def __init__(self, batches: Sequence[Batch]) -> None:
        self.batches, self.kl, self.state, self.label = list(batches), math.inf, None, ""
        self.tried: list[tuple[str, float]] = []

    def offer(self, model: torch.nn.Module, label: str) -> None:
        kl = validation_kl(model, self.batches)
        self.tried.append((label, kl))
        if kl < self.kl:
            self.kl, self.label = kl, label
            self.state = {k: v.detach().clone() for k, v in model.state_dict().items()}


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

    def mixer_config(self, view: Any) -> MixerConfig:
        c = self.config
        return MixerConfig(kind=self.MIXER, window=c.window or view.window,
                           sinks=view.sinks if c.sinks is None else c.sinks, feature_map=c.feature_map)

    def build(self, view: Any) -> LinearizedGPT:
        mixer = self.mixer_config(view)
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

    def adapt(self, student: LinearizedGPT) -> None:
        """Before stage 2 (and its start snapshot): change what stage 2 trains (default: nothing)."""

    def stage2_parameters(self, student: LinearizedGPT) -> list[torch.nn.Parameter] | None:
        """The parameters stage 2 updates (default None: every parameter)."""
        return None

    def finish(self, student: LinearizedGPT) -> None:
        """After the chosen weights are loaded: undo :meth:`adapt` (default: nothing)."""

    def stage2(self, student: LinearizedGPT, batches: Sequence[Batch], lr: float, best: Best | None = None,
               label: str = "") -> None:
        """One stage-2 run at ``lr`` over ``batches``; ``best`` is offered the checkpoints."""
        c, n = self.config, len(batches)
        if n < 1 or lr == 0:  # lr 0: no update (the start is already a candidate)
            return
        marks = {round(n * j / c.checkpoints) for j in range(1, c.checkpoints)} - {0, n}  # and the end

        def loss_fn(model: torch.nn.Module, step: int) -> torch.Tensor:
            if best is not None and step in marks:
                best.offer(model, f"{label}lr={lr:g} step={step}")
            return stage2_loss(model, batches[step], c.gamma, c.beta)

        cfg = TrainConfig(steps=n, lr=lr, warmup=max(1, int(c.warmup_fraction * n)), decay="constant",
                          weight_decay=c.weight_decay)
        train(student, loss_fn, cfg, parameters=self.stage2_parameters(student))
        if best is not None:
            best.offer(student, f"{label}lr={lr:g} step={n}")

    def solve(self, view: Any, budget: Any, seed: int) -> LinearizedGPT:
        torch.manual_seed(int(seed))
        c = self.config
        student = self.build(view)
        total = self.batches(view, budget) - c.val_batches
        if total < 1:
            raise ValueError(f"{self.id}: the token budget holds {total + c.val_batches} batches of "
                             f"{c.batch} x {view.ctx} tokens, none beyond {c.val_batches} validation ones")
        best = Best([Batch.draw(view, "mix", c.batch) for _ in range(c.val_batches)])
        n1 = int(round(c.stage1_fraction * total)) if student.new_parameters() else 0
        self.stage1(student, view, n1)
        n2 = total - n1
        self.adapt(student)
        start = copy.deepcopy(student.state_dict())
        best.offer(student, "start")
        lrs = [cand["stage2_lr"] for cand in grid_candidates({"stage2_lr": c.stage2_lr},
                                                             {"stage2_lr": c.stage2_lrs})]
        record = TuningRecord(len(lrs), direction="min")
        if not self.MERGED:
            batches = [Batch.draw(view, "mix", c.batch) for _ in range(n2)]
            for lr in lrs:
                student.load_state_dict(start)
                seen = len(best.tried)
                self.stage2(student, batches, lr, best)
                run_kls = [kl for _, kl in best.tried[seen:]] or [best.tried[0][1]]  # lr 0: the start
                record.add({"stage2_lr": lr}, min(run_kls))
        else:  # one expert per domain: N2/K batches each, the remainder to the first ones
            domains = list(view.domains)
            shares = [n2 // len(domains) + (index < n2 % len(domains)) for index in range(len(domains))]
            per_domain = [[Batch.draw(view, d, c.batch) for _ in range(k)] for d, k in zip(domains, shares)]
            for lr in lrs:
                experts = []
                for batches in per_domain:
                    student.load_state_dict(start)
                    self.stage2(student, batches, lr)
                    experts.append({k: v.detach().clone() for k, v in student.state_dict().items()})
                student.load_state_dict(merge(experts, [1.0 / len(domains)] * len(domains)))
                best.offer(student, f"merged lr={lr:g}")
                record.add({"stage2_lr": lr}, best.tried[-1][1])
        student.load_state_dict(best.state)
        self.finish(student)
        student.selection = {"chosen": best.label, "validation_kl": dict(best.tried),
                             "tuning": record.summary()}
        return student.eval()
