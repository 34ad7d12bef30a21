"""tinylm mixers: the stabilized mLSTM (parallel = recurrent, and against the xlstm package's
reference backend when it is installed), linear attention, the LoLCATs mixer, the window-and-sink
mask, and the linearized GPT (parallel = recurrent decoding; decode state measured against
``state_bytes``; stage 0 exact)."""

from __future__ import annotations

import math

import pytest
import torch

from papergym.tinylm import attention, linearized, mlstm
from papergym.tinylm.gpt import GPT, GPTConfig


def qkv(seed: int, B: int = 2, H: int = 3, T: int = 19, D: int = 8):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(B, H, T, D, generator=g) for _ in range(3)] + [
        torch.randn(B, H, T, generator=g) * 4 for _ in range(2)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mlstm_parallel_equals_recurrent_including_capped_gates(seed):
    q, k, v, i, f = qkv(seed)
    # feature-mapped queries and keys, as the students use them (positive, so the normalizer
    # |Σ_j S_tj| is not a near-cancelling sum of signed terms)
    q, k = torch.softmax(q, -1), torch.softmax(k, -1)
    i[0, 0, 3], i[1, 2, 7], f[0, 1, 4], f[1, 0, 0] = 60.0, -60.0, -60.0, 60.0  # past the soft cap
    i[:, 1, :5] = -30.0  # input gates far below every forget sum: the exp(-m) floor decides
    par = mlstm.parallel(q, k, v, i, f)
    rec, state = mlstm.recurrent(q, k, v, i, f)
    assert torch.isfinite(par).all() and torch.isfinite(rec).all()
    torch.testing.assert_close(par, rec, rtol=1e-5, atol=1e-5)
    assert state.nbytes() == 4 * 2 * 3 * (8 * 8 + 8 + 1)


def test_mlstm_matches_the_xlstm_reference_backend():
    backends = pytest.importorskip("xlstm.blocks.mlstm.backends")
    q, k, v, i, f = qkv(5)
    i = i.abs()  # with i >= 0 the library's parallel row max equals our m_t (its m_0 is implicit)
    ic, fc = mlstm.soft_cap(i), mlstm.soft_cap(f)
    scale = math.sqrt(q.shape[-1])  # the library divides k by sqrt(D)
    ours = mlstm.parallel(q, k / scale, v, i, f)
    ref = backends.parallel_stabilized_simple(q, k, v, ic[..., None], fc[..., None])
    torch.testing.assert_close(ours, ref, rtol=1e-5, atol=1e-5)
    B, H, T, D = q.shape
    C, n, m = torch.zeros(B, H, D, D), torch.zeros(B, H, D, 1), torch.zeros(B, H, 1, 1)
    state = mlstm.MLSTMState.zeros(B, H, D, D)
    for t in range(T):
        h_ref, (C, n, m) = backends.recurrent_step_stabilized_simple(
            C, n, m, q[:, :, t: t + 1].clone(), k[:, :, t: t + 1].clone(), v[:, :, t: t + 1].clone(),
            ic[:, :, t, None, None], fc[:, :, t, None, None])
        h, state = mlstm.step(state, q[:, :, t], k[:, :, t] / scale, v[:, :, t], i[:, :, t], f[:, :, t])
        torch.testing.assert_close(h, h_ref.reshape(h.shape), rtol=1e-5, atol=1e-5)


def test_mlstm_matches_the_xlstm_reference_recurrence_with_signed_gates():
    # the library's recurrent step starts from m_0 = 0, as ours does, so input gates of either sign
    # (and past the soft cap) must give the same outputs; our parallel form must match it too
    backends = pytest.importorskip("xlstm.blocks.mlstm.backends")
    q, k, v, i, f = qkv(7, T=23)
    q, k = torch.softmax(q, -1), torch.softmax(k, -1)  # feature-mapped, as the students use them
    i[0, 0, 2], i[1, 1, 9], f[0, 2, 5] = -50.0, 40.0, -40.0
    ic, fc = mlstm.soft_cap(i), mlstm.soft_cap(f)
    B, H, T, D = q.shape
    scale = math.sqrt(D)
    C, n, m = torch.zeros(B, H, D, D), torch.zeros(B, H, D, 1), torch.zeros(B, H, 1, 1)
    ref = []
    for t in range(T):
        h, (C, n, m) = backends.recurrent_step_stabilized_simple(
            C, n, m, q[:, :, t: t + 1].clone(), k[:, :, t: t + 1].clone(), v[:, :, t: t + 1].clone(),
            ic[:, :, t, None, None], fc[:, :, t, None, None])
        ref.append(h.reshape(B, H, D))
    ref = torch.stack(ref, dim=2)
    rec, state = mlstm.recurrent(q, k / scale, v, i, f)
    torch.testing.assert_close(rec, ref, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(state.m, m.reshape(B, H), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(mlstm.parallel(q, k / scale, v, i, f), ref, rtol=1e-5, atol=1e-5)


def test_linear_attention_parallel_equals_recurrent():
    q, k, v, _, _ = qkv(3)
    fq, fk = attention.EluMap()(q), attention.EluMap()(k)
    rec, _ = attention.linear_attention_recurrent(fq, fk, v)
    torch.testing.assert_close(attention.linear_attention(fq, fk, v), rec, rtol=1e-5, atol=1e-5)


def test_window_sink_mask_equals_explicit_loops_and_weights_vanish_elsewhere():
    T, w, s = 13, 4, 2
    mask = attention.window_sink_mask(T, w, s)
    for t in range(T):
        for j in range(T):
            assert bool(mask[t, j]) == (j <= t and (t - j < w or j < s))
    q, k, v, _, _ = qkv(4, T=T)
    weights = torch.softmax(((q @ k.transpose(-2, -1)) / math.sqrt(8)).masked_fill(~mask, float("-inf")), -1)
    assert (weights[..., ~mask] == 0).all()
    assert torch.allclose(weights.sum(-1), torch.ones(()))


def test_lolcats_mixer_equals_a_loop_over_positions():
    q, k, v, _, _ = qkv(6, T=11)
    hh = attention.HedgehogMap(3, 8)
    fq, fk = hh(q), hh(k)
    gamma, w = torch.tensor([0.5, 1.0, 2.0]), 3
    out = attention.window_linear_attention(q, k, v, fq, fk, gamma, w)
    for t in range(11):
        num, den = torch.zeros(2, 3, 8), torch.zeros(2, 3)
        # LoLCATs: the window's scores shifted by their maximum, the linear terms not
        m = torch.stack([(q[:, :, t] * k[:, :, j]).sum(-1) / math.sqrt(8)
                         for j in range(max(0, t - w + 1), t + 1)]).amax(0)
        for j in range(t + 1):
            if t - j < w:
                a = torch.exp((q[:, :, t] * k[:, :, j]).sum(-1) / math.sqrt(8) - m)
            else:
                a = gamma * (fq[:, :, t] * fk[:, :, j]).sum(-1)
            num, den = num + a[..., None] * v[:, :, j], den + a
        torch.testing.assert_close(out[:, :, t], num / den[..., None], rtol=1e-4, atol=1e-5)


@pytest.fixture(scope="module")
def teacher():
    cfg = GPTConfig(vocab_size=20, d_model=32, n_layer=2, n_head=2, ctx=40)
    return cfg, GPT(cfg, generator=torch.Generator().manual_seed(3))


@pytest.mark.parametrize("kind", linearized.KINDS)
def test_decode_equals_parallel_and_state_bytes_are_measured(teacher, kind):
    cfg, model = teacher
    student = linearized.LinearizedGPT.from_teacher(model.state_dict(), cfg,
                                                    linearized.MixerConfig(kind=kind, window=5, sinks=2))
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in student.new_parameters():  # move off the initialization so every path matters
            p.add_(torch.randn(p.shape, generator=g) * 0.3)
    tokens = torch.randint(0, 20, (1, 30), generator=g)
    sizes = []
    for n in (3, 12, 30):
        with torch.no_grad():
            logits, states = student.decode(tokens[:, :n])
            torch.testing.assert_close(logits, student(tokens[:, :n]), rtol=1e-4, atol=1e-5)
        measured = sum(s.nbytes() for s in states)
        assert measured == student.state_bytes(n), (kind, n)
        sizes.append(measured)
    if kind == "softmax":  # the KV cache grows linearly
        assert sizes[2] - sizes[1] == (30 - 12) * 2 * 2 * 32 * 4
    else:  # constant once the window is full
        assert sizes[1] == sizes[2] == student.state_bytes(2048)


def test_stage0_is_exact_with_the_gate_closed_and_a_full_window(teacher):
    cfg, model = teacher
    student = linearized.LinearizedGPT.from_teacher(model.state_dict(), cfg,
                                                    linearized.MixerConfig(kind="hybrid", window=cfg.ctx))
    student.set_gate(0.0)
    tokens = torch.randint(0, 20, (3, 40), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        torch.testing.assert_close(student(tokens), model(tokens), rtol=1e-5, atol=1e-5)
        student.set_gate(None)  # the learned gate (0.5 at init) mixes in the mLSTM: no longer equal
        assert (student(tokens) - model(tokens)).abs().max() > 1e-3


def test_bad_mixer_configs_raise():
    with pytest.raises(ValueError, match="kind"):
        linearized.MixerConfig(kind="mamba")
    with pytest.raises(ValueError, match="window"):
        linearized.MixerConfig(window=0)
