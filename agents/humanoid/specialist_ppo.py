"""Per-embodiment specialist (the paper's per-robot HugWBC specialists; upper reference):
stable-baselines3 PPO with MlpPolicy on the flat observation of the section's single training
body, with SB3's (= CleanRL's) MuJoCo settings and exploration std 0.2, for the budget's steps.
It runs the PPO routine the problem uses for its v1 normalization reference
(envs/humanoid/reference.py), without the plateau rule: a trial spends exactly its budget.
"""

from __future__ import annotations

from typing import Any

from papergym.agent import Agent, AgentConfig
from papergym.envs.humanoid.reference import V1_SPECIALIST_PPO, train_specialist


class SpecialistPPO(Agent):
    """SB3 PPO trained on one body (the section's training set is that body)."""

    id = "specialist_ppo"
    family = "humanoid"
    role = "reference"
    paper = "xue2026xhugwbc"

    class Config(AgentConfig):
        hyperparameters: dict[str, Any] = dict(V1_SPECIALIST_PPO)

    def solve(self, view, budget, seed):
        steps = int(budget.remaining("env_steps"))
        return train_specialist(view.make_env, steps, seed, dict(self.config.hyperparameters))
