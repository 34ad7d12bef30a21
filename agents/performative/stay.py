"""Stay: never update. The trivial agent of every performative problem.

Deploys the starting point x_0 (PerformativeAffine-v0, StrategicCredit-v0: theta_0) at every
round, keeps every player's starting strategy (PerformativeGame-v0), and stops at once on the
jury (StrategicJury-v0: the starting labeling). It spends no budget on training. A section's
reference must beat it by a margin for the section to discriminate anything: on the affine
problem its gap reduction is 0 by construction (tests/envs/test_performative.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import papergym
from papergym.agents.performative._deploy import DeploymentRule, adapter_for
from papergym.agents.performative.games._joint import JointPolicy
from papergym.agents.performative.jury._policy import JuryPolicy


class StayRule(DeploymentRule):
    def step(self, observation: dict[str, np.ndarray], t: int) -> np.ndarray:
        return self.adapter.point(observation)  # x_{t+1} = x_t = x_0


class StayJointPolicy(JointPolicy):
    def update(self, state: dict[str, Any], own: np.ndarray, grad: np.ndarray) -> np.ndarray:
        return own


class StayJuryPolicy(JuryPolicy):
    def plan(self):
        yield from ()  # no flip: STOP on the first observation


class Stay(papergym.Agent):
    """Never update: deploy, play or keep the starting point."""

    id = "stay"
    family = "performative"
    role = "baseline"
    paper = "anagnostides2026"
    seed_artifact = False  # a deterministic rule: the same at every seed

    class Config(papergym.AgentConfig):
        pass

    def solve(self, view: Any, budget: papergym.Budget, seed: int) -> Any:
        if view.problem == "game":
            return StayJointPolicy(view.kind, view.block_sizes, view.horizon)
        if view.problem == "jury":
            return StayJuryPolicy(seed)
        return StayRule(adapter_for(view))
