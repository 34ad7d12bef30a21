"""Incremental PC (iPC; Salvatori et al., ICLR 2024): the latents and the weights are updated
together at every inference step (here one AdamW step on the local losses at the current
latents per inference step), uniform precision, settled-state errors."""

from __future__ import annotations

from typing import ClassVar

from papergym.agents.predcoding.pc import PCLearner, UniformPCConfig


class IPC(PCLearner):
    id: ClassVar[str] = "ipc"
    role: ClassVar[str] = "baseline"
    incremental: ClassVar[bool] = True
    Config: ClassVar[type] = UniformPCConfig
