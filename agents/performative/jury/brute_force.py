"""Brute-force reference for the jury via the MaxCut identity (oracle access).

max_f U(f) = 4W + |E| + MaxCut [derived, brute-force checked in the tests], attained by the
labeling positive exactly on the vertex points of a maximum cut's side S; the policy flips the
points where the start labeling differs from it. The maximum cut comes from
``envs.performative.jury.exact_maxcut`` (enumeration up to 24 vertices, a frontier DP beyond).
A reference, never ranked.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import papergym
from papergym.envs.performative.jury import exact_maxcut


class BruteForcePolicy:
    oracle_access = True

    def __init__(self) -> None:
        self.target: np.ndarray | None = None
        self.to_flip: list[int] | None = None

    def reset(self, info: dict | None = None) -> None:
        self.target, self.to_flip = None, None
        if info is not None and "instance" in info:
            _, side = exact_maxcut(info["instance"].graph)
            self.target = np.zeros(info["instance"].n_points, dtype=np.int8)
            self.target[: side.size] = side

    def __call__(self, observation: dict[str, np.ndarray]) -> int:
        if self.to_flip is None:  # from the start labeling (all-negative or a counter's start cut)
            f = np.asarray(observation["f"])
            self.to_flip = [] if self.target is None else [int(i) for i in np.nonzero(f != self.target)[0]]
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
