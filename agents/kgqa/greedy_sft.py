"""Greedy SFT (ablation baseline): the BoG-lite network trained by behaviour cloning on clean
gold trajectories only (FORWARD along the gold path, then YIELD), with BACKJUMP masked at
inference, so a dead end can only end in YIELD or HALT. Isolates the value of backjumping."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from papergym.agent import Agent, AgentConfig
from papergym.agents.kgqa.common import (
    NetPolicy,
    behaviour_clone,
    build_sft_pairs,
    seeded_net,
)


class GreedySFT(Agent):
    id = "greedy_sft"
    family = "kgqa"
    role = "baseline"
    paper = "zhang2026bog"

    class Config(AgentConfig):
        hidden: int = 64
        sft_epochs: int = 5
        sft_lr: float = 1e-3
        batch_size: int = 64
        max_train_questions: int | None = None

    def solve(self, view: Any, budget: Any, seed: int) -> NetPolicy:
        cfg = self.config
        rng = np.random.default_rng([seed, 1])
        questions = view.train[: cfg.max_train_questions]
        pairs = build_sft_pairs(view, questions, rng, wrong_frac=0.0)
        net = seeded_net(cfg.hidden, seed)
        behaviour_clone(net, pairs, cfg.sft_epochs, cfg.sft_lr, cfg.batch_size,
                        torch.Generator().manual_seed(seed))
        return NetPolicy(net, allow_backjump=False)
