"""Uniform random partition with the reference number of blocks (lower reference).

Told k = k_ref by the problem (a privileged hint, so its rows are never ranked), it isolates
structure from the choice of k: every block non-empty, the other states assigned uniformly.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from papergym.agent import Agent, AgentConfig
from papergym.envs.abstraction.core import MDP


class RandomRoutine:
    oracle_k = True

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng([seed, 23])

    def __call__(self, mdp: MDP) -> np.ndarray:
        n = mdp.n_states
        k = int(mdp.meta.get("k_hint") or max(1, n // 2))
        labels = np.concatenate([np.arange(k), self.rng.integers(0, k, size=n - k)])
        return self.rng.permutation(labels)


class RandomPartition(Agent):
    id = "random_partition"
    family = "abstraction"
    role = "reference"
    paper = "zhang2026behavioral"
    problems = ("papergym/StateAbstraction-v0",)

    class Config(AgentConfig):
        pass

    def solve(self, view: Any, budget: Any, seed: int) -> RandomRoutine:
        return RandomRoutine(seed)
