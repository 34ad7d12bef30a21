"""A no-op Task and agent for the harness and isolation overhead benchmarks (perf only).

The Task's view is the seed and the agent returns it, so a trial measures only what the harness
adds around the contract's five lines.
"""

from __future__ import annotations

from typing import Any

import papergym
from papergym import Agent, Budget, EvalResult, Task

NOOP_ID = "papergym/PerfNoOp-v0"


class NoOpTask(Task):
    id, family, paper = NOOP_ID, "perf", "-"
    metrics = {"value": "max"}

    @property
    def budget(self) -> Budget:
        return Budget(calls=1)

    def train_view(self, seed: int, budget: Budget) -> int:
        return seed

    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        return EvalResult(metrics={"value": float(artifact == seed)})


class NoOpAgent(Agent):
    id, family, role, paper = "noop", "perf", "baseline", "-"

    def solve(self, view, budget, seed):
        return view


papergym.register(NOOP_ID, entry_point=NoOpTask, kind="task", family="perf", paper="-")
