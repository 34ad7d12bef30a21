"""The problem's SFT base policy, returned untouched: the reference every learner starts from
(normalized score 0; the ``base`` side of claim A5)."""

from __future__ import annotations

from typing import Any

from papergym.agent import Agent, AgentConfig
from papergym.agents.rlvr._common import PAPER_RESRL


class SFTBase(Agent):
    id = "sft_base"
    family = "rlvr"
    role = "reference"
    paper = PAPER_RESRL

    class Config(AgentConfig):
        pass

    def solve(self, view: Any, budget: Any, seed: int) -> Any:
        return view.base_policy().eval()
