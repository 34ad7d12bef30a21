"""Exact reference: deploy an exact performatively stable point from the start.

Oracle access (the instance in the reset info): the PS set is enumerated exactly
(``papergym.envs.performative.oracles``: 3^d active-set enumeration on boxes, support
enumeration of Nash equilibria on simplex products, x_s for the contractive and
nonexpansive families) and the PS point nearest to x_0 is deployed at every step.
A reference, never ranked.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import papergym
from papergym.envs.performative import oracles


class ExactRule:
    oracle_access = True

    def __init__(self) -> None:
        self.instance = None
        self.target: np.ndarray | None = None

    def reset(self, info: dict | None = None) -> None:
        if info is not None and "instance" in info:
            self.instance, self.target = info["instance"], None

    def __call__(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        if self.instance is None:
            raise RuntimeError("exact: needs oracle access (the instance in the reset info)")
        if self.target is None:
            x0 = np.asarray(observation["x"], dtype=np.float64)
            if self.instance.family in ("contractive", "nonexpansive"):
                points = self.instance.known_ps[None, :]
            else:
                points = oracles.exact_ps(self.instance)
            if points.shape[0] == 0:
                return self.instance.G(x0)
            self.target = points[int(np.argmin(np.linalg.norm(points - x0, axis=1)))]
        return self.target.copy()


class ExactReference(papergym.Agent):
    """Exact PS by enumeration (oracle access)."""

    id = "exact"
    family = "performative"
    problems = ("papergym/PerformativeAffine-v*",)
    role = "reference"
    paper = "anagnostides2026"
    seed_artifact = False  # a deterministic rule: the same at every seed

    class Config(papergym.AgentConfig):
        pass

    def solve(self, view: Any, budget: papergym.Budget, seed: int) -> Any:
        return ExactRule()
