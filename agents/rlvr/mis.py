"""Sequence-level masked importance sampling (MIS): trajectories whose weight
w_i = exp(clamp(Σ_t log π_θ − log μ, ±20)) lies outside [1/8, 8] get zero loss [recon band];
the rest keep the GRPO advantage. One optimizer step per rollout batch.
"""

from __future__ import annotations

from typing import Any

import torch

from papergym.agents.rlvr._common import (
    PAPER_VCPO,
    LearnerConfig,
    PolicyGradientLearner,
    group_advantages,
    sequence_log_ratio,
)


class MISConfig(LearnerConfig):
    mini_batches: int = 1
    warmup_steps: int = 1
    band: float = 8.0


class MIS(PolicyGradientLearner):
    id = "mis"
    role = "baseline"
    paper = PAPER_VCPO
    Config = MISConfig

    def token_advantages(self, batch: Any, old_logp: torch.Tensor, hidden: Any, seed: int,
                         step: int) -> torch.Tensor:
        log_w = sequence_log_ratio(old_logp, batch.behaviour_logprobs, batch.mask)
        bound = torch.log(torch.tensor(self.config.band))
        keep = ((log_w >= -bound) & (log_w <= bound)).float()
        return (group_advantages(batch.rewards, batch.groups) * keep)[:, None] * batch.mask
