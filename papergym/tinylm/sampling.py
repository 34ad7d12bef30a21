"""Batched autoregressive sampling with temperature and top-p, from an explicit generator.

Every step draws exactly one uniform per row from ``generator`` and samples by inverse CDF,
so the KV-cache path and the full-recompute path consume the same random numbers and give
the same tokens. Prompts of different lengths are left-padded; positions restart at 0 after
the padding, as in training (right-padded batches with positions 0..T-1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from papergym.tinylm.gpt import GPT


@dataclass
class Generation:
    """responses: (B, max_new) ids, PAD after the end; logprobs: (B, max_new) fp32 log-probs of
    each sampled token under the sampling distribution (0 after the end); lengths: response
    tokens including EOS; finished: whether the row emitted EOS."""

    responses: torch.Tensor
    logprobs: torch.Tensor
    lengths: torch.Tensor
    finished: torch.Tensor


def filter_top_p(probs: torch.Tensor, top_p: float) -> torch.Tensor:
    """Keep the smallest set of most likely tokens whose mass reaches ``top_p``; renormalize."""
    if top_p >= 1.0:
        return probs
    sorted_probs, order = probs.sort(dim=-1, descending=True)
    mass_before = sorted_probs.cumsum(-1) - sorted_probs
    sorted_probs = torch.where(mass_before < top_p, sorted_probs, torch.zeros_like(sorted_probs))
    kept = torch.zeros_like(probs).scatter(-1, order, sorted_probs)
    return kept / kept.sum(-1, keepdim=True)


def sample_step(
    logits: torch.Tensor, temperature: float, top_p: float, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """One token per row by inverse CDF; returns (token, log-prob under the sampling law)."""
    uniforms = torch.rand(logits.shape[0], generator=generator, dtype=torch.float64)
    if temperature <= 0:  # greedy; the draw above keeps the random stream aligned
        token = logits.argmax(-1)
        return token, torch.zeros(logits.shape[0])
    probs = torch.softmax(logits.double() / temperature, dim=-1)
    probs = filter_top_p(probs, top_p)
    cdf = probs.cumsum(-1)
    cdf[:, -1] = 1.0 + 1e-9
    token = torch.searchsorted(cdf, uniforms[:, None]).squeeze(-1).clamp_max(probs.shape[-1] - 1)
    # never pick a zero-probability token (float edge of the inverse CDF)
    logp = probs.gather(-1, token[:, None]).squeeze(-1).log()
    return token, logp.float()


@torch.no_grad()
def generate(
    model: GPT,
    prompts: Sequence[Sequence[int]],
    max_new: int,
    eos: int,
    pad: int,
    generator: torch.Generator,
    temperature: float = 1.0,
    top_p: float = 1.0,
    use_cache: bool = True,
) -> Generation:
    """Sample up to ``max_new`` tokens after each prompt (the prompt ends where the response
    begins, e.g. ``BOS prompt SEP``)."""
    batch = len(prompts)
    width = max(len(p) for p in prompts)
    left = torch.tensor([width - len(p) for p in prompts])
    tokens = torch.full((batch, width), pad, dtype=torch.long)
    for row, p in enumerate(prompts):
        tokens[row, width - len(p):] = torch.tensor(p, dtype=torch.long)
    key_mask = torch.arange(width)[None, :] >= left[:, None]
    positions = (torch.arange(width)[None, :] - left[:, None]).clamp_min(0)
    responses = torch.full((batch, max_new), pad, dtype=torch.long)
    logprobs = torch.zeros(batch, max_new)
    finished = torch.zeros(batch, dtype=torch.bool)
    lengths = torch.zeros(batch, dtype=torch.long)
    was_training = model.training
    model.eval()
    past = None
    step_tokens, step_positions = tokens, positions
    for t in range(max_new):
        if use_cache:
            out = model.run(step_tokens, positions=step_positions, key_mask=key_mask, past=past,
                            use_cache=True)
            past = out.cache
        else:
            out = model.run(tokens, positions=positions, key_mask=key_mask)
        token, logp = sample_step(out.logits[:, -1], temperature, top_p, generator)
        active = ~finished
        responses[:, t] = torch.where(active, token, torch.full_like(token, pad))
        logprobs[:, t] = torch.where(active, logp, torch.zeros_like(logp))
        lengths += active.long()
        finished = finished | (active & (token == eos))
        if bool(finished.all()):
            break
        next_token = responses[:, t:t + 1]
        next_position = positions[:, -1:] + 1
        tokens = torch.cat([tokens, next_token], dim=1)
        positions = torch.cat([positions, next_position], dim=1)
        key_mask = torch.cat([key_mask, torch.ones(batch, 1, dtype=torch.bool)], dim=1)
        step_tokens, step_positions = next_token, next_position
    model.train(was_training)
    return Generation(responses, logprobs, lengths, finished)


def top_k_mask(scores: torch.Tensor, k: torch.Tensor | int) -> torch.Tensor:
    """Boolean (B, L) mask of the k highest scores per row (k an int or a (B,) tensor); ties go
    to the lower index (a stable descending sort)."""
    batch, length = scores.shape
    k = torch.as_tensor(k).expand(batch) if torch.as_tensor(k).ndim == 0 else torch.as_tensor(k)
    if k.shape != (batch,) or bool((k < 0).any()) or bool((k > length).any()):
        raise ValueError(f"k must be in [0, {length}] per row, got {k.tolist()}")
    order = torch.sort(scores, dim=-1, descending=True, stable=True).indices
    rank = torch.empty_like(order).scatter_(-1, order, torch.arange(length).expand(batch, length))
    return rank < k[:, None]


def gumbel_top_k(scores: torch.Tensor, k: torch.Tensor | int, generator: torch.Generator,
                 temperature: float = 1.0) -> torch.Tensor:
    """Sample k distinct positions per row without replacement from softmax(scores / temperature)
    (Gumbel-top-k: the k largest of scores / temperature + Gumbel noise). Boolean (B, L)."""
    u = torch.rand(scores.shape, generator=generator, dtype=torch.float64).clamp(1e-20, 1 - 1e-16)
    perturbed = scores.double() / temperature - torch.log(-torch.log(u))
    return top_k_mask(perturbed, k)
