"""Bayesian optimization on the LBM: a Gaussian process (Matern 5/2 with automatic relevance
determination and a noise term, scikit-learn) on the verified C_d / C_d,0, expected improvement
(Jones, Schonlau & Welch 1998) as the acquisition, the episode's solver budget.

The first ``n_init`` proposals are uniform in the control-point box; z = 0 counts as a verified
point at C_d,0. After that each proposal maximizes EI(z) = (y* - mu - xi) Phi(s) + sigma phi(s),
s = (y* - mu - xi) / sigma, over ``n_candidates`` random designs (half uniform in the box, half
Gaussian perturbations of the best verified design), keeping only designs that meet the
engineering constraints (the env would project the others, so the GP would be told a design it
did not choose). The GP is told the design the env evaluated; the final design is the best
verified one (z = 0 included)."""

from __future__ import annotations

import warnings

import numpy as np
from scipy.stats import norm
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

from papergym import Agent, AgentConfig
from papergym.agents.aero._policies import VerifyThenHold
from papergym.envs.aero import shapes

FFD = ("papergym/DragFFD2D-v*",)


class _BOPolicy(VerifyThenHold):
    def __init__(self, seed: int, delta_max: float, cfg: AgentConfig) -> None:
        self.delta_max, self.cfg = delta_max, cfg
        super().__init__(seed)

    def start(self, obs):
        self.base = np.asarray(obs["base_shape"], np.float64)
        self.basis = shapes.ffd_basis(self.base)
        self.cd0 = float(obs["cd0"][0])
        self.xs: list[np.ndarray] = [np.zeros(len(obs["z"]))]
        self.ys: list[float] = [1.0]

    def observe(self, z, cd):
        self.xs.append(np.asarray(z, np.float64))
        self.ys.append(cd / self.cd0)

    def _feasible(self, z: np.ndarray) -> bool:
        return shapes.feasible(shapes.deform(self.base, self.basis, z), self.base)

    def _candidates(self, n_z: int) -> np.ndarray:
        cfg, d = self.cfg, self.delta_max
        half = cfg.n_candidates // 2
        uniform = self.rng.uniform(-d, d, (half, n_z))
        best = self.xs[int(np.argmin(self.ys))]
        spread = self.rng.normal(0.0, cfg.local_scale * d, (cfg.n_candidates - half, n_z))
        local = np.clip(best + spread, -d, d)
        pool = np.concatenate([uniform, local])
        keep = np.array([self._feasible(z) for z in pool])
        return pool[keep] if keep.any() else pool

    def propose(self, obs):
        n_z = len(obs["z"])
        if len(self.xs) <= self.cfg.n_init:
            for _ in range(100):  # a feasible uniform draw (z = 0 is feasible, so one exists)
                z = self.rng.uniform(-self.delta_max, self.delta_max, n_z)
                if self._feasible(z):
                    return z
            return z
        x, y = np.array(self.xs) / self.delta_max, np.array(self.ys)
        kernel = (ConstantKernel(1.0, (1e-3, 1e3)) * Matern(np.ones(n_z), (1e-2, 1e2), nu=2.5)
                  + WhiteKernel(1e-4, (1e-8, 1e-1)))
        gp = GaussianProcessRegressor(kernel, normalize_y=True, n_restarts_optimizer=self.cfg.gp_restarts,
                                      random_state=int(self.rng.integers(2**31)))
        with warnings.catch_warnings():
            # a length scale at its upper bound is ARD saying a control point barely matters, and
            # the noise at its lower bound says the solver is deterministic: both are answers
            warnings.simplefilter("ignore", ConvergenceWarning)
            gp.fit(x, y)
        pool = self._candidates(n_z)
        mu, sigma = gp.predict(pool / self.delta_max, return_std=True)
        gain = y.min() - mu - self.cfg.xi
        s = gain / np.maximum(sigma, 1e-12)
        ei = gain * norm.cdf(s) + sigma * norm.pdf(s)  # expected improvement (minimization)
        return pool[int(np.argmax(ei))]


class BOLBM(Agent):
    """GP-EI directly on the solver with the episode's budget."""

    id, family, role, paper, problems = "bo_lbm", "aero", "baseline", "unidrag2026", FFD

    class Config(AgentConfig):
        n_init: int = 4
        n_candidates: int = 1000
        local_scale: float = 0.15
        xi: float = 0.001
        gp_restarts: int = 2

    def solve(self, view, budget, seed):
        return _BOPolicy(seed, float(view.delta_max), self.config)
