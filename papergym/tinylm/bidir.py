"""A small bidirectional (non-causal) pre-LN transformer over a fixed length, with a MASK token.

Token ids 0..V-1 are the vocabulary and V is MASK (the embedding has V + 1 rows). Positions are
learned. ``time_conditioning`` adds a sinusoidal embedding of t passed through a 2-layer MLP to
every position (off by default, as in the MDLM code's ``time_conditioning: False``). Two heads:
``"vocab"`` (LayerNorm + Linear(d, V): never a logit for MASK, the SUBS parameterization's
first half) and ``"scalar"`` (LayerNorm + a zero-initialized Linear(d, 1): one score per
position, e.g. a learned remasker). :func:`with_scalar_head` copies a model's backbone and
swaps its head; :func:`subs_probs` completes SUBS (revealed positions are copied).
"""

from __future__ import annotations

import copy
import math
from dataclasses import asdict, dataclass, replace

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class BidirConfig:
    vocab_size: int  # V; MASK is V
    length: int
    d_model: int = 64
    n_layer: int = 2
    n_head: int = 2
    time_conditioning: bool = False
    head: str = "vocab"  # "vocab" | "scalar"

    def __post_init__(self) -> None:
        if self.d_model % self.n_head:
            raise ValueError(f"d_model {self.d_model} must be divisible by n_head {self.n_head}")
        if self.head not in ("vocab", "scalar"):
            raise ValueError(f"head must be 'vocab' or 'scalar', got {self.head!r}")

    @property
    def mask_id(self) -> int:
        return self.vocab_size

    def as_dict(self) -> dict:
        return asdict(self)


class Block(nn.Module):
    def __init__(self, cfg: BidirConfig) -> None:
        super().__init__()
        self.n_head = cfg.n_head
        self.ln1, self.ln2 = nn.LayerNorm(cfg.d_model), nn.LayerNorm(cfg.d_model)
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)
        self.mlp = nn.Sequential(nn.Linear(cfg.d_model, 4 * cfg.d_model), nn.GELU(),
                                 nn.Linear(4 * cfg.d_model, cfg.d_model))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        batch, length, width = h.shape
        q, k, v = self.qkv(self.ln1(h)).split(width, dim=-1)
        q, k, v = (t.view(batch, length, self.n_head, -1).transpose(1, 2) for t in (q, k, v))
        att = F.scaled_dot_product_attention(q, k, v)  # no mask: every position sees all
        h = h + self.proj(att.transpose(1, 2).reshape(batch, length, width))
        return h + self.mlp(self.ln2(h))


def timestep_embedding(t: torch.Tensor, dim: int) -> torch.Tensor:
    """Sinusoidal features of t in [0, 1] (scaled by 1000, as in DiT/MDLM): (B, dim)."""
    half = dim // 2
    freqs = torch.exp(-math.log(10_000.0) * torch.arange(half, dtype=torch.float32) / half)
    args = 1000.0 * t.float()[:, None] * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class Bidir(nn.Module):
    """``model(x, t=None)`` -> logits (B, L, V) for the vocab head, scores (B, L) for the scalar
    head. ``model.hidden(x, t)`` is the final hidden state before the head's LayerNorm."""

    def __init__(self, cfg: BidirConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.tok = nn.Embedding(cfg.vocab_size + 1, cfg.d_model)
        self.pos = nn.Parameter(torch.zeros(cfg.length, cfg.d_model))
        # tokens and positions at one scale (GPT-2's 0.02), so positions are not drowned out
        nn.init.normal_(self.tok.weight, std=0.02)
        nn.init.normal_(self.pos, std=0.02)
        self.time = nn.Sequential(nn.Linear(cfg.d_model, cfg.d_model), nn.SiLU(),
                                  nn.Linear(cfg.d_model, cfg.d_model)) if cfg.time_conditioning else None
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = self._make_head(cfg)

    @staticmethod
    def _make_head(cfg: BidirConfig) -> nn.Linear:
        if cfg.head == "vocab":
            return nn.Linear(cfg.d_model, cfg.vocab_size)
        head = nn.Linear(cfg.d_model, 1)
        nn.init.zeros_(head.weight)
        nn.init.zeros_(head.bias)
        return head

    def hidden(self, x: torch.Tensor, t: torch.Tensor | None = None) -> torch.Tensor:
        if x.ndim != 2 or x.shape[1] != self.cfg.length:
            raise ValueError(f"input must be (B, {self.cfg.length}) token ids, got {tuple(x.shape)}")
        h = self.tok(x) + self.pos
        if self.time is not None:
            if t is None:
                raise ValueError("this model is time-conditioned: pass t")
            h = h + self.time(timestep_embedding(t.reshape(-1).expand(x.shape[0]), self.cfg.d_model))[:, None]
        for block in self.blocks:
            h = block(h)
        return h

    def forward(self, x: torch.Tensor, t: torch.Tensor | None = None) -> torch.Tensor:
        out = self.head(self.ln_f(self.hidden(x, t)))
        return out.squeeze(-1) if self.cfg.head == "scalar" else out


def with_scalar_head(model: Bidir) -> Bidir:
    """A copy of ``model``'s backbone (embeddings, blocks, final LayerNorm: its weights) with a
    fresh zero-initialized scalar head in place of the vocabulary head."""
    copy_ = Bidir(replace(model.cfg, head="scalar"))
    state = {k: v for k, v in copy.deepcopy(model.state_dict()).items() if not k.startswith("head.")}
    copy_.load_state_dict(state, strict=False)
    return copy_


def subs_probs(logits: torch.Tensor, x: torch.Tensor, mask_id: int) -> torch.Tensor:
    """SUBS: softmax over the V real tokens (zero mass on MASK, which has no logit) at masked
    positions, a one-hot copy of the input at revealed ones. (B, L, V), float32."""
    probs = torch.softmax(logits.float(), dim=-1)
    revealed = x != mask_id
    copied = F.one_hot(x.clamp_max(logits.shape[-1] - 1), logits.shape[-1]).float()
    return torch.where(revealed[..., None], copied, probs)
