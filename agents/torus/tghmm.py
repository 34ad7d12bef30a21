"""TG-HMM: a hidden Markov model with torus-graph emissions (Goffinet, Hanks & Carlson, ICML 2026).

EM [code, recon]. Emissions are unnormalized, log e_k(x) = phi_k . S(x) - A_k, with learned
log-partitions A (A_1 = 0) in place of the intractable log Z(phi_k).
- E-step: forward-backward in log space (``papergym.hmm``) -> gamma_t(k), and the expected
  transition counts -> the transition matrix (rows normalized, a +1 pseudo-count).
- M-step: per state, weighted SSM (minibatch rows drawn with probability gamma_t(k); warm start),
  then A by minimizing the cross-entropy between softmax_k(phi_k . S(x_t) - A_k) and gamma_t plus
  0.1 ||A||^2 (a discriminative step that avoids Z).
- Init: k-means on windowed phase-difference features (mean cos/sin of x_i - x_j over a centred
  window); the paper's spectral-clustering init is replaced by this cheaper clustering [recon].
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import log_softmax, softmax
from sklearn.cluster import KMeans

from papergym.agent import Agent, AgentConfig
from papergym.agents.torus.ssm import ssm_fit
from papergym.envs.torus import tg
from papergym.hmm import forward_backward


def windowed_coupling_features(x: np.ndarray, window: int) -> np.ndarray:
    iu = np.triu_indices(x.shape[1], 1)
    diff = x[:, iu[0]] - x[:, iu[1]]
    feats = np.concatenate([np.cos(diff), np.sin(diff)], axis=1)
    kernel = np.ones(window) / window
    return np.stack([np.convolve(f, kernel, mode="same") for f in feats.T], axis=1)


def fit_log_partitions(energies: np.ndarray, gamma: np.ndarray, ridge: float = 0.1) -> np.ndarray:
    """A (K,), A_0 = 0, minimizing mean_t CE(gamma_t, softmax(E_t - A)) + ridge ||A||^2."""
    k = energies.shape[1]

    def objective(free):
        a = np.concatenate([[0.0], free])
        logp = log_softmax(energies - a, axis=1)
        p = np.exp(logp)
        value = -(gamma * logp).sum(1).mean() + ridge * free @ free
        grad = (gamma - p).mean(0)[1:] * 1.0  # d(-sum gamma log softmax)/dA_j = gamma_j - p_j
        return value, grad + 2 * ridge * free

    res = minimize(objective, np.zeros(k - 1), jac=True, method="L-BFGS-B")
    return np.concatenate([[0.0], res.x])


class TGHMM(Agent):
    id = "tghmm"
    family = "torus"
    role = "method"
    paper = "goffinet2026torus"
    problems = ("papergym/TGHMM-v0",)

    class Config(AgentConfig):
        em_iterations: int = 15
        ssm_iterations: int = 150
        batch: int = 256
        lr: float = 1e-2
        lam1: float = 0.01
        window: int = 20
        a_ridge: float = 0.1

    def solve(self, view, budget, seed):
        cfg = self.config
        rng = np.random.default_rng(seed)
        x, k = view.data(), view.k
        steps, d = x.shape
        feats = windowed_coupling_features(x, cfg.window)
        labels = KMeans(k, n_init=4, random_state=seed).fit_predict(feats)
        gamma = np.eye(k)[labels] * 0.9 + 0.1 / k
        stats = tg.stats(x).reshape(steps, -1)
        phis = [None] * k
        log_trans = np.log(np.full((k, k), 0.1 / (k - 1)) + np.eye(k) * (0.9 - 0.1 / (k - 1)))
        log_init = np.log(np.full(k, 1.0 / k))
        for _ in range(cfg.em_iterations):
            for j in range(k):  # M-step: weighted SSM per state
                phis[j] = ssm_fit(x, rng, batch=cfg.batch, lr=cfg.lr, iterations=cfg.ssm_iterations,
                                  decay_every=10 ** 9, lam1=cfg.lam1, weights=gamma[:, j] + 1e-12,
                                  phi0=phis[j])
            energies = stats @ np.stack([p.ravel() for p in phis], axis=1)
            log_z = fit_log_partitions(energies, gamma, cfg.a_ridge)
            post = forward_backward(energies - log_z, log_trans, log_init)  # E-step
            gamma = post.gamma
            counts = post.xi_sum + 1.0
            log_trans = np.log(counts / counts.sum(1, keepdims=True))
            log_init = np.log(softmax(np.log(gamma[0] + 1e-3)))
        return gamma.argmax(1).astype(np.int64)
