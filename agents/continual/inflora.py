"""InfLoRA (Liang & Li 2024, "InfLoRA: Interference-Free Low-Rank Adaptation for Continual
Learning"): the down-projection A_t is designed, not learned — its rows are the top r
eigenvectors of Hhat Hhat^T, Hhat = (I - M M^T) H_t the new task's layer inputs with the
earlier tasks' input subspace M projected out (their eq. 9-10), so the update B_t A_t cannot
move the outputs on earlier inputs; only B_t (init 0) is trained; merged after the task; M then
grows GPM-style on the task's inputs until it captures ``threshold`` of their energy (their
DualGPM, kept here in its plain GPM form [recon])."""

from __future__ import annotations

from typing import Any, ClassVar

import torch

from papergym.agents.continual._common import (
    LR_RANGE,
    Learner,
    StreamAgent,
    StreamConfig,
    grow_subspace,
)
from papergym.tuning import Choice


class InfLoRAConfig(StreamConfig):
    threshold: float = 0.99  # tuned in {0.95, 0.99}


class InfLoRALearner(Learner):
    def __init__(self, view: Any, cfg: Any) -> None:
        super().__init__(view, cfg)
        self.M = [torch.zeros(self.W[i].shape[1], 0) for i in self.adapted]  # input subspaces

    def begin_task(self, data: Any) -> None:
        X, _ = data.gradient_data()  # pass 1: the new task's inputs at the current network
        self.A, self.B = [], []
        for H, M, i in zip(self.layer_inputs(X), self.M, self.adapted):
            H = H.T.double()  # (in, n)
            Hhat = H - M.double() @ (M.double().T @ H)
            P, _, _ = torch.linalg.svd(Hhat, full_matrices=False)  # eigenvectors of Hhat Hhat^T
            self.A.append(P[:, : self.rank].T.float().contiguous())
            self.B.append(torch.zeros(self.W[i].shape[0], self.rank, requires_grad=True))

    def parameters(self) -> list[torch.Tensor]:
        return list(self.B)

    def deltas(self) -> list[torch.Tensor]:
        return [self.scale * B @ A for A, B in zip(self.A, self.B)]

    def end_task(self, data: Any) -> list:
        update = super().end_task(data)
        X, _ = data.gradient_data()  # pass 2: inputs after the task, for the memory
        for k, H in enumerate(self.layer_inputs(X)):
            self.M[k] = grow_subspace(self.M[k], H.T, self.cfg.threshold, H.shape[1] - self.rank)
        return update


class InfLoRA(StreamAgent):
    id: ClassVar[str] = "inflora"
    role: ClassVar[str] = "baseline"
    Config: ClassVar[type] = InfLoRAConfig
    learner: ClassVar[type[Learner]] = InfLoRALearner
    search_space = {"lr": LR_RANGE, "threshold": Choice((0.95, 0.99))}
