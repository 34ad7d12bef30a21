"""MDLM ancestral sampling (Sahoo et al. 2024; the official ``ddpm_cache`` update): at each grid
step t -> s every masked position is revealed with probability (t - s)/t by a draw of
p_theta(. | x_t); revealed tokens are never revisited. The paper's base sampler."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field

from papergym.agent import Agent, AgentConfig
from papergym.envs.maskdiff.steps import Sampler

PAPER = "gstar2026"
PROBLEMS = ("papergym/MaskedDiffusionHMM-v0",)


class MDLM(Agent):
    id: ClassVar[str] = "mdlm"
    family: ClassVar[str] = "maskdiff"
    role: ClassVar[str] = "baseline"
    paper: ClassVar[str] = PAPER
    problems: ClassVar[tuple[str, ...]] = PROBLEMS

    class Config(AgentConfig):
        nucleus: float = Field(1.0, gt=0.0, le=1.0)

    def solve(self, view: Any, budget: Any, seed: int) -> Sampler:
        return Sampler(kind="mdlm", nucleus=self.config.nucleus)
