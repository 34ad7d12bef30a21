"""Sequence-level truncated importance sampling (TIS) for stale rollouts.

Â_i (GRPO) × min(w_i, 8), detached, with log w_i = clamp(Σ_t log π_θ − log μ, ±20) against the
behaviour log-probs the problem served; one optimizer step per rollout batch (as VCPO).
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


class TISConfig(LearnerConfig):
    mini_batches: int = 1
    warmup_steps: int = 1
    is_cap: float = 8.0


class TIS(PolicyGradientLearner):
    id = "tis"
    role = "baseline"
    paper = PAPER_VCPO
    Config = TISConfig

    def token_advantages(self, batch: Any, old_logp: torch.Tensor, hidden: Any, seed: int,
                         step: int) -> torch.Tensor:
        log_w = sequence_log_ratio(old_logp, batch.behaviour_logprobs, batch.mask)
        truncated = torch.exp(log_w).clamp_max(self.config.is_cap)
        return (group_advantages(batch.rewards, batch.groups) * truncated)[:, None] * batch.mask
