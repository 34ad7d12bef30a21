"""ResRL: negative-sample projection residual RL (arXiv 2605.00380; official code
1229095296/ResRL, ``dp_actor.py::_compute_svd_token_weights``).

Per prompt x with G rollouts, R_i ∈ {+1, −1}:
    Â_i  = (R_i − mean_g R)/(std_g R + 1e-6)                      (GRPO advantage)
    Ã_it = 0.1 · Â_i       if y_i positive                         (svd_pos_weight)
    Ã_it = w_it · Â_i      if y_i negative, w ∈ [0.1, 1]
Residual weights of one group (w = 1 if it has no positive, no negative, or |P| < 4):
    h_it = input of the last block at the position predicting token t (detached, fp32)
    P = {LN(h_it): i positive, t valid}, LN without affine; ≤ 4096 rows (seeded subsample)
    μ = mean P; X = P − μ; k = min(r, |P|−1, H); V_k = top-k right singular vectors of X
    negative token: c = LN(h) − μ; d = ‖c − V_k V_kᵀ c‖² / H
    lo, hi = quantile_0.2(d), quantile_0.8(d) over the group's negative tokens
    w = 0.55 if hi − lo < 1e-5 else 0.1 + 0.9 · clip((d − lo)/(hi − lo), 0, 1)
loss = token-mean PPO-clip(ratio, Ã; ε = 0.2, dual clip 3); no KL, no entropy.

Scaled down [recon]: H = 64 (standard tier) so rank 8; G = 8; 8 prompts per batch in 4
mini-batches; positive-reward length scaling off (responses ≤ 16 tokens; flag kept). Exact
``torch.linalg.svd`` replaces ``torch.pca_lowrank(niter=4)``: cheap at this width,
deterministic, and it spans the subspace the randomized routine approximates.
``residual_weights=False`` is the ablation ``resrl-uniform-neg`` (w ≡ 1: positives ×0.1,
negatives uniform).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from papergym.agents.rlvr._common import (
    LR_RANGE,
    PAPER_RESRL,
    LearnerConfig,
    PolicyGradientLearner,
    group_advantages,
)
from papergym.tuning import Choice


class ResRLConfig(LearnerConfig):
    rank: int = 8  # official 64 at Qwen widths; 8 at H = 64
    positive_weight: float = 0.1
    min_weight: float = 0.1
    quantile_low: float = 0.2
    quantile_high: float = 0.8
    max_positive_tokens: int = 4096
    residual_weights: bool = True
    length_scaling: bool = False  # official: positives ×1 at 3500 tokens down to ×0.7 at 4096


def residual_weights(pos_states: torch.Tensor, neg_states: torch.Tensor, rank: int,
                     min_weight: float = 0.1, q_low: float = 0.2, q_high: float = 0.8,
                     max_positive: int = 4096, generator: torch.Generator | None = None
                     ) -> torch.Tensor:
    """Weights in [min_weight, 1] of one group's negative tokens (rows of ``neg_states``)."""
    if neg_states.shape[0] == 0:
        return torch.ones(0)
    if pos_states.shape[0] < 4:
        return torch.ones(neg_states.shape[0])
    width = pos_states.shape[1]
    positives = F.layer_norm(pos_states.float(), (width,))
    if positives.shape[0] > max_positive:
        keep = torch.randperm(positives.shape[0], generator=generator)[:max_positive]
        positives = positives[keep]
    mean = positives.mean(0)
    k = min(rank, positives.shape[0] - 1, width)
    _, _, vh = torch.linalg.svd(positives - mean, full_matrices=False)
    basis = vh[:k]  # (k, H) top right singular vectors
    centred = F.layer_norm(neg_states.float(), (width,)) - mean
    residual = centred - (centred @ basis.T) @ basis
    distance = residual.pow(2).sum(-1) / width
    lo, hi = torch.quantile(distance, q_low), torch.quantile(distance, q_high)
    if float(hi - lo) < 1e-5:
        return torch.full_like(distance, (min_weight + 1.0) / 2)  # 0.55 at min_weight 0.1
    return min_weight + (1.0 - min_weight) * ((distance - lo) / (hi - lo)).clamp(0.0, 1.0)


def resrl_token_advantages(rewards: torch.Tensor, groups: torch.Tensor, mask: torch.Tensor,
                           hidden: torch.Tensor | None, cfg: ResRLConfig,
                           generator: torch.Generator | None = None) -> torch.Tensor:
    advantages = group_advantages(rewards, groups)[:, None] * mask
    weights = torch.ones_like(mask)
    positive = rewards > 0
    weights[positive] = cfg.positive_weight
    if cfg.residual_weights and hidden is not None:
        valid = mask > 0
        for g in groups.unique():
            in_group = groups == g
            pos_rows, neg_rows = in_group & positive, in_group & ~positive
            if not pos_rows.any() or not neg_rows.any():
                continue
            pos_states = hidden[pos_rows][valid[pos_rows]]
            neg_index = valid & neg_rows[:, None]
            w = residual_weights(pos_states, hidden[neg_index], cfg.rank, cfg.min_weight,
                                 cfg.quantile_low, cfg.quantile_high, cfg.max_positive_tokens,
                                 generator)
            weights[neg_index] = w
    return advantages * weights


class ResRL(PolicyGradientLearner):
    """ResRL: positives ×0.1, negatives weighted by their residual off the positive subspace."""

    id = "resrl"
    role = "method"
    paper = PAPER_RESRL
    Config = ResRLConfig
    hidden_layer = -1  # the input of the last block
    # spec: rank in {4, 8, 16}; 2 added below: the official rank-to-width ratio (64 of Qwen3's
    # 2048) at H = 64, and the spec's lowest rank, 4, was chosen on the tuning seed
    search_space = {"lr": LR_RANGE, "rank": Choice((2, 4, 8, 16))}

    def token_advantages(self, batch: Any, old_logp: torch.Tensor, hidden: torch.Tensor | None,
                         seed: int, step: int) -> torch.Tensor:
        state = np.random.SeedSequence([seed, 7, step]).generate_state(1)[0]
        generator = torch.Generator().manual_seed(int(state))
        return resrl_token_advantages(batch.rewards, batch.groups, batch.mask,
                                      hidden, self.config, generator)


class ResRLUniformNegConfig(ResRLConfig):
    residual_weights: bool = False


class ResRLUniformNeg(ResRL):
    """Ablation: positives ×0.1, uniform negatives (w ≡ 1)."""

    id = "resrl-uniform-neg"
    role = "baseline"
    Config = ResRLUniformNegConfig
    search_space = {"lr": LR_RANGE}  # no subspace: the rank does not enter
