"""Exact bisimulation by partition refinement: the quotient along the largest homomorphism.

The object the transfer results are about [spec; classic: Givan, Dean & Greig 2003]:
    blocks = classes of (L(s), round(R(s, .), tol))
    repeat: key(s) = (block(s), [round(sum_{s' in B} P(s'|s, a), tol) for a, B]);
            split blocks by key, until no block splits.
Model access. ``max_rounds`` stops refinement early (0 = the one-step signature).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from papergym.agent import Agent, AgentConfig
from papergym.envs.abstraction.core import MDP
from papergym.envs.abstraction.oracles import coarsest_bisimulation


class RefinementRoutine:
    def __init__(self, tol: float, max_rounds: int | None) -> None:
        self.tol, self.max_rounds = tol, max_rounds

    def __call__(self, mdp: MDP) -> np.ndarray:
        return coarsest_bisimulation(mdp, self.tol, self.max_rounds)


class BisimRefinement(Agent):
    id = "bisim_refinement"
    family = "abstraction"
    role = "method"
    paper = "zhang2026behavioral"
    problems = ("papergym/StateAbstraction-v*",)

    class Config(AgentConfig):
        tol: float = 1e-9

    def solve(self, view: Any, budget: Any, seed: int) -> RefinementRoutine:
        return RefinementRoutine(self.config.tol, None)
