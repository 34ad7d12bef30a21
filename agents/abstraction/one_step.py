"""One-step signatures: group states by (L(s), R(s, .)) only, the first round of refinement.

Isolates the value of closing the local one-step description under composition (the fixed
point): where abstract states share a one-step signature (StateAbstraction-v1's repeated reward
values) it merges non-bisimilar states. Rewards are compared after rounding to the tolerance
``tol``, tuned by the one protocol with the budget of the clustering agents: the default 1e-9
(exact signatures) first, then its own draws from log-U[1e-3, 1] (a tolerance near 0.5 rounds
rewards perturbed around {0, 0.5, 1} back to their levels).
"""

from __future__ import annotations

from typing import Any

from papergym.agent import Agent, AgentConfig
from papergym.agents.abstraction.bisim_refinement import RefinementRoutine
from papergym.agents.abstraction.common import tuned_routine
from papergym.tuning import LogUniform, Tuned


class OneStep(Tuned, Agent):
    id = "one_step"
    family = "abstraction"
    role = "baseline"
    paper = "zhang2026behavioral"
    problems = ("papergym/StateAbstraction-v*",)
    search_space = {"tol": LogUniform(1e-3, 1.0)}

    class Config(AgentConfig):
        tol: float = 1e-9  # exact one-step signatures
        tune: bool = True  # tune tol by the protocol when the view grants tuning runs

    def solve(self, view: Any, budget: Any, seed: int) -> RefinementRoutine:
        return tuned_routine(self, view, lambda c: RefinementRoutine(c.tol, 0))
