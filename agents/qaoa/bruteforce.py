"""Exact MaxCut by Gray-code enumeration (a reference; N ≤ 24 only, smoke tier)."""

from __future__ import annotations

import numpy as np

from papergym.agent import Agent, AgentConfig
from papergym.maxcut import exact_maxcut


class Config(AgentConfig):
    pass


class BruteForceSolver:
    def solve_instance(self, weights: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return exact_maxcut(weights)[1]


class BruteForce(Agent):
    """Exhaustive search over 2^(N−1) cuts (node N−1 fixed)."""

    id = "bruteforce"
    family = "qaoa"
    problems = ("papergym/QAOA2Partition-v*",)
    role = "reference"
    paper = "zheng2026neuralqaoa2"
    Config = Config

    def solve(self, view, budget, seed):
        return BruteForceSolver()
