"""Exact MaxCut by Gray-code enumeration (a reference; N ≤ 24 only, smoke tier)."""

from __future__ import annotations

import numpy as np

from papergym.agent import Agent, AgentConfig
from papergym.envs.qaoa.references import gray_code_maxcut


class Config(AgentConfig):
    pass


class BruteForceSolver:
    def solve_instance(self, weights: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return gray_code_maxcut(weights)[1]


class BruteForce(Agent):
    """Exhaustive search over 2^(N−1) cuts (node N−1 fixed)."""

    id = "bruteforce"
    family = "qaoa"
    problems = ("papergym/QAOA2Partition-v0",)
    role = "reference"
    paper = "zheng2026neuralqaoa2"
    Config = Config

    def solve(self, view, budget, seed):
        return BruteForceSolver()
