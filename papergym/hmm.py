"""Hidden Markov models in log space: forward-backward and Viterbi from a log-emission matrix.

Family-agnostic: a caller supplies log p(x_t | z_t = k) as a (T, K) array (normalized or not:
an unnormalized emission only shifts the log likelihood), the log transition matrix (K, K)
(rows: from, columns: to) and the log initial distribution (K,). Everything is computed with
log-sum-exp, so very small emission probabilities do not underflow. The ``_batch`` forms run
N sequences of one length at once ((N, T, K) emissions) through the same recursions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp


@dataclass(frozen=True)
class Posterior:
    """gamma (T, K): p(z_t | x_{1:T}); xi_sum (K, K): sum_t p(z_t = i, z_{t+1} = j | x);
    log_likelihood: log p(x_{1:T}) under the given (possibly unnormalized) emissions."""

    gamma: np.ndarray
    xi_sum: np.ndarray
    log_likelihood: float


def _check(log_emissions, log_transition, log_initial) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    e = np.asarray(log_emissions, dtype=float)
    tr = np.asarray(log_transition, dtype=float)
    init = np.asarray(log_initial, dtype=float)
    if e.ndim != 2 or e.shape[0] < 1:
        raise ValueError(f"log_emissions must be (T, K) with T >= 1, got shape {e.shape}")
    k = e.shape[1]
    if tr.shape != (k, k) or init.shape != (k,):
        raise ValueError(f"log_transition must be ({k}, {k}) and log_initial ({k},); got "
                         f"{tr.shape} and {init.shape}")
    if np.isnan(e).any() or np.isnan(tr).any() or np.isnan(init).any():
        raise ValueError("NaN in the HMM inputs")
    return e, tr, init


def _check_batch(log_emissions, log_transition, log_initial) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    e = np.asarray(log_emissions, dtype=float)
    if e.ndim != 3:
        raise ValueError(f"log_emissions must be (N, T, K) for a batch, got shape {e.shape}")
    _check(e[0] if len(e) else np.zeros((1, e.shape[-1])), log_transition, log_initial)
    return e, np.asarray(log_transition, dtype=float), np.asarray(log_initial, dtype=float)


def _forward(e: np.ndarray, tr: np.ndarray, init: np.ndarray) -> np.ndarray:
    """log alpha (N, T, K): alpha_t(j) = e_t(j) + logsumexp_i alpha_{t-1}(i) + tr(i, j)."""
    alpha = np.empty(e.shape)
    alpha[:, 0] = init + e[:, 0]
    for t in range(1, e.shape[1]):
        alpha[:, t] = e[:, t] + logsumexp(alpha[:, t - 1, :, None] + tr, axis=1)
    return alpha


def _backward(e: np.ndarray, tr: np.ndarray) -> np.ndarray:
    """log beta (N, T, K): beta_t(i) = logsumexp_j tr(i, j) + e_{t+1}(j) + beta_{t+1}(j)."""
    beta = np.zeros(e.shape)
    for t in range(e.shape[1] - 2, -1, -1):
        beta[:, t] = logsumexp(tr + (e[:, t + 1] + beta[:, t + 1])[:, None, :], axis=2)
    return beta


def log_likelihood_batch(log_emissions, log_transition, log_initial) -> np.ndarray:
    """log p(x_{1:T}) of N sequences at once (the forward pass only): (N,)."""
    e, tr, init = _check_batch(log_emissions, log_transition, log_initial)
    if not len(e):
        return np.zeros(0)
    return logsumexp(_forward(e, tr, init)[:, -1], axis=1)


def forward_backward_batch(log_emissions, log_transition,
                           log_initial) -> tuple[np.ndarray, np.ndarray]:
    """State posteriors of N sequences at once: gamma (N, T, K) = p(z_t | x^(n)), and the log
    likelihoods (N,). A sequence of likelihood zero gets NaN posteriors."""
    e, tr, init = _check_batch(log_emissions, log_transition, log_initial)
    alpha, beta = _forward(e, tr, init), _backward(e, tr)
    log_lik = logsumexp(alpha[:, -1], axis=1)
    with np.errstate(invalid="ignore"):
        gamma = np.exp(alpha + beta - log_lik[:, None, None])
    return gamma, log_lik


def forward_backward(log_emissions, log_transition, log_initial) -> Posterior:
    """Posterior marginals of a K-state HMM by the forward-backward recursions in log space."""
    e, tr, init = _check(log_emissions, log_transition, log_initial)
    steps, k = e.shape
    alpha, beta = _forward(e[None], tr, init)[0], _backward(e[None], tr)[0]
    log_lik = float(logsumexp(alpha[-1]))
    gamma = np.exp(alpha + beta - log_lik)
    if steps > 1:
        pair = alpha[:-1, :, None] + tr[None] + (e[1:] + beta[1:])[:, None, :] - log_lik
        xi_sum = np.exp(logsumexp(pair, axis=0))
    else:
        xi_sum = np.zeros((k, k))
    return Posterior(gamma=gamma, xi_sum=xi_sum, log_likelihood=log_lik)


def viterbi(log_emissions, log_transition, log_initial) -> np.ndarray:
    """The most probable state path (T,) as integers."""
    e, tr, init = _check(log_emissions, log_transition, log_initial)
    steps, k = e.shape
    delta = init + e[0]
    back = np.zeros((steps, k), dtype=int)
    for t in range(1, steps):
        scores = delta[:, None] + tr
        back[t] = scores.argmax(0)
        delta = scores.max(0) + e[t]
    path = np.empty(steps, dtype=int)
    path[-1] = int(delta.argmax())
    for t in range(steps - 1, 0, -1):
        path[t - 1] = back[t, path[t]]
    return path


def sticky_log_transition(k: int, p_stay: float) -> np.ndarray:
    """log of the transition matrix that stays with p_stay and moves uniformly otherwise."""
    if not 0.0 < p_stay < 1.0 or k < 2:
        raise ValueError(f"need 0 < p_stay < 1 and k >= 2, got p_stay={p_stay}, k={k}")
    mat = np.full((k, k), (1.0 - p_stay) / (k - 1))
    np.fill_diagonal(mat, p_stay)
    return np.log(mat)
