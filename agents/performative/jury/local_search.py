"""Best-improvement local search for the jury (the PLS dynamics of the gadget).

Flip the label with the largest utility gain; stop at a strategic local optimum (no flip
improves U). From all-negative every flip is a vertex point and the result is a 1-flip locally
maximal cut (Anagnostides et al. 2026, appendix; checked by the problem, claim C6).
"""

from __future__ import annotations

from typing import Any

import papergym
from papergym.agents.performative.jury._policy import JuryPolicy


class BestImprovementPolicy(JuryPolicy):
    def plan(self):
        yield from self.descend()


class BestImprovementLocalSearch(papergym.Agent):
    """Steepest-ascent local search over single label flips."""

    id = "local_search"
    family = "performative"
    problems = ("papergym/StrategicJury-v0",)
    role = "baseline"
    paper = "anagnostides2026"

    class Config(papergym.AgentConfig):
        pass

    def solve(self, view: Any, budget: papergym.Budget, seed: int) -> Any:
        return BestImprovementPolicy(seed)
