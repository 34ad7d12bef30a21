"""Single-factor ablations of the three-factor estimator: score = L, R or C alone (the same
measurements as ``lrc``), ``supervised`` at the median score."""

from __future__ import annotations

from typing import Any, ClassVar

from papergym.agent import Agent
from papergym.agents.pretext._common import factors, with_median_supervised


class _OneFactor(Agent):
    family: ClassVar[str] = "pretext"
    role: ClassVar[str] = "baseline"
    paper: ClassVar[str] = "jia2026pretext"
    factor: ClassVar[str] = "L"

    def solve(self, view: Any, budget: Any, seed: int) -> dict[str, float]:
        measured = factors(view, seed, need_r=self.factor == "R")
        return with_median_supervised({pid: float(getattr(f, self.factor)) for pid, f in measured.items()})


class LOnly(_OneFactor):
    id: ClassVar[str] = "l_only"
    factor: ClassVar[str] = "L"


class ROnly(_OneFactor):
    id: ClassVar[str] = "r_only"
    factor: ClassVar[str] = "R"


class COnly(_OneFactor):
    id: ClassVar[str] = "c_only"
    factor: ClassVar[str] = "C"
