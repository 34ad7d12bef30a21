"""Pseudo-likelihood for torus graphs: the product of the von Mises full conditionals.

log PL(phi) = sum_n sum_k [A_nk cos x_nk + B_nk sin x_nk - log(2 pi I0(kappa_nk))], kappa = ||(A, B)||,
with (A, B) linear in phi (``tg.pair_matrices``); d/dA = cos x - (I1/I0)(kappa) A / kappa (likewise B),
chained back to phi by the adjoint map. L-BFGS on the mean negative log PL plus a ridge; O(n d^2)
per evaluation. A strong consistent baseline (Besag 1975), not in the paper.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import i0e, i1e

from papergym.agent import Agent, AgentConfig
from papergym.envs.torus import tg


def neg_log_pl(theta: np.ndarray, c: np.ndarray, s: np.ndarray, ridge: float) -> tuple[float, np.ndarray]:
    n, d = c.shape
    phi = theta.reshape(d, d, 2)
    a, b, p, q, u, v = tg.pair_matrices(phi)
    big_a, big_b = a + c @ p + s @ q, b + s @ u + c @ v
    kappa = np.hypot(big_a, big_b)
    log_i0 = np.log(i0e(kappa)) + kappa
    value = -(big_a * c + big_b * s - log_i0).sum() / n + 0.5 * ridge * theta @ theta
    ratio = np.where(kappa > 1e-12, i1e(kappa) / i0e(kappa) / np.maximum(kappa, 1e-12), 0.5)
    d_a, d_b = -(c - ratio * big_a) / n, -(s - ratio * big_b) / n
    grad = tg.pair_matrices_adjoint(d_a.sum(0), d_b.sum(0), c.T @ d_a, s.T @ d_a, s.T @ d_b, c.T @ d_b)
    return float(value), grad.ravel() + ridge * theta


def pseudolikelihood_fit(x: np.ndarray, ridge: float = 1e-4, maxiter: int = 500) -> np.ndarray:
    d = x.shape[1]
    c, s = np.cos(x), np.sin(x)
    res = minimize(neg_log_pl, np.zeros(2 * d * d), args=(c, s, ridge), jac=True, method="L-BFGS-B",
                   options={"maxiter": maxiter})
    return res.x.reshape(d, d, 2)


class PseudoLikelihood(Agent):
    id = "pseudolik"
    family = "torus"
    role = "baseline"
    paper = "besag1975"
    problems = ("papergym/TGFit-v0",)

    class Config(AgentConfig):
        ridge: float = 1e-4
        maxiter: int = 500

    def solve(self, view, budget, seed):
        return pseudolikelihood_fit(view.data(), self.config.ridge, self.config.maxiter)
