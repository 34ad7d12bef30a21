"""Sequential LoRA: a fresh LoRA per task (A Kaiming-uniform, B = 0, scale alpha / r), trained
on the task and merged into the weights before the next (Hu et al. 2022, run sequentially)."""

from __future__ import annotations

from typing import Any, ClassVar

import torch

from papergym.agents.continual._common import Learner, StreamAgent, kaiming_uniform


class LoRALearner(Learner):
    """Delta W = (alpha / r) B A per adapted layer, B (out, r) = 0 and A (r, in) at task start."""

    def begin_task(self, data: Any) -> None:
        self.A, self.B = [], []
        for i in self.adapted:
            out, inp = self.W[i].shape
            self.A.append(kaiming_uniform(self.rank, inp, self.gen).requires_grad_())
            self.B.append(torch.zeros(out, self.rank, requires_grad=True))

    def parameters(self) -> list[torch.Tensor]:
        return [*self.A, *self.B]

    def deltas(self) -> list[torch.Tensor]:
        return [self.scale * B @ A for A, B in zip(self.A, self.B)]


class SeqLoRA(StreamAgent):
    id: ClassVar[str] = "seq_lora"
    role: ClassVar[str] = "baseline"
    learner: ClassVar[type[Learner]] = LoRALearner
