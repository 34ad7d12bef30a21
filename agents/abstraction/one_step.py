"""One-step signatures: group states by (L(s), R(s, .)) only, the first round of refinement.

Isolates the value of closing the local one-step description under composition (the fixed
point): on instances where rewards differ only two steps ahead it merges non-bisimilar states.
"""

from __future__ import annotations

from typing import Any

from papergym.agent import Agent, AgentConfig
from papergym.agents.abstraction.bisim_refinement import RefinementRoutine


class OneStep(Agent):
    id = "one_step"
    family = "abstraction"
    role = "baseline"
    paper = "zhang2026behavioral"
    problems = ("papergym/StateAbstraction-v0",)

    class Config(AgentConfig):
        tol: float = 1e-9

    def solve(self, view: Any, budget: Any, seed: int) -> RefinementRoutine:
        return RefinementRoutine(self.config.tol, 0)
