"""TGHMM-v0 baselines on (cos x, sin x) features: a Gaussian HMM (hmmlearn; diagonal covariance,
the claim's baseline, or full covariance), k-means, and the constant labelling (trivial).

With coupling-only states every marginal is uniform, so per-coordinate means and variances carry
no state information: the diagonal Gaussian HMM sees none, the full-covariance one sees the
linear part of the phase-difference coupling (cov(cos x_i, cos x_j) etc.)."""

from __future__ import annotations

from typing import Literal

import numpy as np
from sklearn.cluster import KMeans

from papergym.agent import Agent, AgentConfig

_PROBLEMS = ("papergym/TGHMM-v0",)


def phase_features(x: np.ndarray) -> np.ndarray:
    return np.concatenate([np.cos(x), np.sin(x)], axis=1)


class GaussHMM(Agent):
    id, family, role, paper = "gauss_hmm", "torus", "baseline", "rabiner1989"
    problems = _PROBLEMS

    class Config(AgentConfig):
        covariance: Literal["diag", "full"] = "diag"
        n_iter: int = 100

    def solve(self, view, budget, seed):
        from hmmlearn.hmm import GaussianHMM  # imported here: only this agent needs it

        feats = phase_features(view.data())
        model = GaussianHMM(n_components=view.k, covariance_type=self.config.covariance,
                            n_iter=self.config.n_iter, random_state=seed)
        model.fit(feats)
        return model.predict(feats).astype(np.int64)


class KMeansPhase(Agent):
    id, family, role, paper = "kmeans_phase", "torus", "baseline", "lloyd1982"
    problems = _PROBLEMS

    def solve(self, view, budget, seed):
        labels = KMeans(view.k, n_init=4, random_state=seed).fit_predict(phase_features(view.data()))
        return labels.astype(np.int64)
