"""CMA-ES on the LBM (Hansen & Ostermeier 2001) with the ``cmaes`` package (its own RNG, box
bounds): x0 = 0, lambda = 6, sigma0 = ``sigma_fraction`` * delta_max; each sample is verified by
the problem's solver and CMA-ES is told the projected design the env evaluated; the final
design is the best verified one (z = 0 included)."""

from __future__ import annotations

import numpy as np
from cmaes import CMA

from papergym import Agent, AgentConfig
from papergym.agents.aero._policies import VerifyThenHold

FFD = ("papergym/DragFFD2D-v*",)


class _CMAPolicy(VerifyThenHold):
    def __init__(self, seed: int, delta_max: float, sigma_fraction: float, population: int) -> None:
        self.delta_max, self.sigma_fraction, self.population = delta_max, sigma_fraction, population
        super().__init__(seed)

    def start(self, obs):
        n = len(obs["z"])
        bounds = np.tile([-self.delta_max, self.delta_max], (n, 1))
        self.cma = CMA(mean=np.zeros(n), sigma=self.sigma_fraction * self.delta_max, bounds=bounds,
                       seed=int(self.rng.integers(2**31)), population_size=self.population)
        self.told: list[tuple[np.ndarray, float]] = []

    def propose(self, obs):
        return self.cma.ask()

    def observe(self, z, cd):
        self.told.append((np.asarray(z, np.float64), cd))
        if len(self.told) == self.cma.population_size:
            self.cma.tell(self.told)
            self.told = []


class CMAESLBM(Agent):
    """CMA-ES directly on the solver with the episode's budget (lambda = 6)."""

    id, family, role, paper, problems = "cmaes_lbm", "aero", "baseline", "unidrag2026", FFD

    class Config(AgentConfig):
        sigma_fraction: float = 0.4
        population: int = 6

    def solve(self, view, budget, seed):
        return _CMAPolicy(seed, float(view.delta_max), self.config.sigma_fraction, self.config.population)
