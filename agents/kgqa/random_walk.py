"""Random walk (reference, never ranked): uniform over the valid actions of KGBackjump-v0
(FORWARD, BACKJUMP, YIELD, HALT), from a generator seeded by the trial seed."""

from __future__ import annotations

from typing import Any

import numpy as np

from papergym.agent import Agent, AgentConfig


class RandomPolicy:
    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng([seed, 3])

    def __call__(self, obs: dict[str, np.ndarray]) -> int:
        return int(self.rng.choice(np.flatnonzero(obs["action_mask"])))


class RandomWalk(Agent):
    id = "random_walk"
    family = "kgqa"
    role = "reference"
    paper = "zhang2026bog"

    class Config(AgentConfig):
        pass

    def solve(self, view: Any, budget: Any, seed: int) -> RandomPolicy:
        return RandomPolicy(seed)
