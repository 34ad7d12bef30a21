"""Proximal policy optimization, the pieces every family that trains a policy with it shares.

Family-agnostic: no environment, network or rollout format is assumed. What is here is the
arithmetic of the papers, once:

- :func:`gae`: generalized advantage estimation (Schulman et al. 2016, eq. 16), with
  bootstrapping through time limits;
- :func:`group_advantages`: GRPO's group-relative advantage (Shao et al. 2024, eq. 3);
- :func:`clipped_surrogate`: the clipped ratio objective (Schulman et al. 2017, eq. 7), with the
  asymmetric clip range of DAPO and the dual clip of Ye et al. 2020, over a token mask or not;
- :func:`clipped_value_loss`: the value loss with PPO2's clipping around the rollout's values;
- :func:`kl_k3`: the non-negative unbiased KL estimator exp(r) - r - 1 (Schulman 2020, "k3");
- :func:`diag_gaussian_kl` and :func:`adaptive_lr`: the KL-adaptive learning rate of the
  legged-locomotion PPO (rsl_rl, Rudin et al. 2022), which lets few large minibatches learn as
  fast as many small ones;
- :class:`ReturnScaler`: reward scaling by the running standard deviation of the discounted
  return (Engstrom et al. 2020; SB3's ``VecNormalize``);
- :class:`PPOConfig`: the on-policy rollout settings with CleanRL's ``ppo_continuous_action``
  defaults, which an agent's ``Config`` inherits instead of copying the fields.

Running statistics reuse gymnasium's ``RunningMeanStd`` (the parallel-variance update).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import torch
from gymnasium.wrappers.utils import RunningMeanStd

from papergym.agent import AgentConfig

__all__ = ["PPOConfig", "ReturnScaler", "RunningMeanStd", "adaptive_lr", "anneal_lr",
           "clipped_surrogate", "clipped_value_loss", "diag_gaussian_kl", "gae",
           "group_advantages", "kl_k3", "normalize", "set_lr", "torch_threads"]


class PPOConfig(AgentConfig):
    """Rollout PPO settings; defaults are CleanRL's ``ppo_continuous_action.py`` (MuJoCo)."""

    n_envs: int = 1
    n_steps: int = 2048  # environment steps per env per rollout
    epochs: int = 10
    minibatches: int = 32
    lr: float = 3e-4
    anneal_lr: bool = True  # linear to 0 over the run
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip: float = 0.2
    clip_vloss: bool = True
    norm_adv: bool = True
    norm_reward: bool = True  # divide rewards by the running std of the discounted return
    ent_coef: float = 0.0
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    target_kl: float | None = None  # stop a rollout's epochs early above this approx. KL
    # rsl_rl's adaptive schedule: after each minibatch, lr / 1.5 above 2 x desired_kl and
    # x 1.5 below desired_kl / 2 (replaces ``anneal_lr``); None keeps the fixed schedule
    desired_kl: float | None = None


def gae(rewards: np.ndarray, values: np.ndarray, dones: np.ndarray, last_value: np.ndarray,
        gamma: float, lam: float, timeout_values: np.ndarray | None = None,
        ) -> tuple[np.ndarray, np.ndarray]:
    """Advantages and returns of a (T, N) rollout by GAE(lambda).

    ``dones[t]`` marks that the episode ended after step t (the value of the next observation is
    not used); where it ended by a time limit, ``timeout_values[t]`` is the value of the final
    observation, added as gamma * V(s_T) to the reward so the cut is not read as a terminal.
    ``last_value`` (N,) is the value of the observation after the rollout's last step.
    Returns (advantages, returns = advantages + values), both (T, N) float32.
    """
    rewards = np.asarray(rewards, np.float64)
    values = np.asarray(values, np.float64)
    dones = np.asarray(dones, np.float64)
    if timeout_values is not None:
        rewards = rewards + gamma * np.asarray(timeout_values, np.float64)
    adv = np.zeros_like(rewards)
    running = np.zeros(rewards.shape[1:])
    for t in reversed(range(rewards.shape[0])):
        next_value = np.asarray(last_value, np.float64) if t == rewards.shape[0] - 1 else values[t + 1]
        live = 1.0 - dones[t]
        delta = rewards[t] + gamma * next_value * live - values[t]  # TD error, eq. 11
        running = delta + gamma * lam * live * running  # eq. 16
        adv[t] = running
    return adv.astype(np.float32), (adv + values).astype(np.float32)


def group_advantages(rewards: torch.Tensor, groups: torch.Tensor, eps: float = 1e-6,
                     unbiased: bool = True) -> torch.Tensor:
    """GRPO: A_i = (R_i - mean_g R) / (std_g R + eps) within each group g of responses to one
    prompt. ``unbiased`` picks the n - 1 standard deviation (torch.std, verl) over the n one
    (numpy's default); a group of one has std 0. A group whose rewards tie gets all zeros."""
    rewards = torch.as_tensor(rewards, dtype=torch.float32)
    _, index = torch.unique(torch.as_tensor(groups), return_inverse=True)
    k = int(index.max()) + 1 if index.numel() else 0
    count = torch.zeros(k).index_add_(0, index, torch.ones_like(rewards))
    mean = torch.zeros(k).index_add_(0, index, rewards) / count
    centred = rewards - mean[index]
    sq = torch.zeros(k).index_add_(0, index, centred ** 2)
    dof = (count - 1).clamp_min(1) if unbiased else count
    std = torch.where(count > 1, (sq / dof).sqrt(), torch.zeros(k))
    return centred / (std[index] + eps)


def clipped_surrogate(logp: torch.Tensor, old_logp: torch.Tensor, advantages: torch.Tensor,
                      clip_low: float = 0.2, clip_high: float | None = None,
                      dual_clip: float | None = None, mask: torch.Tensor | None = None,
                      ) -> torch.Tensor:
    """The PPO-clip loss to minimize: mean of max(-A r, -A clip(r, 1 - eps_low, 1 + eps_high)),
    r = exp(logp - old_logp) (log-ratio clamped to +-20 against overflow). ``dual_clip`` c caps
    the loss at -A c where A < 0. With ``mask`` the mean is over masked entries (token-mean)."""
    clip_high = clip_low if clip_high is None else clip_high
    ratio = torch.exp((logp - old_logp).clamp(-20.0, 20.0))
    loss = torch.maximum(-advantages * ratio,
                         -advantages * ratio.clamp(1.0 - clip_low, 1.0 + clip_high))
    if dual_clip is not None:
        loss = torch.where(advantages < 0, torch.minimum(loss, -advantages * dual_clip), loss)
    if mask is None:
        return loss.mean()
    return (loss * mask).sum() / mask.sum().clamp_min(1.0)


def clipped_value_loss(values: torch.Tensor, old_values: torch.Tensor, returns: torch.Tensor,
                       clip: float | None = None) -> torch.Tensor:
    """0.5 (V - R)^2, or with ``clip`` PPO2's 0.5 max((V - R)^2, (V_old + clip(V - V_old) - R)^2)."""
    loss = (values - returns) ** 2
    if clip is not None:
        clipped = old_values + (values - old_values).clamp(-clip, clip)
        loss = torch.maximum(loss, (clipped - returns) ** 2)
    return 0.5 * loss.mean()


def kl_k3(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """Per-sample estimate of KL(pi || ref) from samples of pi: exp(d) - d - 1, d = ref - logp."""
    d = ref_logp - logp
    return torch.exp(d) - d - 1.0


def normalize(x: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """(x - mean) / (std + eps): the per-minibatch advantage normalization of PPO codebases."""
    return (x - x.mean()) / (x.std() + eps) if x.numel() > 1 else x - x.mean()


def diag_gaussian_kl(mean_old: torch.Tensor, log_std_old: torch.Tensor, mean: torch.Tensor,
                     log_std: torch.Tensor) -> torch.Tensor:
    """KL(N(mean_old, std_old) || N(mean, std)) per dimension of diagonal Gaussians (exact):
    log(std / std_old) + (std_old^2 + (mean_old - mean)^2) / (2 std^2) - 1/2."""
    var = torch.exp(2 * log_std)
    return (log_std - log_std_old + (torch.exp(2 * log_std_old) + (mean_old - mean) ** 2)
            / (2 * var) - 0.5)


def adaptive_lr(lr: float, kl: float, desired_kl: float, factor: float = 1.5,
                lr_min: float = 1e-5, lr_max: float = 1e-2) -> float:
    """rsl_rl's KL-adaptive step size (Rudin et al. 2022, ``PPO.update``): the next lr is
    lr / factor when the policy moved more than 2 x ``desired_kl`` on the last minibatch,
    lr x factor when it moved less than half of it, else lr; kept in [lr_min, lr_max]."""
    if kl > 2.0 * desired_kl:
        return max(lr_min, lr / factor)
    if 0.0 < kl < 0.5 * desired_kl:
        return min(lr_max, lr * factor)
    return lr


def set_lr(optimizer: torch.optim.Optimizer, lr: float) -> None:
    """The same learning rate on every parameter group."""
    for group in optimizer.param_groups:
        group["lr"] = lr


def anneal_lr(optimizer: torch.optim.Optimizer, lr: float, fraction_done: float) -> None:
    """Linear learning-rate annealing: lr * (1 - fraction_done) on every parameter group."""
    for group in optimizer.param_groups:
        group["lr"] = lr * max(0.0, 1.0 - fraction_done)


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run the block with ``n`` intra-op torch threads (None: leave torch's setting), restored
    after. At PPO's sizes on CPU one thread per training is fastest per core: the matmuls are
    too small to split, and the runner already puts one trial on each core."""
    if n is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class ReturnScaler:
    """Scale rewards by the running std of the discounted return of each parallel env.

    ``scale(rewards, dones)`` takes the (N,) rewards of one step and whether each env's episode
    ended at it; the return accumulator of an ended episode restarts at 0. The statistics are
    updated at every step, as stable-baselines3's ``VecNormalize`` and CleanRL do.
    """

    def __init__(self, n_envs: int, gamma: float, eps: float = 1e-8) -> None:
        self.gamma, self.eps = gamma, eps
        self.returns = np.zeros(n_envs)
        self.stats = RunningMeanStd(shape=())

    def scale(self, rewards: np.ndarray, dones: np.ndarray) -> np.ndarray:
        rewards = np.asarray(rewards, np.float64)
        self.returns = self.returns * self.gamma + rewards
        self.stats.update(self.returns)
        self.returns = np.where(np.asarray(dones, bool), 0.0, self.returns)
        return (rewards / np.sqrt(self.stats.var + self.eps)).astype(np.float32)
