"""Brute-force reference for the jury via the MaxCut identity (oracle access).

max_f U(f) = 4W + |E| + MaxCut [derived, brute-force checked in the tests], attained by the
labeling positive exactly on the vertex points of a maximum cut's side S. The maximum cut
comes from exact enumeration (``envs.performative.jury.exact_maxcut``, |V| <= 24). A reference, never ranked.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import papergym
from papergym.envs.performative.jury import exact_maxcut


class BruteForcePolicy:
    oracle_access = True

    def __init__(self) -> None:
        self.to_flip: list[int] = []

    def reset(self, info: dict | None = None) -> None:
        if info is None or "instance" not in info:
            self.to_flip = []
            return
        _, side = exact_maxcut(info["instance"].graph)
        self.to_flip = [int(v) for v in np.nonzero(side)[0]]

    def __call__(self, observation: dict[str, np.ndarray]) -> int:
        if not self.to_flip:
            return int(observation["f"].size)
        return self.to_flip.pop(0)


class BruteForceJury(papergym.Agent):
    """Optimal jury labeling from an exact MaxCut (oracle access)."""

    id = "brute_force"
    family = "performative"
    problems = ("papergym/StrategicJury-v0",)
    role = "reference"
    paper = "anagnostides2026"

    class Config(papergym.AgentConfig):
        pass

    def solve(self, view: Any, budget: papergym.Budget, seed: int) -> Any:
        return BruteForcePolicy()
