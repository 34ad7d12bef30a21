"""The single-table PFN: RDB-PFN's network, loop and shared stage A, with stage B on the
single-table prior only (``steps_a + steps_b`` steps: equal compute with ``rdbpfn``): the
stand-in for "a tabular foundation model given the same DFS-linearized inputs", since no
pretrained one loads offline. ``stage_a_only: true`` stops after stage A (the official
``RDBPFN_single`` analogue, reported as ``single-pfn-stageA``: less compute, a diagnostic)."""

from __future__ import annotations

from typing import Any, ClassVar

from papergym.agent import Agent
from papergym.agents.relational._pfn import InContextPredictor, pretrained
from papergym.agents.relational.rdbpfn import RDBPFN


class SinglePFN(Agent):
    id: ClassVar[str] = "single-pfn"
    family: ClassVar[str] = "relational"
    role: ClassVar[str] = "baseline"
    paper: ClassVar[str] = "rdbpfn2026"

    class Config(RDBPFN.Config):
        stage_a_only: bool = False

    def solve(self, view: Any, budget: Any, seed: int) -> InContextPredictor:
        c = self.config
        return InContextPredictor(pretrained(view, c, seed, 0.0, stage_b=not c.stage_a_only), seed,
                                  c.shuffle_labels)
