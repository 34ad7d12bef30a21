"""papergym.tinylm: the bidirectional encoder, SUBS, the training loop and Gumbel-top-K."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from papergym.tinylm.bidir import Bidir, BidirConfig, subs_probs, with_scalar_head
from papergym.tinylm.sampling import gumbel_top_k, top_k_mask
from papergym.tinylm.train import TrainConfig, train


def _model(**kw) -> Bidir:
    torch.manual_seed(0)
    return Bidir(BidirConfig(vocab_size=5, length=6, d_model=16, n_layer=1, n_head=2, **kw)).eval()


def test_a_masked_position_does_not_see_its_own_token():
    model = _model()
    x = torch.randint(0, 5, (4, 6), generator=torch.Generator().manual_seed(1))
    masked = x.clone()
    masked[:, 2] = 5
    other = masked.clone()
    x2 = x.clone()
    x2[:, 2] = (x[:, 2] + 1) % 5  # a different original token, masked the same way
    other[:, 2] = 5
    with torch.no_grad():
        assert torch.equal(model(masked), model(other))
        assert not torch.equal(model(x), model(x2))  # revealed, the token does matter
        # bidirectional: position 0 depends on a later position
        later = masked.clone()
        later[:, 5] = (masked[:, 5] + 1) % 5
        assert not torch.allclose(model(masked)[:, 0], model(later)[:, 0])


def test_subs_never_predicts_mask_and_copies_revealed_tokens():
    model = _model()
    x = torch.tensor([[5, 1, 5, 3, 5, 0]])
    with torch.no_grad():
        probs = subs_probs(model(x), x, 5)
    assert probs.shape == (1, 6, 5)  # no column for MASK
    torch.testing.assert_close(probs.sum(-1), torch.ones(1, 6))
    for pos in (1, 3, 5):
        assert probs[0, pos, x[0, pos]] == 1.0


def test_scalar_head_copy_shares_the_backbone_and_starts_at_zero():
    model = _model()
    rem = with_scalar_head(model)
    assert rem(torch.zeros(2, 6, dtype=torch.long)).shape == (2, 6)
    assert torch.count_nonzero(rem(torch.zeros(2, 6, dtype=torch.long))) == 0
    torch.testing.assert_close(rem.blocks[0].qkv.weight, model.blocks[0].qkv.weight)
    with pytest.raises(ValueError, match="time-conditioned"):
        _model(time_conditioning=True)(torch.zeros(1, 6, dtype=torch.long))
    timed = _model(time_conditioning=True)
    assert timed(torch.zeros(1, 6, dtype=torch.long), torch.tensor([0.5])).shape == (1, 6, 5)


def _fit(seed: int):
    model = _model()
    gen = torch.Generator().manual_seed(seed)

    def loss_fn(m, step):
        x = torch.randint(0, 5, (8, 6), generator=gen)
        return torch.nn.functional.cross_entropy(m(x).reshape(-1, 5), x.reshape(-1))

    return train(model, loss_fn, TrainConfig(steps=30, lr=3e-3, warmup=5, clip=1.0, ema=0.9))


def test_training_is_deterministic_and_learns():
    a, b = _fit(3), _fit(3)
    for (ka, va), (kb, vb) in zip(a.final.state_dict().items(), b.final.state_dict().items()):
        assert ka == kb and torch.equal(va, vb)
    assert np.mean(a.losses[-5:]) < np.mean(a.losses[:5])  # copying the input is learnable
    assert a.ema is not None and not torch.equal(a.ema.head.weight, a.model.head.weight)
    assert TrainConfig(steps=10, warmup=4).lr_at(0) == pytest.approx(3e-4 / 4)
    assert TrainConfig(steps=10, decay="cosine").lr_at(10) == pytest.approx(0.0, abs=1e-12)


def test_top_k_breaks_ties_to_the_lower_index():
    mask = top_k_mask(torch.tensor([[0.0, 1.0, 1.0, 1.0, 0.0]]), 2)
    assert mask.tolist() == [[False, True, True, False, False]]
    with pytest.raises(ValueError, match="k must be"):
        top_k_mask(torch.zeros(1, 3), 4)


def test_gumbel_top_k_is_k_distinct_and_its_first_pick_follows_softmax():
    scores = torch.tensor([[1.0, 0.0, -1.0, 2.0, 0.5]])
    gen = torch.Generator().manual_seed(0)
    picks = gumbel_top_k(scores.expand(10_000, 5), 3, gen)
    assert torch.all(picks.sum(1) == 3)
    # the first pick: k = 1
    first = gumbel_top_k(scores.expand(10_000, 5), 1, torch.Generator().manual_seed(1))
    freq = first.double().mean(0).numpy()
    p = torch.softmax(scores[0].double(), 0).numpy()
    assert np.all(np.abs(freq - p) < 4 * np.sqrt(p * (1 - p) / 10_000))
