"""papergym.tinylm.synthlang: exact likelihood, posteriors and marginals against enumeration."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from papergym.tinylm.synthlang import HMMLanguage


def _tiny(seed: int = 0) -> HMMLanguage:
    return HMMLanguage.random(2, 3, 4, np.random.default_rng(seed), concentration=0.5)


def _brute(lang: HMMLanguage) -> tuple[np.ndarray, np.ndarray]:
    """Every sequence and its probability, summing p(z, x) over all S^L state paths."""
    seqs = np.array(list(itertools.product(range(lang.vocab_size), repeat=lang.length)))
    probs = np.zeros(len(seqs))
    for path in itertools.product(range(lang.n_states), repeat=lang.length):
        p_path = lang.initial[path[0]] * np.prod([lang.transition[a, b] for a, b in zip(path, path[1:])])
        probs += p_path * np.prod(lang.emission[np.array(path)[:, None], seqs.T], axis=0)
    return seqs, probs


@pytest.mark.parametrize("seed", [0, 1])
def test_forward_algorithm_equals_enumeration_over_state_paths(seed):
    lang = _tiny(seed)
    seqs, probs = _brute(lang)
    assert len(seqs) == 81
    np.testing.assert_allclose(lang.log_prob(seqs), np.log(probs), rtol=0, atol=1e-12)
    assert np.exp(lang.log_prob(seqs)).sum() == pytest.approx(1.0, abs=1e-12)


def test_oracle_posteriors_equal_enumerated_conditionals():
    lang = _tiny(2)
    seqs, probs = _brute(lang)
    rng = np.random.default_rng(3)
    for _ in range(8):
        x = seqs[rng.integers(len(seqs))].copy()
        masked = rng.random(lang.length) < 0.6
        x[masked] = lang.mask_id
        consistent = np.all((seqs == x) | masked, axis=1)
        post = lang.posterior(x[None])[0]
        for pos in range(lang.length):
            expect = np.array([probs[consistent & (seqs[:, pos] == v)].sum() for v in range(3)])
            np.testing.assert_allclose(post[pos], expect / expect.sum(), atol=1e-12)


def test_unigram_and_pair_marginals_equal_enumeration():
    lang = _tiny(4)
    seqs, probs = _brute(lang)
    uni = np.array([[probs[seqs[:, pos] == v].sum() for v in range(3)] for pos in range(4)])
    np.testing.assert_allclose(lang.unigram_marginals(), uni, atol=1e-12)
    pair = np.array([[[probs[(seqs[:, pos] == a) & (seqs[:, pos + 1] == b)].sum() for b in range(3)]
                      for a in range(3)] for pos in range(3)])
    np.testing.assert_allclose(lang.pair_marginals(), pair, atol=1e-12)


def test_samples_follow_the_exact_law_and_entropy_rate():
    lang = _tiny(5)
    seqs, probs = _brute(lang)
    x = lang.sample(40_000, np.random.default_rng(6))
    codes = (x * 3 ** np.arange(3, -1, -1)).sum(1)
    freq = np.bincount(codes, minlength=81) / len(x)
    se = np.sqrt(probs * (1 - probs) / len(x))
    assert np.all(np.abs(freq - probs) < 5 * se + 1e-9)
    h, h_se = lang.entropy_rate(40_000, np.random.default_rng(7))
    assert h == pytest.approx(-(probs * np.log(probs)).sum() / 4, abs=5 * h_se)


def test_bad_inputs_raise():
    lang = _tiny()
    with pytest.raises(ValueError, match="complete"):
        lang.log_prob(np.full((1, 4), lang.mask_id))
    with pytest.raises(ValueError, match=r"\(n, 4\)"):
        lang.posterior(np.zeros((1, 5), dtype=int))
    with pytest.raises(ValueError, match="states"):
        HMMLanguage.random(1, 3, 4, np.random.default_rng(0))
