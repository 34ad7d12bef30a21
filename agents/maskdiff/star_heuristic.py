"""Star-shaped sampling with scores that need no training (G-Star's ablations): for t <= t_on
each step draws a full proposal x_prop from p_theta(. | x_t) (nucleus 0.9) and sends K =
ceil((1 - eps) s L) positions back to MASK, chosen uniformly at random (``star-random``: the
star shape with no remasker loaded) or as the K least confident proposed tokens (``star-conf``:
e = -p_theta(proposed token), the code's ``conf_star_shape``). They isolate what the learned
remasker adds."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from papergym.agent import Agent, AgentConfig
from papergym.agents.maskdiff.mdlm import PAPER, PROBLEMS
from papergym.envs.maskdiff.steps import Sampler


class StarConfig(AgentConfig):
    t_on: float = Field(0.3, gt=0.0, le=1.0)
    nucleus: float = Field(0.9, gt=0.0, le=1.0)


class StarRandom(Agent):
    id: ClassVar[str] = "star-random"
    family: ClassVar[str] = "maskdiff"
    role: ClassVar[str] = "baseline"
    paper: ClassVar[str] = PAPER
    problems: ClassVar[tuple[str, ...]] = PROBLEMS
    Config: ClassVar[type[AgentConfig]] = StarConfig
    scores: ClassVar[str] = "random"

    def solve(self, view: Any, budget: Any, seed: int) -> Sampler:
        return Sampler(kind="star", scores=self.scores, t_on=self.config.t_on, nucleus=self.config.nucleus)


class StarConf(StarRandom):
    id: ClassVar[str] = "star-conf"
    scores: ClassVar[str] = "confidence"
