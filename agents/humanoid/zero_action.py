"""Zero-action reference (lower end of the normalized score): a = 0 holds the default pose."""

from __future__ import annotations

import numpy as np

from papergym.agent import Agent, AgentConfig


class ZeroActionPolicy:
    def __init__(self, n_slots: int) -> None:
        self.n_slots = n_slots

    def __call__(self, observation) -> np.ndarray:
        return np.zeros(self.n_slots, np.float32)


class ZeroAction(Agent):
    """a = 0 on every slot; trains nothing and spends no budget."""

    id = "zero_action"
    family = "humanoid"
    role = "reference"
    paper = "xue2026xhugwbc"

    class Config(AgentConfig):
        pass

    def solve(self, view, budget, seed):
        env = view.make_env()
        n_slots = int(env.action_space.shape[0])
        env.close()
        return ZeroActionPolicy(n_slots)
