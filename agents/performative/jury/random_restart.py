"""Random-restart local search within the flip budget.

Descend (best improvement); remember the best labeling; perturb by flipping
``perturb_fraction`` of the points at random; descend again; ... while the remaining flips
cover another restart plus the walk back; finally flip back to the best labeling seen.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import papergym
from papergym.agents.performative.jury._policy import JuryPolicy


class RandomRestartPolicy(JuryPolicy):
    def __init__(self, seed: int, perturb_fraction: float) -> None:
        self.perturb_fraction = perturb_fraction
        super().__init__(seed)

    def plan(self):
        n = self.f.size
        yield from self.descend()
        best, best_u = self.f.copy(), self.model.utility(self.f)
        k = max(2, int(self.perturb_fraction * n))
        while True:
            walk_back = int(np.sum(self.f != best))
            if self.remaining() < 3 * k + walk_back + n // 4:
                break
            for i in self.rng.choice(n, size=k, replace=False):  # the restart's perturbation
                self.flip(int(i))
                yield int(i)
            yield from self.descend()
            u = self.model.utility(self.f)
            if u > best_u + 1e-9:
                best, best_u = self.f.copy(), u
        for i in np.nonzero(self.f != best)[0]:  # return to the best labeling
            if self.remaining() <= 0:
                return
            self.flip(int(i))
            yield int(i)


class RandomRestartLocalSearch(papergym.Agent):
    """Local search with random perturbation restarts, keeping the best local optimum."""

    id = "random_restart"
    family = "performative"
    problems = ("papergym/StrategicJury-v0",)
    role = "baseline"
    paper = "anagnostides2026"

    class Config(papergym.AgentConfig):
        perturb_fraction: float = 0.1

    def solve(self, view: Any, budget: papergym.Budget, seed: int) -> Any:
        return RandomRestartPolicy(seed, self.config.perturb_fraction)
