"""A CPU-bound problem and an idle agent for the executor scaling benchmark (perf only)."""

from __future__ import annotations

import numpy as np

import papergym
from papergym import Agent, AgentConfig, Budget, EvalResult, Task


class BusyTask(Task):
    """Evaluation burns a fixed amount of single-threaded CPU (a seeded power iteration)."""

    id, family, paper = "papergym/PerfBusy-v0", "perf", "-"
    metrics = {"eigenvalue": "max"}
    task_kwargs = ("iterations",)

    def __init__(self, tier: str = "smoke", iterations: int = 2000) -> None:
        super().__init__(tier=tier)
        self.iterations = iterations

    @property
    def budget(self) -> Budget:
        return Budget(calls=1)

    def train_view(self, seed: int, budget: Budget) -> int:
        return seed

    def evaluate(self, artifact: object, seed: int) -> EvalResult:
        rng = np.random.default_rng(seed)
        a = rng.normal(size=(200, 200))
        a = a @ a.T
        v = np.ones(200)
        for _ in range(self.iterations):
            v = a @ v
            v /= np.linalg.norm(v)
        return EvalResult(metrics={"eigenvalue": float(v @ a @ v)})


class Idle(Agent):
    id, family, role, paper = "idle", "perf", "baseline", "-"

    class Config(AgentConfig):
        pass

    def solve(self, view, budget, seed):
        return None


papergym.register("papergym/PerfBusy-v0", entry_point=BusyTask, kind="task", family="perf",
                  paper="-")
