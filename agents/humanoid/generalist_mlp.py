"""MLP generalist (the paper's MLP ablation, MorAL-like): the padded flat observation -> MLP
[256, 128] -> J_max action means, masked by I; critic MLP on the observation plus privileged
state. Same PPO, randomization and budget as XHugWBC: rsl_rl's update (5 epochs x 4
minibatches of 512, lr adapted to a KL of 0.01 from 1e-3) instead of CleanRL's 10 x 64 of 32
at a fixed 3e-4: training costs 1.9x the env per step instead of 3.6x, with the same
learning (``HumanoidPPOConfig`` has the measurements).
"""

from __future__ import annotations

import torch
from torch import nn

from papergym.agent import Agent

from .ppo_core import ActorCritic, HumanoidPPOConfig, Parts, train_ppo


class MLPActorCritic(ActorCritic):
    def __init__(self, parts: Parts, d_priv: int, hidden: tuple[int, ...]) -> None:
        super().__init__()
        self.parts = parts

        def mlp(d_in, d_out, gain):
            layers, d = [], d_in
            for h in hidden:
                layers += [nn.Linear(d, h), nn.Tanh()]
                d = h
            last = nn.Linear(d, d_out)
            nn.init.orthogonal_(last.weight, gain)
            nn.init.zeros_(last.bias)
            return nn.Sequential(*layers, last)

        self.pi = mlp(parts.size, parts.j, 0.01)
        self.v = mlp(parts.size + d_priv, 1, 1.0)

    def actor(self, obs):
        return self.pi(obs) * self.parts.present(obs), None

    def value(self, obs, privileged):
        return self.v(torch.cat([obs, privileged], -1)).squeeze(-1)


class GeneralistMLP(Agent):
    """MLP generalist over the padded slot observation."""

    id = "generalist_mlp"
    family = "humanoid"
    role = "baseline"
    paper = "xue2026xhugwbc"

    class Config(HumanoidPPOConfig):
        hidden: tuple[int, ...] = (256, 128)

    def solve(self, view, budget, seed):
        c = self.config
        return train_ppo(view, budget, seed,
                         lambda parts, dp, de: MLPActorCritic(parts, dp, c.hidden), c)
