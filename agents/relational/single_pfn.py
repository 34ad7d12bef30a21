"""The single-table PFN: RDB-PFN's network and loop trained on the single-table prior only, for
``steps_a + steps_b`` steps (equal compute with ``rdbpfn``): the stand-in for "a tabular
foundation model given the same DFS-linearized inputs", since no pretrained one loads offline.
``stage_a_only: true`` stops after ``steps_a`` steps (the official ``RDBPFN_single`` analogue,
reported as ``single-pfn-stageA``: less compute, a diagnostic)."""

from __future__ import annotations

from typing import Any, ClassVar

from papergym.agent import Agent
from papergym.agents.relational._pfn import InContextPredictor, PFNSize, build, pretrain, prior_draw
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
        model = build(PFNSize(c.embed, c.layers, c.heads, c.mlp), seed)
        steps = c.steps_a if c.stage_a_only else c.steps_a + c.steps_b
        pretrain(model, prior_draw(view, c.batch, 0.0), steps, c.batch, c.lr_a, seed, c.rows, c.max_columns)
        return InContextPredictor(model, seed)
