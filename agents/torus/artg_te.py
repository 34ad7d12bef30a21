"""Autoregressive torus graph + multivariate transfer entropy (Goffinet, Hanks & Carlson, ICML 2026).

[code, recon] Each channel's conditional given the past is von Mises with natural parameters
linear in the lagged (cos, sin) features of every channel (the AR-TG; ``harmonics`` H > 1 adds
(cos h y, sin h y) for h = 2..H to the lagged features, our extension for n:m coupling): fitted
by exact von Mises regression (L-BFGS on the log likelihood eta . (cos y, sin y) -
log 2 pi I0(||eta||), small ridge; the paper fits it by score matching, whose minimizer this
likelihood shares in the well-specified case). Transfer entropy s -> t = E[log p(y_t | past) -
log p(y_t | past without s)], the second term marginalizing the source's lagged features over
16 Monte-Carlo draws from a Gaussian model of those features given the others' (linear
regression, Gaussian residuals).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import i0e, i1e, logsumexp

from papergym.agent import Agent, AgentConfig


def harmonic_features(y: np.ndarray, harmonics: int) -> list[np.ndarray]:
    """cos(h y), sin(h y) for h = 1..H, in that order (each the shape of y)."""
    return [f(h * y) for h in range(1, harmonics + 1) for f in (np.cos, np.sin)]


def lagged_features(y: np.ndarray, lags: int, harmonics: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """F (T - L, R, 2HL): (cos h y, sin h y) of every channel for h = 1..H at lags 1..L; and the
    targets y[L:]."""
    steps, r = y.shape
    blocks = [np.stack(harmonic_features(y[lags - lag:steps - lag], harmonics), -1)
              for lag in range(1, lags + 1)]
    feats = np.stack(blocks, axis=2).reshape(steps - lags, r, 2 * harmonics * lags)
    return feats, y[lags:]


def vm_logpdf(y: np.ndarray, eta: np.ndarray) -> np.ndarray:
    kappa = np.hypot(eta[:, 0], eta[:, 1])
    return eta[:, 0] * np.cos(y) + eta[:, 1] * np.sin(y) - np.log(2 * np.pi * i0e(kappa)) - kappa


def vm_regression(design: np.ndarray, y: np.ndarray, ridge: float) -> np.ndarray:
    """W (p, 2) maximizing the von Mises likelihood of y with natural parameters design @ W."""
    n, p = design.shape
    target = np.stack([np.cos(y), np.sin(y)], 1)

    def objective(theta):
        w = theta.reshape(p, 2)
        eta = design @ w
        kappa = np.hypot(eta[:, 0], eta[:, 1])
        value = -((eta * target).sum(1) - np.log(i0e(kappa)) - kappa).mean() + ridge * theta @ theta
        ratio = np.where(kappa > 1e-12, i1e(kappa) / i0e(kappa) / np.maximum(kappa, 1e-12), 0.5)
        d_eta = -(target - ratio[:, None] * eta) / n
        return value, (design.T @ d_eta).ravel() + 2 * ridge * theta

    return minimize(objective, np.zeros(2 * p), jac=True, method="L-BFGS-B").x.reshape(p, 2)


def transfer_entropy(y: np.ndarray, lags: int, rng: np.random.Generator, draws: int = 16,
                     ridge: float = 1e-4, harmonics: int = 1) -> np.ndarray:
    """TE (R, R), entry [s, t] for s -> t (diagonal 0), in nats per sample."""
    feats, target = lagged_features(y, lags, harmonics)
    n, r, q = feats.shape
    flat = feats.reshape(n, r * q)
    design = np.concatenate([flat, np.ones((n, 1))], 1)
    noise = rng.standard_normal((draws, n, q))
    te = np.zeros((r, r))
    weights = [vm_regression(design, target[:, t], ridge) for t in range(r)]
    for s in range(r):
        cols = np.arange(s * q, (s + 1) * q)
        others = np.delete(design, cols, axis=1)
        coef, *_ = np.linalg.lstsq(others, flat[:, cols], rcond=None)
        fitted = others @ coef
        resid = flat[:, cols] - fitted
        chol = np.linalg.cholesky(np.cov(resid.T) + 1e-9 * np.eye(q))
        replaced = fitted[None] + noise @ chol.T  # (draws, n, q)
        for t in range(r):
            if t == s:
                continue
            w = weights[t]
            eta = design @ w
            base = vm_logpdf(target[:, t], eta)
            eta_m = eta[None] - (flat[:, cols] @ w[cols])[None] + replaced @ w[cols]
            logp_m = np.stack([vm_logpdf(target[:, t], e) for e in eta_m])
            te[s, t] = float(np.mean(base - (logsumexp(logp_m, axis=0) - np.log(draws))))
    return te


class ARTGTransferEntropy(Agent):
    id = "artg_te"
    family = "torus"
    role = "method"
    paper = "goffinet2026torus"
    problems = ("papergym/TGTransferEntropy-v0", "papergym/TGTransferEntropy-v1")

    class Config(AgentConfig):
        draws: int = 16
        ridge: float = 1e-4
        harmonics: int = 1  # 1: the paper's AR-TG; 2 adds the lagged second harmonics

    def solve(self, view, budget, seed):
        rng = np.random.default_rng(seed)
        kw = {"draws": self.config.draws, "ridge": self.config.ridge,
              "harmonics": self.config.harmonics}
        network = transfer_entropy(view.network(), view.lags, rng, **kw)
        pairs = np.stack([transfer_entropy(p, view.lags, rng, **kw) for p in view.pairs()]) \
            if view.n_pairs else np.zeros((0, 2, 2))
        return {"network": network, "pairs": pairs}
