"""Directed-coupling baselines for TGTransferEntropy-v0.

- Multivariate Granger causality (Granger 1969) on the (cos y, sin y) features: a VAR(L) with a
  constant (statsmodels), score s -> t = the F statistic of the joint restriction that s's
  (cos, sin) lags do not enter t's (cos, sin) equations.
- Lagged PLV: max over lags l = 1..L of |mean exp(i (y_t[tau] - y_s[tau - l]))|.
"""

from __future__ import annotations

import numpy as np

from papergym.agent import Agent

_PROBLEMS = ("papergym/TGTransferEntropy-v0",)


def granger_scores(y: np.ndarray, lags: int) -> np.ndarray:
    from statsmodels.tsa.api import VAR  # imported here: statsmodels is slow to import

    r = y.shape[1]
    z = np.concatenate([np.cos(y), np.sin(y)], axis=1)
    res = VAR(z).fit(lags, trend="c")
    out = np.zeros((r, r))
    for s in range(r):
        for t in range(r):
            if s != t:
                out[s, t] = res.test_causality(caused=[t, r + t], causing=[s, r + s],
                                               kind="f").test_statistic
    return out


def lagged_plv_scores(y: np.ndarray, lags: int) -> np.ndarray:
    steps, r = y.shape
    z = np.exp(1j * y)
    out = np.zeros((r, r))
    for lag in range(1, lags + 1):
        cross = np.abs(z[:steps - lag].conj().T @ z[lag:]) / (steps - lag)  # [s, t]: s lagged
        out = np.maximum(out, cross)
    np.fill_diagonal(out, 0.0)
    return out


def _both(view, fn):
    pairs = view.pairs() if view.n_pairs else np.zeros((0, 2, 2))
    return {"network": fn(view.network(), view.lags),
            "pairs": np.stack([fn(p, view.lags) for p in pairs]) if view.n_pairs else np.zeros((0, 2, 2))}


class Granger(Agent):
    id, family, role, paper = "granger", "torus", "baseline", "granger1969"
    problems = _PROBLEMS

    def solve(self, view, budget, seed):
        return _both(view, granger_scores)


class LaggedPLV(Agent):
    id, family, role, paper = "lagged_plv", "torus", "baseline", "lachaux1999"
    problems = _PROBLEMS

    def solve(self, view, budget, seed):
        return _both(view, lagged_plv_scores)
