"""Trivial abstractions: the identity partition (safe compression 0 by definition) or one block."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from papergym.agent import Agent, AgentConfig
from papergym.envs.abstraction.core import MDP


class TrivialRoutine:
    def __init__(self, partition: str) -> None:
        self.partition = partition

    def __call__(self, mdp: MDP) -> np.ndarray:
        n = mdp.n_states
        return np.arange(n) if self.partition == "identity" else np.zeros(n, dtype=np.int64)


class Trivial(Agent):
    id = "trivial"
    family = "abstraction"
    role = "baseline"
    paper = "zhang2026behavioral"
    problems = ("papergym/StateAbstraction-v*",)

    class Config(AgentConfig):
        partition: Literal["identity", "single"] = "identity"

    def solve(self, view: Any, budget: Any, seed: int) -> TrivialRoutine:
        return TrivialRoutine(self.config.partition)
