"""Marginal statistics as edge scores and the independent von Mises null (TGFit baselines).

- PLV thresholding: |mean exp(i (x_j - x_k))| (edges only; blind to phase-sum coupling, and a
  marginal statistic: it cannot tell direct from indirect coupling).
- Circular correlation (Jammalamadaka & SenGupta 2001): rho_cc = sum sin(x_j - mu_j) sin(x_k - mu_k) /
  sqrt(sum sin^2 sum sin^2), |rho_cc| as the score.
- Independent von Mises: each coordinate's MLE (kappa from the mean resultant length by the
  Best-Fisher approximation to A1^{-1}), no coupling: phi_kk = kappa_k (cos mu_k, sin mu_k).
"""

from __future__ import annotations

import numpy as np

from papergym.agent import Agent

_PROBLEMS = ("papergym/TGFit-v0",)


def plv(x: np.ndarray) -> np.ndarray:
    z = np.exp(1j * x)
    out = np.abs(z.T @ z.conj()) / len(x)
    np.fill_diagonal(out, 0.0)
    return out


def circular_correlation(x: np.ndarray) -> np.ndarray:
    mu = np.angle(np.exp(1j * x).mean(0))
    s = np.sin(x - mu)
    cov = s.T @ s
    norm = np.sqrt(np.outer(np.diag(cov), np.diag(cov)))
    out = np.abs(cov / norm)
    np.fill_diagonal(out, 0.0)
    return out


def a1_inverse(r: np.ndarray) -> np.ndarray:
    """Best & Fisher (1981) approximation to the inverse of A1 = I1 / I0."""
    r = np.clip(r, 0.0, 0.999)
    return np.where(r < 0.53, 2 * r + r ** 3 + 5 * r ** 5 / 6,
                    np.where(r < 0.85, -0.4 + 1.39 * r + 0.43 / (1 - r), 1 / (r ** 3 - 4 * r ** 2 + 3 * r)))


class PLVThreshold(Agent):
    id, family, role, paper = "plv", "torus", "baseline", "lachaux1999"
    problems = _PROBLEMS

    def solve(self, view, budget, seed):
        return {"edge_scores": plv(view.data())}


class CircularCorrelation(Agent):
    id, family, role, paper = "circcorr", "torus", "baseline", "jammalamadaka2001"
    problems = _PROBLEMS

    def solve(self, view, budget, seed):
        return {"edge_scores": circular_correlation(view.data())}


class IndependentVonMises(Agent):
    id, family, role, paper = "indep_vm", "torus", "baseline", "klein2020torus"
    problems = _PROBLEMS

    def solve(self, view, budget, seed):
        x = view.data()
        mean = np.exp(1j * x).mean(0)
        kappa = a1_inverse(np.abs(mean))
        d = x.shape[1]
        phi = np.zeros((d, d, 2))
        idx = np.arange(d)
        phi[idx, idx, 0], phi[idx, idx, 1] = kappa * np.cos(np.angle(mean)), kappa * np.sin(np.angle(mean))
        return phi
