"""papergym.ppo against independent computations: Monte-Carlo returns, TD errors, explicit
per-group loops, stable-baselines3's VecNormalize, an exact categorical KL and torch's Gaussian
KL."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch

from papergym.ppo import (
    PPOConfig,
    ReturnScaler,
    adaptive_lr,
    clipped_surrogate,
    clipped_value_loss,
    diag_gaussian_kl,
    gae,
    group_advantages,
    kl_k3,
    torch_threads,
)


def test_gae_lambda_one_is_the_discounted_return_minus_the_value():
    rng = np.random.default_rng(0)
    t, n, gamma = 7, 3, 0.9
    r, v, last = rng.normal(size=(t, n)), rng.normal(size=(t, n)), rng.normal(size=n)
    adv, ret = gae(r, v, np.zeros((t, n)), last, gamma, 1.0)
    mc = np.array([[sum(gamma ** (k - s) * r[k, i] for k in range(s, t)) + gamma ** (t - s) * last[i]
                    for i in range(n)] for s in range(t)])
    np.testing.assert_allclose(ret, mc, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(adv, mc - v, rtol=1e-5, atol=1e-5)


def test_gae_lambda_zero_is_the_td_error_and_dones_cut_the_bootstrap():
    r = np.array([[1.0], [2.0], [3.0]])
    v = np.array([[0.5], [0.25], [4.0]])
    done = np.array([[0.0], [1.0], [0.0]])
    adv, _ = gae(r, v, done, np.array([10.0]), 0.5, 0.0)
    np.testing.assert_allclose(adv[:, 0], [1 + 0.5 * 0.25 - 0.5, 2 - 0.25, 3 + 0.5 * 10 - 4])
    # a time limit at step 1: gamma * V(s_final) is added to that step's reward
    adv_t, _ = gae(r, v, done, np.array([10.0]), 0.5, 0.0, timeout_values=np.array([[0], [8.0], [0]]))
    assert adv_t[1, 0] == pytest.approx(2 + 0.5 * 8 - 0.25)


@pytest.mark.parametrize("unbiased", [True, False])
def test_group_advantages_match_a_loop_over_groups(unbiased):
    gen = torch.Generator().manual_seed(1)
    rewards = torch.randint(0, 3, (24,), generator=gen).float()
    groups = torch.tensor([7, 3, 3, 9, 7, 9] * 4)
    out = group_advantages(rewards, groups, unbiased=unbiased)
    for g in groups.unique():
        sel = groups == g
        r = rewards[sel]
        expect = (r - r.mean()) / (r.std(unbiased=unbiased) + 1e-6)
        torch.testing.assert_close(out[sel], expect)
    ties = group_advantages(torch.ones(4), torch.tensor([0, 0, 1, 1]))
    assert torch.equal(ties, torch.zeros(4))
    assert group_advantages(torch.tensor([5.0]), torch.tensor([0])).item() == 0.0


def test_clipped_surrogate_stops_the_gradient_outside_the_trust_region():
    old = torch.zeros(4)
    logp = torch.log(torch.tensor([1.0, 1.5, 0.5, 0.5])).requires_grad_()
    adv = torch.tensor([2.0, 1.0, -1.0, 1.0])
    loss = clipped_surrogate(logp, old, adv, clip_low=0.2)
    # ratio 1 -> -A; 1.5 with A > 0 -> clipped at 1.2; 0.5 with A < 0 -> clipped at 0.8;
    # 0.5 with A > 0 -> unclipped (pessimistic bound)
    assert loss.item() == pytest.approx((-2 - 1.2 + 0.8 - 0.5) / 4)
    loss.backward()
    grad = logp.grad
    assert grad[1] == 0 and grad[2] == 0 and grad[0] != 0 and grad[3] != 0
    # dual clip caps the loss of a huge ratio with A < 0 at -A c
    big = clipped_surrogate(torch.tensor([3.0]), torch.zeros(1), torch.tensor([-1.0]), dual_clip=3.0)
    assert big.item() == pytest.approx(3.0)
    # the token mask averages over masked entries only
    masked = clipped_surrogate(torch.zeros(2, 2), torch.zeros(2, 2), torch.tensor([[1.0, 5.0], [3.0, 5.0]]),
                               mask=torch.tensor([[1.0, 0.0], [1.0, 0.0]]))
    assert masked.item() == pytest.approx(-2.0)


def test_clipped_value_loss():
    v, old, ret = torch.tensor([3.0, 0.0]), torch.tensor([0.0, 0.0]), torch.tensor([3.0, 1.0])
    assert clipped_value_loss(v, old, ret).item() == pytest.approx(0.25)
    # clipped around the old value: V_clip = 0.5, (0.5 - 3)^2 dominates for the first entry
    assert clipped_value_loss(v, old, ret, clip=0.5).item() == pytest.approx(0.5 * (6.25 + 1) / 2)


def test_kl_k3_is_unbiased_for_a_categorical():
    p = torch.tensor([0.5, 0.3, 0.2])
    q = torch.tensor([0.2, 0.3, 0.5])
    exact = (p * (p / q).log()).sum()
    estimate = (p * kl_k3(p.log(), q.log())).sum()  # expectation under p, computed exactly
    assert estimate.item() == pytest.approx(exact.item(), rel=1e-6)
    assert (kl_k3(torch.randn(100), torch.randn(100)) >= 0).all()


def test_return_scaler_matches_stable_baselines3_vecnormalize():
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    rewards = np.random.default_rng(3).normal(2.0, 3.0, size=40)
    dones = np.zeros(40, bool)
    dones[[9, 25]] = True

    class Replay(gym.Env):
        observation_space = gym.spaces.Box(-1, 1, (1,))
        action_space = gym.spaces.Discrete(1)
        t = 0

        def reset(self, *, seed=None, options=None):
            return np.zeros(1, np.float32), {}

        def step(self, action):
            r, d = rewards[Replay.t], dones[Replay.t]
            Replay.t += 1
            return np.zeros(1, np.float32), float(r), bool(d), False, {}

    venv = VecNormalize(DummyVecEnv([Replay]), norm_obs=False, gamma=0.9, clip_reward=1e9)
    venv.reset()
    scaler = ReturnScaler(1, gamma=0.9)
    for t in range(40):
        _, expect, _, _ = venv.step(np.zeros(1, int))
        got = scaler.scale(rewards[t:t + 1], dones[t:t + 1])
        assert got[0] == pytest.approx(float(expect[0]), rel=1e-5)


def test_ppo_config_is_a_strict_agent_config():
    cfg = PPOConfig(n_envs=4)
    assert cfg.clip == 0.2 and cfg.n_envs == 4
    with pytest.raises(ValueError):
        PPOConfig(clipp=0.1)


def test_diag_gaussian_kl_is_torchs_exact_kl():
    g = torch.Generator().manual_seed(0)
    m0, m1 = torch.randn(5, 3, generator=g), torch.randn(5, 3, generator=g)
    s0, s1 = 0.3 * torch.randn(3, generator=g), 0.3 * torch.randn(3, generator=g)
    expect = torch.distributions.kl_divergence(torch.distributions.Normal(m0, s0.exp()),
                                               torch.distributions.Normal(m1, s1.exp()))
    torch.testing.assert_close(diag_gaussian_kl(m0, s0, m1, s1), expect)
    assert float(diag_gaussian_kl(m0, s0, m0, s0).abs().max()) < 1e-6


def test_adaptive_lr_follows_rsl_rl():
    """rsl_rl's rule at desired KL 0.01: / 1.5 above 0.02, x 1.5 below 0.005, within bounds."""
    assert adaptive_lr(1e-3, 0.03, 0.01) == pytest.approx(1e-3 / 1.5)
    assert adaptive_lr(1e-3, 0.004, 0.01) == pytest.approx(1.5e-3)
    assert adaptive_lr(1e-3, 0.01, 0.01) == 1e-3  # inside [0.005, 0.02]: unchanged
    assert adaptive_lr(1e-3, 0.0, 0.01) == 1e-3  # no movement measured: unchanged (rsl_rl)
    assert adaptive_lr(1e-2, 0.001, 0.01) == 1e-2 and adaptive_lr(1e-5, 1.0, 0.01) == 1e-5


def test_torch_threads_sets_and_restores():
    before = torch.get_num_threads()
    with torch_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with torch_threads(None):
        assert torch.get_num_threads() == before
