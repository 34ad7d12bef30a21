"""VCPO: variance-controlled policy optimization for asynchronous RL (arXiv 2602.17616;
official code mit-han-lab/vcpo, ``megatron_actor.py`` and ``staleness_utils.py``).

Per update s on the problem's (possibly stale) batch, groups g of n responses, lengths L_i:
    log w_i = clamp(Σ_t log π_θ(y_t) − log μ(y_t), ±20);  w̃_i = min(w_i, 8), detached  (seq. IS)
    ℓ_i(θ) = −w̃_i · (1/L_i) Σ_t log π_θ(y_t)                (seq-mean-token-mean, advantage 1)
    n_i = ‖∇_θ Σ_t log π_θ(y_t)‖                             (pass 1: tinylm.pergrad, chunks of 32)
    ω_i = w_i² n_i²      (paper; opob_weight="code": w_i² (w̃_i n_i)²)
    b*_g = Σ_{i∈g} ω_i R_i / (Σ_{i∈g} ω_i + 1e-8)            (OPOB: closed-form min-variance baseline)
    c_i = (R_i − b*_g)/σ_g   (σ_g population std; if σ_g ≤ 1e-8: c_i = R_i − b*_g)
    ρ = (Σ_i w_i)² / (|B| Σ_i w_i²)    (unclipped w)        (ESS ratio)
    lr_s = lr · sqrt(min(1, ρ/ρ_base)), ρ_base = 1           ("sqrt" rule; "linear" available)
    pass 2: one backward of (1/|B|) Σ_i c_i ℓ_i; clip grad-norm 1.0; AdamW(lr_s, wd 0.1)
The two passes give exactly Σ_i c_i ∇ℓ_i/|B| without storing per-trajectory gradients.
Official defaults: constant lr, no warmup, wd 0.1, clip 1.0, one optimizer step per batch, PPO
clipping off, no KL/entropy, T = 1, IS cap 8. Scaled: lr 3e-4 (a stress setting at which
staleness matters), 8 prompts × 8. Ablations: ``vcpo-ess-only`` (opob off: c_i = GRPO
advantage) and ``vcpo-opob-only`` (ess_lr off).
"""

from __future__ import annotations

from typing import Any, Literal

import torch

from papergym.agent import Agent
from papergym.agents.rlvr._common import (
    PAPER_VCPO,
    LearnerConfig,
    group_advantages,
    make_optimizer,
    policy_logprobs,
    sequence_log_ratio,
    updates_allowed,
)
from papergym.tinylm.gpt import GPT, sequence_logprobs
from papergym.tinylm.pergrad import per_sample_grad_norms


class VCPOConfig(LearnerConfig):
    lr: float = 3e-4
    warmup_steps: int = 1  # no warmup
    mini_batches: int = 1
    is_cap: float = 8.0
    opob: bool = True
    opob_weight: Literal["paper", "code"] = "paper"
    ess_lr: bool = True
    ess_rule: Literal["sqrt", "linear"] = "sqrt"
    ess_base: float = 1.0
    pergrad_chunk: int = 32


def ess(weights: torch.Tensor) -> float:
    """ρ = (Σ w)² / (|B| Σ w²)."""
    return float(weights.sum() ** 2 / (weights.numel() * weights.pow(2).sum()))


def ess_learning_rate(lr: float, rho: float, base: float = 1.0, rule: str = "sqrt") -> float:
    scale = min(1.0, rho / base)
    return lr * (scale ** 0.5 if rule == "sqrt" else scale)


def opob_baseline(rewards: torch.Tensor, omega: torch.Tensor, groups: torch.Tensor) -> torch.Tensor:
    """b*_g = Σ ω_i R_i / (Σ ω_i + 1e-8), broadcast to the members of each group."""
    baseline = torch.zeros_like(rewards)
    for g in groups.unique():
        idx = groups == g
        baseline[idx] = (omega[idx] * rewards[idx]).sum() / (omega[idx].sum() + 1e-8)
    return baseline


def opob_coefficients(rewards: torch.Tensor, baseline: torch.Tensor, groups: torch.Tensor
                      ) -> torch.Tensor:
    """c_i = (R_i − b*_g)/σ_g with the population std of the group (σ_g ≤ 1e-8: no division)."""
    coef = torch.zeros_like(rewards)
    for g in groups.unique():
        idx = groups == g
        sigma = rewards[idx].std(unbiased=False)
        centred = rewards[idx] - baseline[idx]
        coef[idx] = centred / sigma if float(sigma) > 1e-8 else centred
    return coef


def trajectory_grad_norms(policy: GPT, tokens: torch.Tensor, mask: torch.Tensor,
                          temperature: float, chunk: int) -> torch.Tensor:
    """n_i = ‖∇_θ Σ_t log π_θ(y_t)‖ per trajectory (pass 1)."""

    def summed_logprob(call: Any, row_tokens: torch.Tensor, row_mask: torch.Tensor) -> torch.Tensor:
        logits = call(row_tokens[None, :-1])
        logp = torch.log_softmax(logits.float() / temperature, -1)
        picked = logp.gather(-1, row_tokens[None, 1:, None]).squeeze(-1)
        return (picked * row_mask[None]).sum()

    return per_sample_grad_norms(policy, summed_logprob, (tokens, mask), chunk=chunk)


def vcpo_loss(policy: GPT, tokens: torch.Tensor, mask: torch.Tensor, coef: torch.Tensor,
              truncated_w: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """(1/|B|) Σ_i c_i ℓ_i with ℓ_i = −w̃_i · (1/L_i) Σ_t log π_θ(y_t)."""
    logp, _ = sequence_logprobs(policy, tokens, torch.cat([torch.zeros(len(tokens), 1), mask], 1),
                                temperature)
    lengths = mask.sum(-1).clamp_min(1.0)
    per_trajectory = -truncated_w * logp.sum(-1) / lengths
    return (coef * per_trajectory).sum() / len(tokens)


class VCPO(Agent):
    """VCPO: ESS-scaled step size + closed-form off-policy optimal baseline (OPOB)."""

    id = "vcpo"
    family = "rlvr"
    role = "method"
    paper = PAPER_VCPO
    Config = VCPOConfig

    def solve(self, view: Any, budget: Any, seed: int) -> GPT:
        cfg = self.config
        policy = view.base_policy()
        policy.train()
        optimizer, _ = make_optimizer(policy, cfg)
        stream = view.stream(policy, cfg.prompts_per_batch, cfg.group_size, cfg.temperature,
                             cfg.top_p, lag=cfg.lag)
        for _ in range(updates_allowed(view, cfg)):
            batch = stream.next_batch()
            with torch.no_grad():
                current, _ = policy_logprobs(policy, batch.tokens, batch.mask, cfg.temperature)
            log_w = sequence_log_ratio(current, batch.behaviour_logprobs, batch.mask)
            w = torch.exp(log_w.double())
            truncated = w.clamp_max(cfg.is_cap).float()
            if cfg.opob:
                norms = trajectory_grad_norms(policy, batch.tokens, batch.mask, cfg.temperature,
                                              cfg.pergrad_chunk).double()
                if cfg.opob_weight == "paper":
                    omega = w.pow(2) * norms.pow(2)
                else:
                    omega = w.pow(2) * (truncated.double() * norms).pow(2)
                baseline = opob_baseline(batch.rewards.double(), omega, batch.groups)
                coef = opob_coefficients(batch.rewards.double(), baseline, batch.groups).float()
            else:
                coef = group_advantages(batch.rewards, batch.groups)
            lr = cfg.lr
            if cfg.ess_lr:
                lr = ess_learning_rate(cfg.lr, ess(w), cfg.ess_base, cfg.ess_rule)
            for group in optimizer.param_groups:
                group["lr"] = lr
            loss = vcpo_loss(policy, batch.tokens, batch.mask, coef, truncated, cfg.temperature)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy.parameters(), cfg.grad_clip)
            optimizer.step()
            for group in optimizer.param_groups:
                group["lr"] = cfg.lr
            stream.push_policy(policy)
        return policy.eval()


class VCPOESSOnlyConfig(VCPOConfig):
    opob: bool = False


class VCPOESSOnly(VCPO):
    """Ablation: ESS-scaled step size, GRPO advantage instead of OPOB."""

    id = "vcpo-ess-only"
    role = "baseline"
    Config = VCPOESSOnlyConfig


class VCPOOPOBOnlyConfig(VCPOConfig):
    ess_lr: bool = False


class VCPOOPOBOnly(VCPO):
    """Ablation: OPOB baseline, constant step size."""

    id = "vcpo-opob-only"
    role = "baseline"
    Config = VCPOOPOBOnlyConfig
