"""The lolcats mixer in LoLCATs' own parametrization (HazyResearch/lolcats,
``hybrid_attention_quadratic`` with ``LolcatsSlidingWindowAttention``'s factors): the window's
max-shifted softmax weights times σ(w), w per head and initialized to logit(0.1), plus the linear
branch's φq·φk at weight 1, in one normalizer."""

from __future__ import annotations

import math

import torch

from papergym.tinylm.gpt import GPTConfig
from papergym.tinylm.linearized import LOLCATS_WINDOW_FACTOR, LinearizedGPT, MixerAttention, MixerConfig


def published_form(q, k, v, fq, fk, window_factor, window):
    """Literal transcription: a_sm = σ(w)·exp(s − max s) in the window, a_ln = φq·φk beyond it,
    y = (a_sm + a_ln) v / Σ (a_sm + a_ln)."""
    length = q.shape[-2]
    t, j = torch.arange(length)[:, None], torch.arange(length)[None, :]
    near, far = (j <= t) & (t - j < window), t - j >= window
    scores = ((q @ k.transpose(-2, -1)) / math.sqrt(q.shape[-1])).masked_fill(~near, float("-inf"))
    shifted = torch.exp(scores - scores.amax(-1, keepdim=True))
    a_sm = torch.sigmoid(window_factor)[None, :, None, None] * shifted
    a_ln = (fq @ fk.transpose(-2, -1)).masked_fill(~far, 0.0)
    return ((a_sm + a_ln) @ v) / (a_sm + a_ln).sum(-1, keepdim=True)


def test_lolcats_mixer_is_the_published_window_factor_form():
    torch.manual_seed(0)
    mixer = MixerAttention(24, 3, MixerConfig(kind="lolcats", window=4))
    # the published init: σ(w) = 0.1
    torch.testing.assert_close(torch.sigmoid(mixer.window_factor), torch.full((3,), 0.1))
    with torch.no_grad():
        mixer.window_factor.copy_(torch.tensor([LOLCATS_WINDOW_FACTOR, 0.0, 1.5]))
    x = torch.randn(2, 13, 24)
    q, k, v = mixer._heads(x)
    expected = published_form(q, k, v, mixer.phi_q(q), mixer.phi_k(k), mixer.window_factor, 4)
    expected = mixer.proj(expected.transpose(1, 2).reshape(x.shape))
    torch.testing.assert_close(mixer(x), expected, rtol=1e-5, atol=1e-6)


def test_lolcats_decoding_matches_the_parallel_form_at_the_published_init():
    torch.manual_seed(1)
    cfg = GPTConfig(vocab_size=20, d_model=24, n_layer=2, n_head=3, ctx=30)
    model = LinearizedGPT(cfg, MixerConfig(kind="lolcats", window=5)).eval()
    tokens = torch.randint(0, 20, (2, 17))
    with torch.no_grad():
        torch.testing.assert_close(model.decode(tokens)[0], model(tokens), rtol=1e-4, atol=1e-5)
