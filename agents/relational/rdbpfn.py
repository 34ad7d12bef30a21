"""RDB-PFN (arXiv 2603.03805): a PFN pretrained on synthetic relational databases only.

Stage A: ``steps_a`` steps on the single-table prior; stage B, from it: ``steps_b`` steps on a
3:1 mixture of relational tasks (DFS-linearized hidden-parent-attribute, temporal-aggregation and
child-row tasks) and single-table tasks [code: stage 2 mixes relational priors with the single-
table prior]. Both stages minimize the cross-entropy on the test rows of each prior task (the
PFN objective). The artifact predicts in context: one forward pass, no gradient step at
prediction time. Scaled [recon]: E 32, 2 layers, 2 heads, MLP 64 (official 96/6/4/192), AdamW
with warm-up and cosine decay instead of the schedule-free optimizer, batch 8 tasks of 64 rows.
"""

from __future__ import annotations

from typing import Any, ClassVar

from papergym.agent import Agent, AgentConfig
from papergym.agents.relational._pfn import InContextPredictor, PFNSize, build, pretrain, prior_draw


class RDBPFN(Agent):
    id: ClassVar[str] = "rdbpfn"
    family: ClassVar[str] = "relational"
    role: ClassVar[str] = "method"
    paper: ClassVar[str] = "rdbpfn2026"

    class Config(AgentConfig):
        embed: int = 32
        layers: int = 2
        heads: int = 2
        mlp: int = 64
        steps_a: int = 500
        steps_b: int = 500
        batch: int = 8
        rows: int = 64  # per prior task: a random train/test split of them per batch
        max_columns: int = 16  # per prior task in training (a random subset)
        lr_a: float = 3e-3
        lr_b: float = 3e-3
        relational_share: float = 0.75  # stage B's relational : single mixture, 3:1

    def solve(self, view: Any, budget: Any, seed: int) -> InContextPredictor:
        c = self.config
        model = build(PFNSize(c.embed, c.layers, c.heads, c.mlp), seed)
        pretrain(model, prior_draw(view, c.batch, 0.0), c.steps_a, c.batch, c.lr_a, seed, c.rows,
                 c.max_columns)
        pretrain(model, prior_draw(view, c.batch, c.relational_share), c.steps_b, c.batch, c.lr_b, seed + 1,
                 c.rows, c.max_columns)
        return InContextPredictor(model, seed)
