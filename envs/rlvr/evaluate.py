"""Metrics computed by the problem: unbiased Pass@k, Avg@k, distinct correct, entropy, probes.

All sampling here uses the problem's own seeded generator on eval-only (or validation) prompts.
"""

from __future__ import annotations

import math
from fractions import Fraction
from math import comb

import numpy as np
import torch

from papergym.tinylm.gpt import GPT, sequence_logprobs, token_entropy


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased Pass@k = 1 - C(n-c, k)/C(n, k), as the stable product 1 - Π_{i=n-c+1}^{n}(1 - k/i)."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")
    if n - c < k:
        return 1.0
    return 1.0 - float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def pass_at_k_exact(n: int, c: int, k: int) -> Fraction:
    return 1 - Fraction(comb(n - c, k), comb(n, k))


def pass_at_k_curve(correct: np.ndarray) -> dict[int, float]:
    """Mean unbiased Pass@k over prompts for k = 1, 2, 4, ..., n (``correct`` is (P, n) bool)."""
    n = correct.shape[1]
    counts = correct.sum(1)
    ks = [2 ** i for i in range(int(math.log2(n)) + 1)]
    return {k: float(np.mean([pass_at_k(n, int(c), k) for c in counts])) for k in ks}


def collapse_flag(curve: list[tuple[float, float]], non_finite: bool) -> bool:
    """[recon] collapsed if parameters/log-probs went non-finite, or the learning curve ends below
    half its peak having lost at least 0.05 of accuracy."""
    if non_finite:
        return True
    if not curve:
        return False
    values = [y for _, y in curve]
    peak, final = max(values), values[-1]
    return final < 0.5 * peak and peak - final >= 0.05


def collapse_relative(curve: list[tuple[float, float]], base: float, margin: float,
                      non_finite: bool, window: int = 3) -> bool:
    """v1 [recon]: collapsed if parameters/log-probs went non-finite, or the mean of the last
    ``window`` learning-curve points lies more than ``margin`` below the base policy's point
    (never a single noisy point: at 512 samples per point the mean of 3 has SE <= 0.013)."""
    if non_finite:
        return True
    if not curve:
        return False
    tail = [y for _, y in curve[-window:]]
    return float(np.mean(tail)) < base - margin


def sustained_crossing(curve: list[tuple[float, float]], target: float, sustain: int = 2
                       ) -> float | None:
    """The first update from which ``sustain`` consecutive curve points all reach ``target``
    (a crossing that holds, not one noisy point); None if the run never gets there."""
    values = [y for _, y in curve]
    for i in range(len(values) - sustain + 1):
        if all(v >= target for v in values[i:i + sustain]):
            return float(curve[i][0])
    return None


def windowed_min(values: list[float], window: int = 10) -> float:
    if not values:
        return 1.0
    if len(values) < window:
        return float(np.mean(values))
    return float(min(np.mean(values[i:i + window]) for i in range(len(values) - window + 1)))


@torch.no_grad()
def mean_token_entropy(model: GPT, tokens: torch.Tensor, mask: torch.Tensor) -> float:
    logits = model.run(tokens[:, :-1]).logits
    entropy = token_entropy(logits)
    return float((entropy * mask).sum() / mask.sum().clamp_min(1.0))


@torch.no_grad()
def sequence_logprob_sum(model: GPT, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    logp, _ = sequence_logprobs(model, tokens, torch.cat([torch.zeros(len(tokens), 1), mask], 1))
    return logp.sum(-1)
