"""maskdiff problems: the spec's correctness tests (steps, samplers, metering, env, caching)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env
from scipy import stats

import papergym
from papergym.actions import InvalidAction
from papergym.envs.maskdiff import steps as S
from papergym.envs.maskdiff.denoiser import (
    DenoiserSpec,
    ModelDenoiser,
    OracleDenoiser,
    load_denoiser,
    train_denoiser,
)
from papergym.envs.maskdiff.evaluate import guard, remasker_labels, roc_auc
from papergym.envs.maskdiff.task import MaskedDiffusionTask, run_counted
from papergym.problem import BudgetExceeded
from papergym.tinylm.bidir import with_scalar_head
from papergym.tinylm.synthlang import HMMLanguage

TASK = "papergym/MaskedDiffusionHMM-v0"
ENV = "papergym/MDMRemask-v0"
TINY = {"denoiser_steps": 40}  # a quick denoiser for mechanics (smoke sizes otherwise)


def sticky() -> HMMLanguage:
    return HMMLanguage(initial=np.array([0.5, 0.5]), transition=np.array([[0.9, 0.1], [0.1, 0.9]]),
                       emission=np.array([[0.7, 0.2, 0.1], [0.1, 0.2, 0.7]]), length=4)


def chi_square_p(lang: HMMLanguage, x: np.ndarray) -> float:
    seqs = np.array(np.meshgrid(*[range(3)] * 4, indexing="ij")).reshape(4, -1).T
    p = np.exp(lang.log_prob(seqs))
    codes = (x * 3 ** np.arange(3, -1, -1)).sum(1)
    observed = np.bincount(codes, minlength=81).astype(float)
    expected = p * len(x)
    small = expected < 5  # pool the rare cells into one bin
    obs, exp = observed[~small], expected[~small]
    if small.any():
        obs, exp = np.append(obs, observed[small].sum()), np.append(exp, expected[small].sum())
    return float(stats.chisquare(obs, exp).pvalue)


def test_oracle_mdlm_is_exact_with_many_steps_and_wrong_with_one():
    lang = sticky()
    oracle = OracleDenoiser(lang)
    # 256 steps: two of the 4 positions share a step (and are drawn independently) for ~2% of
    # the samples, a bias far below what 4,000 samples resolve
    many = S.Sampler().sample(oracle, 4_000, 256, 4, 3, torch.Generator().manual_seed(0))
    assert chi_square_p(lang, many.numpy()) > 1e-3
    one = S.Sampler().sample(oracle, 4_000, 1, 4, 3, torch.Generator().manual_seed(1))
    assert chi_square_p(lang, one.numpy()) < 1e-6  # a product of marginals


def test_mdlm_step_reveals_each_mask_with_the_stated_probability():
    x = torch.full((4000, 8), 3)
    x[:, 0] = 1  # revealed positions are copied
    probs = torch.full((4000, 8, 3), 1 / 3)
    out = S.mdlm_step(x, probs, 0.5, 0.2, 3, torch.Generator().manual_seed(0))
    assert torch.all(out[:, 0] == 1)
    rate = float((out[:, 1:] != 3).double().mean())
    expect = (0.5 - 0.2) / 0.5
    assert abs(rate - expect) < 4 * np.sqrt(expect * (1 - expect) / (4000 * 7))


def test_remdm_probabilities_and_eta_zero_is_mdlm():
    for t, s in S.grid(8):
        sigma, reveal = S.remdm_probs(t, s, 0.008)
        assert 0 <= sigma <= 1 and 0 <= reveal <= 1
        a_t, a_s = 1 - S.mask_rate(t), 1 - S.mask_rate(s)
        # marginal of a position's unmasking stays alpha_s: alpha_t (1 - sigma) + (1 - alpha_t) reveal
        assert a_t * (1 - sigma) + (1 - a_t) * reveal == pytest.approx(a_s, abs=1e-12)
    assert S.remdm_probs(1 / 8, 0.0, 0.5)[0] == 0.0  # the last step remasks nothing
    sigma, reveal = S.remdm_probs(0.5, 0.25, 0.5, "rescale")
    assert sigma == pytest.approx(0.5 * (S.mask_rate(0.5) - S.mask_rate(0.25)) / (1 - S.mask_rate(0.5)))
    assert 0 <= reveal <= 1
    probs = torch.softmax(torch.randn(64, 8, 3, generator=torch.Generator().manual_seed(2)), -1)
    x = torch.full((64, 8), 3)
    a = S.remdm_step(x, probs, 0.75, 0.5, 3, torch.Generator().manual_seed(5), eta=0.0)
    b = S.mdlm_step(x, probs, 0.75, 0.5, 3, torch.Generator().manual_seed(5))
    assert torch.equal(a, b)


def test_star_step_keeps_revealed_tokens_and_leaves_exactly_k_masks():
    sampler = S.Sampler(kind="star", scores="random", nucleus=0.9)
    probs_fn = lambda x: torch.full((*x.shape, 3), 1 / 3)  # noqa: E731
    x = torch.full((16, 10), 3)
    x[:, :4] = 2
    prop, _ = S.propose(x, probs_fn(x), torch.Generator().manual_seed(0), 1.0)
    assert torch.all(prop[:, :4] == 2) and torch.all(prop != 3)
    out = sampler.step(x, probs_fn, 0.3, 0.2, 3, torch.Generator().manual_seed(0))
    assert torch.all((out == 3).sum(1) == S.n_remask(0.2, 10))


@pytest.mark.parametrize("kind,scores", [("mdlm", "learned"), ("remdm", "learned"), ("star", "random"),
                                         ("star", "confidence")])
def test_every_sampler_ends_with_no_mask(kind, scores):
    lang = HMMLanguage.random(4, 5, 8, np.random.default_rng(0))
    oracle = OracleDenoiser(lang)
    for T in (1, 2, 5, 8, 16):
        x = S.Sampler(kind=kind, scores=scores, eta=0.05).sample(oracle, 32, T, 8, 5,
                                                                  torch.Generator().manual_seed(T))
        assert x.shape == (32, 8) and int(x.max()) < 5


def test_metering_counts_forward_passes_and_refuses_extra_calls():
    task = MaskedDiffusionTask(tier="smoke", **TINY)
    language, model, _ = task.prepared(0)

    class Greedy(S.Sampler):  # calls the denoiser twice in its last step
        def sample(self, probs_fn, n, T, length, mask_id, generator):
            x = super().sample(probs_fn, n, T, length, mask_id, generator)
            probs_fn(x)
            return x

    with pytest.raises(BudgetExceeded, match="T calls per sequence"):
        run_counted(Greedy(), ModelDenoiser(model), 8, 4, 16, 16, torch.Generator().manual_seed(0))
    gstar = S.Sampler(kind="star", scores="learned", remasker=with_scalar_head(model))
    for T in (4, 8, 16):
        _, passes = run_counted(gstar, ModelDenoiser(model), 8, T, 16, 16, torch.Generator().manual_seed(0))
        n_star = sum(1 for t, s in S.grid(T) if t <= 0.3 and s > 0)
        assert passes == T + n_star == gstar.passes(T)
    assert gstar.passes(16) == 19 and gstar.passes(4) == 4


def test_remasker_labels_and_an_untrained_head_has_auc_one_half():
    task = MaskedDiffusionTask(tier="smoke", **TINY)
    language, model, _ = task.prepared(0)
    x0 = torch.from_numpy(language.sample(64, np.random.default_rng(0)))
    x_hat, y, xt = remasker_labels(x0, ModelDenoiser(model), 16, torch.Generator().manual_seed(0))
    assert torch.all(y[xt != 16] == 0) and torch.all(x_hat != 16)
    assert torch.equal(y.bool(), x_hat != x0)
    with torch.no_grad():
        scores = with_scalar_head(model)(x_hat).numpy().reshape(-1)
    assert roc_auc(scores, y.numpy().reshape(-1)) == 0.5
    assert roc_auc(np.array([0.1, 0.9, 0.5]), np.array([0, 1, 0])) == 1.0


def test_denoiser_training_is_bit_identical_and_the_cache_gives_the_same_samples():
    lang = HMMLanguage.random(4, 5, 8, np.random.default_rng(0))
    a = train_denoiser(lang, DenoiserSpec(steps=15, warmup=2), seed=3)
    b = train_denoiser(lang, DenoiserSpec(steps=15, warmup=2), seed=3)
    assert all(torch.equal(a["state"][k], b["state"][k]) for k in a["state"])
    task = MaskedDiffusionTask(tier="smoke", **TINY)
    language, cached, _ = task.prepared(1)
    fresh = load_denoiser(train_denoiser(language, task.spec, seed=1))
    draw = [S.Sampler().sample(ModelDenoiser(m), 16, 4, 16, 16, torch.Generator().manual_seed(9))
            for m in (cached, fresh)]
    assert torch.equal(draw[0], draw[1])


def test_guard_flags_a_collapsed_sample_set():
    lang = HMMLanguage.random(8, 16, 16, np.random.default_rng(0))
    exact = lang.sample(128, np.random.default_rng(1))
    assert guard(lang.sample(128, np.random.default_rng(2)), lang, exact)["flag"] == 0.0
    collapsed = np.repeat(exact[:4], 32, axis=0)
    g = guard(collapsed, lang, exact)
    assert g["flag"] == 1.0 and g["dup"] > 0.9


def test_task_scores_and_refuses_bad_artifacts():
    task = papergym.make_task(TASK, tier="smoke", **TINY)
    with pytest.raises(TypeError, match="Sampler"):
        task.evaluate(lambda x: x, 0)
    with pytest.raises(PermissionError):
        task.evaluate(S.Sampler(kind="exact"), 0)
    with pytest.raises(ValueError, match="nucleus"):
        task.evaluate(S.Sampler(nucleus=1.5), 0)
    with pytest.raises(TypeError, match="remasker"):
        task.evaluate(S.Sampler(kind="star", scores="learned"), 0)
    m = task.evaluate(S.Sampler(), 0).metrics
    assert m["passes_T4"] == 4 and m["passes_T8"] == 8
    assert m["gap_T8"] == pytest.approx(m["nll_T8"] - m["h_rate"])
    view = task.train_view(0, task.budget)
    assert not hasattr(view, "language") and view.sample_data(3).shape == (3, 16)
    with pytest.raises(ValueError, match="decision step"):
        papergym.make(ENV, T=4)


# ----------------------------------------------------------------------------- env


def env_rollout(env, seed, policy):
    obs, _ = env.reset(seed=seed)
    trace = [obs["proposal"].copy()]
    while True:
        obs, reward, terminated, truncated, info = env.step(policy(obs))
        trace.append(obs["proposal"].copy())
        if terminated:
            return np.array(trace), reward, info


def conf_policy(obs):
    return -obs["proposal_prob"]


def independent_log_p(lang, x):
    """Scaled forward recursion in probability space (no logs, no shared code)."""
    alpha = lang.initial * lang.emission[:, x[0]]
    total = np.log(alpha.sum())
    alpha /= alpha.sum()
    for tok in x[1:]:
        alpha = (alpha @ lang.transition) * lang.emission[:, tok]
        total += np.log(alpha.sum())
        alpha /= alpha.sum()
    return total


def test_env_checks_determinism_and_final_reward():
    env = gym.make(ENV, **TINY).unwrapped
    check_env(env, skip_render_check=True)
    a = env_rollout(env, 3, conf_policy)
    b = env_rollout(env, 3, conf_policy)
    c = env_rollout(env, 4, conf_policy)
    assert np.array_equal(a[0], b[0]) and a[1] == b[1]
    assert not np.array_equal(a[0], c[0])
    x0 = a[2]["x0"]
    assert a[1] == pytest.approx(independent_log_p(env._b.language, x0) / 16, abs=1e-10)


def test_env_remasks_exactly_k_and_rejects_bad_actions():
    env = gym.make(ENV, **TINY).unwrapped
    obs, _ = env.reset(seed=0)
    k = obs["k_remask"]
    with pytest.raises(InvalidAction):
        env.step(np.zeros(5, np.float32))
    with pytest.raises(InvalidAction):
        env.step(np.full(16, np.nan, np.float32))
    obs2, *_ = env.step(np.arange(16, dtype=np.float32))
    assert (obs2["x_t"] == 16).sum() == k
    assert np.all(obs2["x_t"][16 - k:] == 16)  # the K highest scores


def test_env_driven_by_confidence_scores_reproduces_the_star_conf_sampler():
    task = MaskedDiffusionTask(tier="smoke", **TINY)
    _, model, _ = task.prepared(0)
    sampler = S.Sampler(kind="star", scores="confidence", nucleus=0.9)
    x = sampler.sample(ModelDenoiser(model), 1, 8, 16, 16, torch.Generator().manual_seed(11))
    env = gym.make(ENV, **TINY).unwrapped
    _, _, info = env_rollout(env, 11, conf_policy)
    assert np.array_equal(info["x0"], x[0].numpy())
    vec = gym.make_vec(ENV, num_envs=3, vectorization_mode="vector_entry_point", **TINY)
    obs, _ = vec.reset(seed=11)
    done = np.zeros(3, bool)
    while not done.all():
        obs, reward, done, _, info = vec.step(-obs["proposal_prob"])
    batch = sampler.sample(ModelDenoiser(model), 3, 8, 16, 16, torch.Generator().manual_seed(11))
    assert np.array_equal(info["x0"], batch.numpy()) and reward.shape == (3,)
