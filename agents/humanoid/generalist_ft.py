"""Generalist-FT (the paper's C4 baseline): the XHugWBC generalist, fine-tuned with the same
PPO on each held-out body alone before it is scored there.

  pretraining  exactly ``xhugwbc_lite``: the same network, randomization, PPO and budget
  adapt        on the problem's metered view of one held-out body (``finetune_steps`` env
               steps; 2.5e4 in the paper's protocol), PPO goes on from the pretrained policy:
               its network, exploration std and observation statistics, with a fresh Adam
               and return scaler and the lr annealed over the fine-tuning budget
               [recon: the paper gives the step count, not the optimizer settings]
The problem calls ``adapt`` once per held-out body (``papergym.problem.adapted``), each time
from the pretrained policy, and scores what it returns on that body's held-out episodes.
"""

from __future__ import annotations

from papergym.agent import Agent

from .ppo_core import GeneralistPolicy, train_ppo
from .xhugwbc_lite import XHugWBCLite


class FineTunablePolicy(GeneralistPolicy):
    """The pretrained generalist; ``adapt`` returns a copy fine-tuned on the offered body."""

    def __init__(self, policy: GeneralistPolicy, config: XHugWBCLite.Config) -> None:
        super().__init__(policy.net, policy.norm, policy.n_slots, policy.env_options,
                         policy.log_std)
        self.config = config

    def adapt(self, view, budget, seed) -> GeneralistPolicy:
        # one body, as the problem offers it: no pool randomization to choose
        config = self.config.model_copy(update={"randomization": None})
        return train_ppo(view, budget, seed, None, config, self.env_options, start=self)


class GeneralistFT(Agent):
    """XHugWBC generalist whose policy fine-tunes itself on each held-out body (Generalist-FT)."""

    id = "generalist_ft"
    family = "humanoid"
    role = "baseline"
    paper = "xue2026xhugwbc"

    class Config(XHugWBCLite.Config):
        pass

    def solve(self, view, budget, seed):
        pretrained = XHugWBCLite(self.config.model_dump()).solve(view, budget, seed)
        return FineTunablePolicy(pretrained, self.config)
