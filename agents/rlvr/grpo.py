"""GRPO (Shao et al. 2024): group-normalized advantages with the PPO-clip token-mean loss.

Â_i = (R_i − mean_g R)/(std_g R + 1e-6), broadcast to every response token. The common
reference of ResRL and VCPO. ``old_logprobs="recompute"`` at lag k > 0 is GRPO-naive (stale
samples treated as on-policy: ratio against the current θ); ``"behaviour"`` is PPO-behaviour
(token ratio π_θ/μ against the behaviour policy, clipped at 0.2). No KL, no entropy bonus.
"""

from __future__ import annotations

from typing import Any

import torch

from papergym.agents.rlvr._common import PAPER_RESRL, PolicyGradientLearner, group_advantages


class GRPO(PolicyGradientLearner):
    """GRPO with PPO-clip (ε = 0.2, dual clip 3), token-mean aggregation."""

    id = "grpo"
    role = "baseline"
    paper = PAPER_RESRL

    def token_advantages(self, batch: Any, old_logp: torch.Tensor, hidden: Any, seed: int,
                         step: int) -> torch.Tensor:
        advantages = group_advantages(batch.rewards, batch.groups)
        return advantages[:, None] * batch.mask
