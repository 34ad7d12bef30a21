"""Per-embodiment specialist (the paper's per-robot HugWBC specialists; upper reference):
stable-baselines3 PPO with MlpPolicy on the flat observation of the section's single training
body, with the RL-Baselines3-Zoo Walker2d hyperparameters (set in the benchmark spec). It runs
the same routine the problem uses for its normalization reference (envs/humanoid/reference.py).
"""

from __future__ import annotations

from typing import Any

from papergym.agent import Agent, AgentConfig
from papergym.envs.humanoid.reference import ZOO_WALKER2D_PPO, train_specialist


class SpecialistPPO(Agent):
    """SB3 PPO trained on one body (the section's training set is that body)."""

    id = "specialist_ppo"
    family = "humanoid"
    role = "reference"
    paper = "xue2026xhugwbc"

    class Config(AgentConfig):
        hyperparameters: dict[str, Any] = dict(ZOO_WALKER2D_PPO)

    def solve(self, view, budget, seed):
        steps = int(budget.remaining("env_steps"))
        return train_specialist(view.make_env, steps, seed, dict(self.config.hyperparameters))
