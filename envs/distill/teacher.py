"""The problem's teacher (its "pre-trained LLM"): a ``tinylm.gpt`` causal transformer trained on
the mixture of every task's training stream, once per seed (cached by the task), and the
teacher-side quantities the view streams: logits and, per layer, the residual stream entering
the block (h_T^l) and the attention sublayer's output (attn_T^l)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from papergym.envs.distill.tasks import TOKENIZER, Item, Suite, batch_ids
from papergym.tinylm import train as train_mod
from papergym.tinylm.gpt import GPT, GPTConfig


@dataclass(frozen=True)
class TeacherSpec:
    d_model: int = 64
    n_layer: int = 2
    n_head: int = 2
    ctx: int = 64
    steps: int = 300
    batch: int = 64
    lr: float = 3e-3

    def gpt_config(self) -> GPTConfig:
        return GPTConfig(vocab_size=TOKENIZER.vocab_size, d_model=self.d_model, n_layer=self.n_layer,
                         n_head=self.n_head, ctx=self.ctx)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def draw_items(suite: Suite, tasks: list[str], n: int, rng: np.random.Generator) -> list[Item]:
    """n training items, each of a task drawn uniformly from ``tasks``."""
    picks = rng.integers(0, len(tasks), n)
    drawn = {i: iter(suite.draw_many(tasks[i], int((picks == i).sum()), rng, held_out=False))
             for i in range(len(tasks))}
    return [next(drawn[int(i)]) for i in picks]


def answer_mask(items: list[Item], width: int) -> np.ndarray:
    """(B, width) bool: the positions whose next token is an answer token or the EOS (the positions
    the language-model loss and the scores use; the prompts are random)."""
    mask = np.zeros((len(items), width), dtype=bool)
    for row, item in enumerate(items):
        start, end = item.answer_span()
        mask[row, start - 1: end - 1] = True
    return mask


def lm_loss(logits: torch.Tensor, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean next-token cross-entropy over the masked positions."""
    ce = F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1),
                         reduction="none").view(tokens.shape[0], -1)
    m = mask[:, :-1].float()
    return (ce * m).sum() / m.sum()


def train_teacher(suite: Suite, spec: TeacherSpec, seed: int) -> dict[str, Any]:
    """Train the teacher on the task mixture; returns its config and state dict (float32)."""
    torch.manual_seed(seed)
    model = GPT(spec.gpt_config(), generator=torch.Generator().manual_seed(int(seed)))
    rng = np.random.default_rng([7, int(seed)])

    def loss_fn(net: torch.nn.Module, step: int) -> torch.Tensor:
        items = draw_items(suite, suite.tasks, spec.batch, rng)
        ids = batch_ids(items)
        tokens = torch.from_numpy(ids)
        return lm_loss(net(tokens), tokens, torch.from_numpy(answer_mask(items, ids.shape[1])))

    cfg = train_mod.TrainConfig(steps=spec.steps, lr=spec.lr, warmup=max(1, spec.steps // 20), decay="cosine",
                                weight_decay=0.01)
    result = train_mod.train(model, loss_fn, cfg)
    tail = result.losses[-max(1, spec.steps // 10):]
    state = {k: v.clone() for k, v in result.model.state_dict().items()}
    return {"config": spec.gpt_config().as_dict(), "state": state, "final_loss": float(np.mean(tail))}


def load_teacher(value: dict[str, Any]) -> GPT:
    model = GPT(GPTConfig(**value["config"]))
    model.load_state_dict(value["state"])
    return model.eval().requires_grad_(False)


@torch.no_grad()
def teacher_outputs(model: GPT, tokens: torch.Tensor
                    ) -> tuple[torch.Tensor, list[torch.Tensor], list[torch.Tensor]]:
    """logits (B, T, V), h_T^l (the residual stream entering block l) and attn_T^l (the attention
    sublayer's output added to it), l = 0..n_layer-1."""
    inputs: list[torch.Tensor] = []
    outputs: list[torch.Tensor] = []
    hooks = []
    for block in model.blocks:
        hooks.append(block.register_forward_pre_hook(lambda mod, args: inputs.append(args[0].clone())))
        hooks.append(block.attn.register_forward_hook(lambda mod, args, out: outputs.append(out[0].clone())))
    try:
        logits = model(tokens)
    finally:
        for h in hooks:
            h.remove()
    return logits, inputs, outputs


class UniformLM(torch.nn.Module):
    """The floor: zero logits everywhere (the uniform predictor; no decode state)."""

    def __init__(self, vocab_size: int = TOKENIZER.vocab_size) -> None:
        super().__init__()
        self.vocab_size = int(vocab_size)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return torch.zeros(*tokens.shape, self.vocab_size)

    def state_bytes(self, n: int) -> int:
        return 0
