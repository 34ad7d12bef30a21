"""Random search on the solver: uniform draws in the control-point box, each verified at the
evaluation resolution; the best verified design (z = 0 included) is the final one."""

from __future__ import annotations

from papergym import Agent
from papergym.agents.aero._policies import VerifyThenHold

FFD = ("papergym/DragFFD2D-v*",)


class _Random(VerifyThenHold):
    def __init__(self, seed: int, delta_max: float) -> None:
        self.delta_max = delta_max
        super().__init__(seed)

    def propose(self, obs):
        return self.rng.uniform(-self.delta_max, self.delta_max, len(obs["z"]))


class RandomSearch(Agent):
    """B uniform draws, each verified; keep the best (the trivial optimizer of the spec)."""

    id, family, role, paper, problems = "random_search", "aero", "baseline", "unidrag2026", FFD

    def solve(self, view, budget, seed):
        return _Random(seed, float(view.delta_max))
