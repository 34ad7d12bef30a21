"""papergym.hmm: forward-backward and Viterbi against brute-force enumeration of every path."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from papergym.hmm import forward_backward, sticky_log_transition, viterbi


def _random_hmm(steps: int, k: int, seed: int):
    rng = np.random.default_rng(seed)
    log_e = rng.normal(0.0, 2.0, (steps, k)) - 30.0  # unnormalized and tiny: log space matters
    trans = rng.dirichlet(np.ones(k), size=k)
    init = rng.dirichlet(np.ones(k))
    return log_e, np.log(trans), np.log(init)


def _enumerate(log_e, log_t, log_i):
    steps, k = log_e.shape
    paths = np.array(list(itertools.product(range(k), repeat=steps)))
    scores = log_i[paths[:, 0]] + log_e[np.arange(steps), paths].sum(1)
    scores += log_t[paths[:, :-1], paths[:, 1:]].sum(1)
    return paths, scores


@pytest.mark.parametrize("steps,k,seed", [(6, 2, 0), (6, 2, 1), (5, 3, 2), (1, 3, 3)])
def test_marginals_equal_brute_force_enumeration(steps, k, seed):
    log_e, log_t, log_i = _random_hmm(steps, k, seed)
    paths, scores = _enumerate(log_e, log_t, log_i)
    log_z = logsumexp(scores)
    weights = np.exp(scores - log_z)
    post = forward_backward(log_e, log_t, log_i)
    assert post.log_likelihood == pytest.approx(log_z, abs=1e-10)
    gamma = np.array([[weights[paths[:, t] == j].sum() for j in range(k)] for t in range(steps)])
    np.testing.assert_allclose(post.gamma, gamma, atol=1e-10)
    xi = np.zeros((k, k))
    for t in range(steps - 1):
        for i, j in itertools.product(range(k), repeat=2):
            xi[i, j] += weights[(paths[:, t] == i) & (paths[:, t + 1] == j)].sum()
    np.testing.assert_allclose(post.xi_sum, xi, atol=1e-10)


def test_viterbi_is_the_best_enumerated_path():
    log_e, log_t, log_i = _random_hmm(6, 3, 7)
    paths, scores = _enumerate(log_e, log_t, log_i)
    np.testing.assert_array_equal(viterbi(log_e, log_t, log_i), paths[np.argmax(scores)])


def test_bad_shapes_and_sticky_transition():
    with pytest.raises(ValueError, match="log_transition"):
        forward_backward(np.zeros((4, 2)), np.zeros((3, 3)), np.zeros(2))
    with pytest.raises(ValueError, match="p_stay"):
        sticky_log_transition(3, 1.0)
    np.testing.assert_allclose(np.exp(sticky_log_transition(3, 0.9)).sum(1), 1.0)


def test_batched_recursions_equal_the_single_sequence_ones():
    from papergym.hmm import forward_backward_batch, log_likelihood_batch

    runs = [_random_hmm(5, 3, seed) for seed in (10, 11, 12)]
    log_t, log_i = runs[0][1], runs[0][2]
    batch = np.stack([r[0] for r in runs])
    gamma, log_lik = forward_backward_batch(batch, log_t, log_i)
    np.testing.assert_allclose(log_likelihood_batch(batch, log_t, log_i), log_lik, atol=1e-12)
    for row, (log_e, _, _) in enumerate(runs):
        single = forward_backward(log_e, log_t, log_i)
        np.testing.assert_allclose(gamma[row], single.gamma, atol=1e-12)
        assert log_lik[row] == pytest.approx(single.log_likelihood, abs=1e-10)
    with pytest.raises(ValueError, match=r"\(N, T, K\)"):
        log_likelihood_batch(batch[0], log_t, log_i)
