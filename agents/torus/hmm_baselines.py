"""TGHMM-v0 baselines: a Gaussian HMM (hmmlearn; diagonal covariance, or full covariance) and
k-means, each on one of two feature maps, and the constant labelling (trivial).

- ``features: windowed`` (the default): the windowed phase-difference features that TG-HMM's own
  initialisation clusters (the mean cos/sin of x_i - x_j over a centred window of ``window``
  steps, ``tghmm.windowed_coupling_features``), so that a baseline sees what the method sees.
- ``features: phase``: (cos x, sin x) per time step. With coupling-only states every marginal is
  uniform, so per-coordinate means and variances carry no state information: a diagonal
  Gaussian HMM on them is at chance by construction (the benchmark's sanity claim)."""

from __future__ import annotations

from typing import Literal

import numpy as np
from sklearn.cluster import KMeans

from papergym.agent import Agent, AgentConfig
from papergym.agents.torus.tghmm import windowed_coupling_features

_PROBLEMS = ("papergym/TGHMM-v0",)


def phase_features(x: np.ndarray) -> np.ndarray:
    return np.concatenate([np.cos(x), np.sin(x)], axis=1)


def hmm_features(x: np.ndarray, features: str, window: int) -> np.ndarray:
    if features == "windowed":
        return windowed_coupling_features(x, window)
    return phase_features(x)


class _FeatureConfig(AgentConfig):
    features: Literal["windowed", "phase"] = "windowed"
    window: int = 20  # TG-HMM's init window


class GaussHMM(Agent):
    id, family, role, paper = "gauss_hmm", "torus", "baseline", "rabiner1989"
    problems = _PROBLEMS

    class Config(_FeatureConfig):
        covariance: Literal["diag", "full"] = "diag"
        n_iter: int = 100

    def solve(self, view, budget, seed):
        from hmmlearn.hmm import GaussianHMM  # imported here: only this agent needs it

        feats = hmm_features(view.data(), self.config.features, self.config.window)
        model = GaussianHMM(n_components=view.k, covariance_type=self.config.covariance,
                            n_iter=self.config.n_iter, random_state=seed)
        model.fit(feats)
        return model.predict(feats).astype(np.int64)


class KMeansPhase(Agent):
    id, family, role, paper = "kmeans_phase", "torus", "baseline", "lloyd1982"
    problems = _PROBLEMS

    class Config(_FeatureConfig):
        pass

    def solve(self, view, budget, seed):
        feats = hmm_features(view.data(), self.config.features, self.config.window)
        return KMeans(view.k, n_init=4, random_state=seed).fit_predict(feats).astype(np.int64)
