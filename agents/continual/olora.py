"""O-LoRA (Wang et al. 2023, "Orthogonal Subspace Learning for Language Model Continual
Learning"): a LoRA per task, earlier tasks' adapters frozen, and the new task's A kept
orthogonal to the earlier ones by the penalty lambda * sum_{s<t} ||A_s A_t^T||_F^2 (their eq. 8,
summed over the adapted layers); prediction with W_0 + sum_s (alpha / r) B_s A_s."""

from __future__ import annotations

from typing import Any, ClassVar

import torch

from papergym.agents.continual._common import LR_RANGE, Learner, StreamAgent, StreamConfig
from papergym.agents.continual.seq_lora import LoRALearner
from papergym.tuning import Choice


class OLoRAConfig(StreamConfig):
    orth_lambda: float = 0.5  # lambda_1; tuned in {0.1, 0.5}


class OLoRALearner(LoRALearner):
    def __init__(self, view: Any, cfg: Any) -> None:
        super().__init__(view, cfg)
        self.frozen_A: list[list[torch.Tensor]] = [[] for _ in self.adapted]  # per layer, earlier tasks

    def penalty(self) -> torch.Tensor | float:
        total: torch.Tensor | float = 0.0
        for A, earlier in zip(self.A, self.frozen_A):
            for A_s in earlier:
                total = total + ((A_s @ A.T) ** 2).sum()
        return self.cfg.orth_lambda * total

    def end_task(self, data: Any) -> list:
        for earlier, A in zip(self.frozen_A, self.A):
            earlier.append(A.detach().clone())
        return super().end_task(data)  # merging W_0 + sum_s B_s A_s predicts the same


class OLoRA(StreamAgent):
    id: ClassVar[str] = "olora"
    role: ClassVar[str] = "baseline"
    Config: ClassVar[type] = OLoRAConfig
    learner: ClassVar[type[Learner]] = OLoRALearner
    search_space = {"lr": LR_RANGE, "orth_lambda": Choice((0.1, 0.5))}
