"""Directed-coupling baselines for TGTransferEntropy-v0.

- Multivariate Granger causality (Granger 1969) on the (cos y, sin y) features: a VAR(L) with a
  constant (statsmodels), score s -> t = the F statistic of the joint restriction that s's
  (cos, sin) lags do not enter t's (cos, sin) equations. ``harmonics`` H > 1 adds (cos h y,
  sin h y), h = 2..H, of every channel to the VAR (all of s's features restricted; t's
  first-harmonic equations tested): a diagnostic of what the features, not the model, see.
- Lagged PLV: max over lags l = 1..L of |mean exp(i (y_t[tau] - y_s[tau - l]))|.
"""

from __future__ import annotations

import numpy as np

from papergym.agent import Agent, AgentConfig
from papergym.agents.torus.artg_te import harmonic_features

_PROBLEMS = ("papergym/TGTransferEntropy-v0", "papergym/TGTransferEntropy-v1")


def granger_scores(y: np.ndarray, lags: int, harmonics: int = 1) -> np.ndarray:
    from statsmodels.tsa.api import VAR  # imported here: statsmodels is slow to import

    r = y.shape[1]
    # columns: block 2(h-1) is cos(h y), block 2(h-1) + 1 is sin(h y), r channels each
    z = np.concatenate(harmonic_features(y, harmonics), axis=1)
    res = VAR(z).fit(lags, trend="c")
    out = np.zeros((r, r))
    for s in range(r):
        for t in range(r):
            if s != t:
                causing = [b * r + s for b in range(2 * harmonics)]
                out[s, t] = res.test_causality(caused=[t, r + t], causing=causing,
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

    class Config(AgentConfig):
        harmonics: int = 1  # 1: the linear VAR on (cos y, sin y)

    def solve(self, view, budget, seed):
        return _both(view, lambda y, lags: granger_scores(y, lags, self.config.harmonics))


class LaggedPLV(Agent):
    id, family, role, paper = "lagged_plv", "torus", "baseline", "lachaux1999"
    problems = _PROBLEMS

    def solve(self, view, budget, seed):
        return _both(view, lagged_plv_scores)
