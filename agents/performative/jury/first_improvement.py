"""First-improvement local search: scan the points in a fresh random order, flip the first
label that improves the jury's utility, repeat until no flip improves it."""

from __future__ import annotations

from typing import Any

import papergym
from papergym.agents.performative.jury._policy import JuryPolicy


class FirstImprovementPolicy(JuryPolicy):
    def plan(self):
        while self.remaining() > 0:
            gains = self.model.gains(self.f)
            improving = [i for i in self.rng.permutation(gains.size) if gains[i] > 1e-9]
            if not improving:
                return
            i = int(improving[0])
            self.flip(i)
            yield i


class FirstImprovementLocalSearch(papergym.Agent):
    """First-improvement local search in random order."""

    id = "first_improvement"
    family = "performative"
    problems = ("papergym/StrategicJury-v0",)
    role = "baseline"
    paper = "anagnostides2026"

    class Config(papergym.AgentConfig):
        pass

    def solve(self, view: Any, budget: papergym.Budget, seed: int) -> Any:
        return FirstImprovementPolicy(seed)
