"""Token mixers for linearized students: sliding-window softmax attention with sink tokens,
linear attention (parallel and recurrent), a LoLCATs-style window + linear mixer, and the
Hedgehog feature map.

All take per-head tensors q, k (B, H, T, Dk), v (B, H, T, Dv) and return (B, H, T, Dv).

- ``window_sink_mask(T, window, sinks)``: position t sees j iff j <= t and (t − j < window or
  j < sinks) (StreamingLLM's attention sinks; Xiao et al. 2024).
- ``softmax_attention(q, k, v, mask)``: softmax(q kᵀ / sqrt(Dk) + log mask) v.
- ``linear_attention``: y_t = Σ_{j<=t} (φq_t · φk_j) v_j / Σ_{j<=t} φq_t · φk_j (Katharopoulos et
  al. 2020), φ given by the caller; ``linear_attention_recurrent`` carries (S, z) instead.
- ``window_linear_attention``: LoLCATs' sliding window + linear attention in one normalizer
  (Zhang et al. 2025): max-shifted softmax weights inside the last w tokens, γ·φq·φk beyond.
- ``HedgehogMap``: φ(x) = softmax(W x) over the feature dimension, one W per head (Zhang et al.
  2024, "The Hedgehog & the Porcupine"), initialized to the identity; or LoLCATs' form,
  [softmax(W x), softmax(−W x)] from a Kaiming-uniform W.
"""

from __future__ import annotations

import math

import torch
from torch import nn


def window_sink_mask(length: int, window: int, sinks: int, offset: int = 0) -> torch.Tensor:
    """(T, offset + T) bool: query at absolute position offset + t sees key j iff j <= offset + t and
    (offset + t − j < window or j < sinks)."""
    if window < 1 or sinks < 0:
        raise ValueError(f"need window >= 1 and sinks >= 0, got {window}, {sinks}")
    t = torch.arange(offset, offset + length)[:, None]
    j = torch.arange(offset + length)[None, :]
    return (j <= t) & ((t - j < window) | (j < sinks))


def softmax_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    scores = (q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
    scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def linear_attention(fq: torch.Tensor, fk: torch.Tensor, v: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """Causal linear attention on feature-mapped queries and keys (φq, φk >= 0)."""
    length = fq.shape[-2]
    causal = torch.ones(length, length, dtype=torch.bool, device=fq.device).tril()
    weights = (fq @ fk.transpose(-2, -1)).masked_fill(~causal, 0.0)
    return (weights @ v) / (weights.sum(-1, keepdim=True) + eps)


def linear_attention_recurrent(fq: torch.Tensor, fk: torch.Tensor, v: torch.Tensor,
                               state: tuple[torch.Tensor, torch.Tensor] | None = None, eps: float = 1e-6,
                               ) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor]]:
    """The same, step by step with state S = Σ v φkᵀ (Dv x Dk) and z = Σ φk (Dk)."""
    batch, heads, length, dk = fq.shape
    if state is None:
        state = (fq.new_zeros(batch, heads, v.shape[-1], dk), fq.new_zeros(batch, heads, dk))
    S, z = state
    out = []
    for t in range(length):
        S = S + v[:, :, t, :, None] * fk[:, :, t, None, :]
        z = z + fk[:, :, t]
        num = (S @ fq[:, :, t, :, None]).squeeze(-1)
        out.append(num / ((z * fq[:, :, t]).sum(-1, keepdim=True) + eps))
    return torch.stack(out, dim=2), (S, z)


def window_linear_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, fq: torch.Tensor,
                            fk: torch.Tensor, gamma: torch.Tensor, window: int, eps: float = 1e-6
                            ) -> torch.Tensor:
    """y_t = (Σ_{t−j<w} e^{q·k_j/√d − m_t} v_j + γ Σ_{t−j>=w} φq·φk_j v_j) / (the same sums
    without v_j), m_t the row maximum of the window's scores.

    gamma: (H,) per-head weights of the linear part (>= 0). The published LoLCATs form: the
    window's softmax terms are shifted by m_t and the linear terms are not (HazyResearch/lolcats,
    ``hybrid_attention_quadratic`` in src/model/linear_attention/linear_window_attention_sw.py),
    so the linear branch competes with weights of at most 1 in the window. Scaling it by e^{−m_t}
    as well (the unshifted ratio) drowned it wherever the window held one confident match.
    """
    length = q.shape[-2]
    t = torch.arange(length)[:, None]
    j = torch.arange(length)[None, :]
    near, far = (j <= t) & (t - j < window), t - j >= window
    scores = ((q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])).masked_fill(~near, float("-inf"))
    m = scores.max(dim=-1, keepdim=True).values  # finite: j = t is always near
    soft = torch.exp(scores - m)
    lin = (fq @ fk.transpose(-2, -1)).masked_fill(~far, 0.0) * gamma[None, :, None, None]
    weights = soft + lin
    return (weights @ v) / (weights.sum(-1, keepdim=True) + eps)


class HedgehogMap(nn.Module):
    """φ(x) = softmax(W_h x) per head h over the feature dimension; W_h starts at the identity.

    ``fullspace=True``: φ(x) = [softmax(W_h x), softmax(−W_h x)] (2D features, clamped at 1e-12),
    the map LoLCATs trains (HazyResearch/lolcats, src/model/feature_map.py, ``SoftmaxDim``;
    configs ``feature_map: softmax_dim``, ``fullspace: true``). ``init="kaiming"``: W_h drawn
    Kaiming-uniform as LoLCATs' ``untied_head_einsum`` with ``zero_init: false`` does (from the
    global torch generator), instead of the identity.
    """

    def __init__(self, heads: int, dim: int, fullspace: bool = False, init: str = "identity") -> None:
        super().__init__()
        if init not in ("identity", "kaiming"):
            raise ValueError(f"HedgehogMap init must be 'identity' or 'kaiming', got {init!r}")
        self.fullspace = fullspace
        self.weight = nn.Parameter(torch.eye(dim).repeat(heads, 1, 1))  # (H, D, D)
        if init == "kaiming":
            with torch.no_grad():
                nn.init.kaiming_uniform_(self.weight)  # fan_in D·D, as LoLCATs' (H, D, F) tensor

    @property
    def features(self) -> int:
        return self.weight.shape[1] * (2 if self.fullspace else 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # x (B, H, T, D)
        z = torch.einsum("bhtd,hed->bhte", x, self.weight)
        if not self.fullspace:
            return torch.softmax(z, dim=-1)
        return torch.cat([torch.softmax(z, dim=-1), torch.softmax(-z, dim=-1)], dim=-1).clamp(min=1e-12)


class EluMap(nn.Module):
    """φ(x) = elu(x) + 1 (Katharopoulos et al. 2020): positive, no parameters."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.elu(x) + 1.0
