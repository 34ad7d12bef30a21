"""The references the paper's figure shows beside the ranked methods (shown, never ranked).

- ``joint``: one multitask LoRA trained on every task seen so far: each step takes the current
  task's minibatch and as many stored samples of the earlier tasks (full replay, within the
  same number of steps), so after the last task it has been trained on all tasks jointly.
- ``per_task`` ("LoRA-first"): a separate LoRA from the backbone per task, used with the task
  identity known at test (a privilege of reference agents): the upper bound without
  interference.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import torch

from papergym.agents.continual._common import Learner, StreamAgent
from papergym.agents.continual.seq_lora import LoRALearner


class JointLearner(LoRALearner):
    def __init__(self, view: Any, cfg: Any) -> None:
        super().__init__(view, cfg)
        self.memory: list[tuple[np.ndarray, np.ndarray]] = []
        self.replay_rng = np.random.default_rng(int(view.init_seed))
        self.previous: list[torch.Tensor] | None = None
        self.seen: list[tuple[np.ndarray, np.ndarray]] = []

    def begin_task(self, data: Any) -> None:
        if self.previous is None:  # one adapter for the whole stream
            super().begin_task(data)
            self.previous = [torch.zeros_like(self.W[i]) for i in self.adapted]
        self.memory = list(self.seen)
        self.seen_now: list[tuple[np.ndarray, np.ndarray]] = []

    def batch(self, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The current minibatch plus as many stored samples of earlier tasks."""
        self.seen_now.append((X, y))
        if not self.memory:
            return X, y
        Xm = np.concatenate([m[0] for m in self.memory])
        ym = np.concatenate([m[1] for m in self.memory])
        pick = self.replay_rng.choice(len(ym), size=len(y), replace=len(ym) < len(y))
        return np.concatenate([X, Xm[pick]]), np.concatenate([y, ym[pick]])

    def end_task(self, data: Any) -> list[np.ndarray]:
        first_epoch = self.seen_now[: data.batches.batches_per_epoch]  # one copy of the task's data
        self.seen.append((np.concatenate([b[0] for b in first_epoch]),
                          np.concatenate([b[1] for b in first_epoch])))
        current = [d.detach().clone() for d in self.deltas()]
        update = [(c - p).double().numpy() for c, p in zip(current, self.previous)]
        self.previous = current
        return update


class PerTaskLearner(LoRALearner):
    def end_task(self, data: Any) -> list[np.ndarray]:
        return [d.detach().double().numpy() for d in self.deltas()]  # never merged

    def submit_options(self) -> dict[str, Any]:
        return {"task_specific": True}


class Joint(StreamAgent):
    id: ClassVar[str] = "joint"
    role: ClassVar[str] = "reference"
    learner: ClassVar[type[Learner]] = JointLearner


class PerTask(StreamAgent):
    id: ClassVar[str] = "per_task"
    role: ClassVar[str] = "reference"
    learner: ClassVar[type[Learner]] = PerTaskLearner
