"""The three-factor estimator (learnability x reliability x completeness), our
operationalization of the abstract's estimator [recon]; formulas in ``_common``."""

from __future__ import annotations

from typing import Any, ClassVar

from papergym.agent import Agent
from papergym.agents.pretext._common import lrc_estimates


class LRC(Agent):
    """acc_est = acc_sup + (acc_ceil - acc_sup) * L * C * (2R - 1), one budgeted run per pretext."""

    id: ClassVar[str] = "lrc"
    family: ClassVar[str] = "pretext"
    role: ClassVar[str] = "method"
    paper: ClassVar[str] = "jia2026pretext"

    def solve(self, view: Any, budget: Any, seed: int) -> dict[str, float]:
        return lrc_estimates(view, seed)
