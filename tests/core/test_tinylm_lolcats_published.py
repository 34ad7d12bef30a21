"""LoLCATs' published pieces (HazyResearch/lolcats): the Hedgehog map [softmax(W x), softmax(−W x)]
from a Kaiming-uniform W (``SoftmaxDim`` with ``fullspace: true``, ``untied_head_einsum``), the
attention-transfer pair (the mixer's per-head output against softmax attention's on the same
q, k, v), and rank-r adapters on the fused q/k/v and output projections that start at the base
model, train alone and merge back exactly."""

from __future__ import annotations

import math

import torch

from papergym.tinylm import attention
from papergym.tinylm.gpt import GPTConfig
from papergym.tinylm.linearized import LinearizedGPT, MixerConfig
from papergym.tinylm.lora import LoRALinear, add_lora, merge_lora

PUBLISHED = {"kind": "lolcats", "hedgehog_fullspace": True, "hedgehog_init": "kaiming"}


def test_fullspace_hedgehog_map_is_softmax_of_plus_and_minus_w_x():
    torch.manual_seed(0)
    phi = attention.HedgehogMap(3, 8, fullspace=True, init="kaiming")
    bound = math.sqrt(6 / (8 * 8))  # Kaiming-uniform, fan_in D·F as LoLCATs' (H, D, F) tensor
    assert phi.weight.abs().max() <= bound and phi.weight.abs().max() > 0.8 * bound
    x = torch.randn(2, 3, 5, 8)
    z = torch.einsum("bhtd,hed->bhte", x, phi.weight)
    out = phi(x)
    assert out.shape == (2, 3, 5, 16) and phi.features == 16
    torch.testing.assert_close(out, torch.cat([z.softmax(-1), (-z).softmax(-1)], -1))
    torch.testing.assert_close(out.sum(-1), torch.full((2, 3, 5), 2.0))
    # the default map is unchanged: softmax(W x) from the identity
    plain = attention.HedgehogMap(3, 8)
    torch.testing.assert_close(plain(x), x.softmax(-1))


def test_published_lolcats_decodes_like_its_parallel_form_and_measures_its_state():
    torch.manual_seed(1)
    cfg = GPTConfig(vocab_size=20, d_model=24, n_layer=2, n_head=3, ctx=30)
    model = LinearizedGPT(cfg, MixerConfig(window=5, **PUBLISHED)).eval()
    tokens = torch.randint(0, 20, (1, 17))
    with torch.no_grad():
        logits, states = model.decode(tokens)
        torch.testing.assert_close(logits, model(tokens), rtol=1e-4, atol=1e-5)
    # window keys (4 after eviction) plus S (D x 2D) and z (2D) per head and layer
    assert sum(s.nbytes() for s in states) == model.state_bytes(17) == 2 * 4 * 3 * (4 * 2 * 8 + 8 * 16 + 16)


def test_transfer_pair_targets_the_teachers_softmax_attention_before_the_projection():
    torch.manual_seed(2)
    cfg = GPTConfig(vocab_size=20, d_model=24, n_layer=2, n_head=3, ctx=30)
    model = LinearizedGPT(cfg, MixerConfig(window=4, **PUBLISHED))
    hidden = torch.randn(2, 11, 24)
    pred, target = model.transfer_pair(1, hidden)
    attn = model.blocks[1].attn
    q, k, v = attn._heads(model.blocks[1].ln1(hidden))
    causal = torch.ones(11, 11, dtype=torch.bool).tril()
    torch.testing.assert_close(target, attention.softmax_attention(q, k, v, causal))
    assert not target.requires_grad and pred.requires_grad
    # the prediction is the mixer's own output: projected, it is the attention sublayer's
    projected = attn.proj(pred.transpose(1, 2).reshape(hidden.shape))
    torch.testing.assert_close(projected, model.mixer_output(1, hidden))
    # a window covering the whole context makes the mixer exactly softmax attention
    wide = LinearizedGPT(cfg, MixerConfig(window=30, **PUBLISHED))
    wide.load_state_dict(model.state_dict())
    pred, target = wide.transfer_pair(0, hidden)
    torch.testing.assert_close(pred, target, rtol=1e-4, atol=1e-4)  # up to the normalizer eps


def test_lora_starts_at_the_base_trains_alone_and_merges_exactly():
    torch.manual_seed(3)
    cfg = GPTConfig(vocab_size=20, d_model=24, n_layer=2, n_head=3, ctx=30)
    model = LinearizedGPT(cfg, MixerConfig(window=4, **PUBLISHED))
    tokens = torch.randint(0, 20, (2, 12))
    with torch.no_grad():
        before = model(tokens)
    params = add_lora(model, {"qkv": 3, "proj": 1}, rank=2, alpha=4.0)
    adapters = [m for m in model.modules() if isinstance(m, LoRALinear)]
    assert len(adapters) == 4 and len(params) == 8
    assert {id(p) for p in model.parameters() if p.requires_grad} == {id(p) for p in params}
    with torch.no_grad():
        torch.testing.assert_close(model(tokens), before)  # B = 0: the base model
        for p in params:
            p.add_(0.1 * torch.randn_like(p))
        adapted = model(tokens)
    qkv = adapters[0]
    # one adapter per q, k, v slice: a block-diagonal update of rank <= 3 x 2
    assert torch.linalg.matrix_rank(qkv.delta()) == 6
    for s in range(3):
        block = qkv.delta()[24 * s: 24 * (s + 1)]
        assert torch.linalg.matrix_rank(block) == 2
    assert not torch.allclose(adapted, before)
    merge_lora(model)
    assert not any(isinstance(m, LoRALinear) for m in model.modules())
    with torch.no_grad():
        torch.testing.assert_close(model(tokens), adapted, rtol=1e-5, atol=1e-5)
