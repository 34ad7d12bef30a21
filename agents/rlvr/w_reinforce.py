"""PSR, NSR and W-REINFORCE (Zhu et al. 2025, "The surprising effectiveness of negative
reinforcement", arXiv 2506.01347): advantage = R ∈ {±1} per token, no baseline;
loss = λ_pos·L_PSR + λ_neg·L_NSR.

PSR (λ_pos, λ_neg) = (1, 0) trains only on correct samples; NSR (0, 1) only on incorrect ones;
W-REINFORCE (0.1, 1) down-weights positives. They reuse ResRL's PPO-clip / token-mean loss and
mini-batching [recon], so only the per-token advantage differs from the other learners.
"""

from __future__ import annotations

from typing import Any

import torch

from papergym.agents.rlvr._common import PAPER_RESRL, LearnerConfig, PolicyGradientLearner


class WReinforceConfig(LearnerConfig):
    positive_weight: float = 0.1  # λ_pos
    negative_weight: float = 1.0  # λ_neg


class WReinforce(PolicyGradientLearner):
    """W-REINFORCE: Ã_it = λ_pos·R_i if R_i > 0 else λ_neg·R_i (R ∈ {+1, −1})."""

    id = "w_reinforce"
    role = "baseline"
    paper = PAPER_RESRL
    Config = WReinforceConfig

    def token_advantages(self, batch: Any, old_logp: torch.Tensor, hidden: Any, seed: int,
                         step: int) -> torch.Tensor:
        r = batch.rewards
        weight = torch.where(r > 0, torch.tensor(self.config.positive_weight),
                             torch.tensor(self.config.negative_weight))
        return (weight * r)[:, None] * batch.mask


class PSRConfig(WReinforceConfig):
    positive_weight: float = 1.0
    negative_weight: float = 0.0


class PSR(WReinforce):
    """Positive sample reinforcement: only correct samples (λ_pos, λ_neg) = (1, 0)."""

    id = "psr"
    Config = PSRConfig


class NSRConfig(WReinforceConfig):
    positive_weight: float = 0.0
    negative_weight: float = 1.0


class NSR(WReinforce):
    """Negative sample reinforcement: only incorrect samples (λ_pos, λ_neg) = (0, 1)."""

    id = "nsr"
    Config = NSRConfig
