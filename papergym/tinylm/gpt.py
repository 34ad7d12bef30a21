"""A small pre-LN causal GPT: learned positions, GELU MLP, optional KV cache.

``model(tokens)`` returns logits (the artifact protocol of the language families);
``model.run(...)`` also takes explicit positions, a key mask (for left-padded batches) and a
KV cache, and can return the hidden state entering block ``l`` (``return_hidden=l``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class GPTConfig:
    vocab_size: int
    d_model: int = 64
    n_layer: int = 2
    n_head: int = 2
    ctx: int = 48

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass
class GPTOutput:
    logits: torch.Tensor
    hidden: torch.Tensor | None = None
    cache: list[tuple[torch.Tensor, torch.Tensor]] | None = None


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        if cfg.d_model % cfg.n_head:
            raise ValueError(f"d_model {cfg.d_model} must be divisible by n_head {cfg.n_head}")
        self.n_head = cfg.n_head
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)

    def forward(
        self,
        x: torch.Tensor,
        mask: torch.Tensor,
        past: tuple[torch.Tensor, torch.Tensor] | None,
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
        batch, length, width = x.shape
        head = width // self.n_head
        q, k, v = self.qkv(x).split(width, dim=-1)
        q, k, v = (t.view(batch, length, self.n_head, head).transpose(1, 2) for t in (q, k, v))
        if past is not None:
            k = torch.cat([past[0], k], dim=2)
            v = torch.cat([past[1], v], dim=2)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(head)
        scores = scores.masked_fill(~mask[:, None], float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v
        out = out.transpose(1, 2).reshape(batch, length, width)
        return self.proj(out), (k, v)


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = CausalSelfAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.mlp = nn.Sequential(
            nn.Linear(cfg.d_model, 4 * cfg.d_model), nn.GELU(), nn.Linear(4 * cfg.d_model, cfg.d_model)
        )

    def forward(self, x, mask, past):  # noqa: ANN001, ANN201 - internal
        attended, present = self.attn(self.ln1(x), mask, past)
        x = x + attended
        return x + self.mlp(self.ln2(x)), present


class GPT(nn.Module):
    """Pre-LN causal transformer. Initialization is drawn from an explicit generator."""

    def __init__(self, cfg: GPTConfig, generator: torch.Generator | None = None) -> None:
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos_emb = nn.Embedding(cfg.ctx, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        self.reset_parameters(generator or torch.Generator().manual_seed(0))

    @torch.no_grad()
    def reset_parameters(self, generator: torch.Generator) -> None:
        # GPT-2 init: N(0, 0.02), residual projections scaled by 1/sqrt(2 * n_layer)
        for name, p in self.named_parameters():
            if p.dim() == 1:
                p.copy_(torch.ones_like(p) if name.endswith("weight") else torch.zeros_like(p))
                continue
            residual = name.endswith(("proj.weight", "mlp.2.weight"))
            std = 0.02 / math.sqrt(2 * self.cfg.n_layer) if residual else 0.02
            p.copy_(torch.randn(p.shape, generator=generator) * std)

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.run(tokens).logits

    def run(
        self,
        tokens: torch.Tensor,
        positions: torch.Tensor | None = None,
        key_mask: torch.Tensor | None = None,
        past: list[tuple[torch.Tensor, torch.Tensor]] | None = None,
        use_cache: bool = False,
        return_hidden: int | None = None,
    ) -> GPTOutput:
        """One forward pass.

        tokens: (B, T) ids. positions: (B, T) position ids (default 0..T-1 after the cache).
        key_mask: (B, S) bool over every key including cached ones (False = padding).
        return_hidden: ``l`` in [0, n_layer] returns the hidden state entering block ``l``
        (``n_layer``: the final block's output, before the last LayerNorm).
        """
        batch, length = tokens.shape
        offset = 0 if past is None else past[0][0].shape[2]
        if positions is None:
            positions = torch.arange(offset, offset + length).expand(batch, length)
        if int(positions.max()) >= self.cfg.ctx:
            raise ValueError(f"position {int(positions.max())} exceeds the context {self.cfg.ctx}")
        total = offset + length
        query_at = torch.arange(offset, total)[:, None]
        causal = torch.arange(total)[None, :] <= query_at  # (T, S)
        mask = causal.expand(batch, length, total)
        if key_mask is not None:
            # a query always sees itself, so a padding query never has an empty row (no NaN)
            diagonal = torch.arange(total)[None, :] == query_at
            mask = mask & (key_mask[:, None, :] | diagonal)
        x = self.tok_emb(tokens) + self.pos_emb(positions)
        hidden = x if return_hidden == 0 else None
        presents = []
        for index, block in enumerate(self.blocks):
            x, present = block(x, mask, None if past is None else past[index])
            presents.append(present)
            if return_hidden == index + 1:
                hidden = x
        logits = self.head(self.ln_f(x))
        return GPTOutput(logits=logits, hidden=hidden, cache=presents if use_cache else None)


def sequence_logprobs(
    model: nn.Module, tokens: torch.Tensor, response_mask: torch.Tensor, temperature: float = 1.0,
    return_hidden: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Per-token log-probs of ``tokens[:, 1:]`` (right-padded batch), masked to the response.

    Returns ``(logp, hidden)``: logp (B, T-1) with 0 outside ``response_mask[:, 1:]``;
    hidden (B, T-1, H) is the state that predicts token t+1 (entering block ``return_hidden``).
    """
    out = model.run(tokens[:, :-1], return_hidden=return_hidden)
    logits = out.logits.to(torch.promote_types(out.logits.dtype, torch.float32)) / temperature
    logp = torch.log_softmax(logits, dim=-1).gather(-1, tokens[:, 1:, None]).squeeze(-1)
    return logp * response_mask[:, 1:], out.hidden


def token_entropy(logits: torch.Tensor) -> torch.Tensor:
    logp = F.log_softmax(logits.float(), dim=-1)
    return -(logp.exp() * logp).sum(-1)
