"""SD-LoRA (Wu et al. 2025, "SD-LoRA: Scalable Decoupled Low-Rank Adaptation for Class
Incremental Learning"): W = W_0 + sum_{s<t} alpha_s B_s A_s / ||B_s A_s||_F + (alpha / r) B_t A_t —
earlier tasks' directions frozen with their magnitudes alpha_s learned further, the current LoRA
(B_t = 0, A_t Kaiming) trained as usual. When a task ends its LoRA becomes a frozen direction
with alpha_t = (alpha / r) ||B_t A_t||_F, so the network is unchanged [recon: the current
component's parameterization]. Nothing is merged."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import torch

from papergym.agents.continual._common import Learner, StreamAgent
from papergym.agents.continual.seq_lora import LoRALearner


class SDLoRALearner(LoRALearner):
    def __init__(self, view: Any, cfg: Any) -> None:
        super().__init__(view, cfg)
        self.directions: list[list[torch.Tensor]] = [[] for _ in self.adapted]  # frozen, unit norm
        self.magnitudes: list[torch.Tensor] = [torch.zeros(0) for _ in self.adapted]  # alpha_s per layer
        self.previous = [torch.zeros_like(self.W[i], dtype=torch.float64) for i in self.adapted]

    def begin_task(self, data: Any) -> None:
        super().begin_task(data)
        self.magnitudes = [m.detach().clone().requires_grad_() for m in self.magnitudes]

    def parameters(self) -> list[torch.Tensor]:
        return [*super().parameters(), *(m for m in self.magnitudes if len(m))]

    def deltas(self) -> list[torch.Tensor]:
        out = []
        for A, B, frozen, alpha in zip(self.A, self.B, self.directions, self.magnitudes):
            total = self.scale * B @ A
            for a, D in zip(alpha, frozen):
                total = total + a * D
            out.append(total)
        return out

    def end_task(self, data: Any) -> list[np.ndarray]:
        with torch.no_grad():
            total = [d.double() for d in self.deltas()]
            for k, (A, B) in enumerate(zip(self.A, self.B)):
                current = self.scale * B @ A
                norm = torch.linalg.norm(current)
                if norm > 0:
                    self.directions[k].append(current / norm)
                    self.magnitudes[k] = torch.cat([self.magnitudes[k].detach(), norm.reshape(1)])
        update = [(t - p).numpy() for t, p in zip(total, self.previous)]
        self.previous = total
        return update


class SDLoRA(StreamAgent):
    id: ClassVar[str] = "sdlora"
    role: ClassVar[str] = "baseline"
    learner: ClassVar[type[Learner]] = SDLoRALearner
