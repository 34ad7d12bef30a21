"""ReMDM-cap (Wang et al. 2025; the official ``remdm_mode=cap``): with alpha_t = 1 - m_t and
sigma_t = min(eta, (1 - alpha_s)/alpha_t), a revealed token is remasked with probability sigma_t
and a masked one revealed with probability (alpha_s - (1 - sigma_t) alpha_t)/(1 - alpha_t).
eta = 0.008 [code]. ``schedule: rescale`` is the code's other schedule (sigma_t = eta sigma_max)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from papergym.agent import Agent, AgentConfig
from papergym.agents.maskdiff.mdlm import PAPER, PROBLEMS
from papergym.envs.maskdiff.steps import Sampler


class ReMDM(Agent):
    id: ClassVar[str] = "remdm"
    family: ClassVar[str] = "maskdiff"
    role: ClassVar[str] = "baseline"
    paper: ClassVar[str] = PAPER
    problems: ClassVar[tuple[str, ...]] = PROBLEMS

    class Config(AgentConfig):
        eta: float = Field(0.008, ge=0.0, le=1.0)
        nucleus: float = Field(1.0, gt=0.0, le=1.0)
        schedule: Literal["cap", "rescale"] = "cap"

    def solve(self, view: Any, budget: Any, seed: int) -> Sampler:
        return Sampler(kind="remdm", eta=self.config.eta, nucleus=self.config.nucleus,
                       remdm_schedule=self.config.schedule)
