"""DeepPC (Qi, Forasassi, Lukasiewicz, Salvatori, ICML 2026): deep PC networks trained with
(1) the precision schedule "S": at inference step t the energy layer L−1−t has precision 1, the
layers above it alpha and those below it none, so an error wave travels one layer per step from
the output to the input and every layer is at full precision exactly when it arrives
(``core.precisions``); (2) the new weight update "FU": each layer regresses its settled latent
from its feed-forward input, ½||h_l − f_l(h0_{l−1}; W_l)||², so the error a weight sees does not
compound through latents that inference already moved (``core.update_errors``); (3) auxiliary
identity neurons on every residual skip, so skip energy reaches deeper layers with the main
path's delay (``core`` docstring). Defaults from the official code's example config [code]; the
ablations below remove one component each.
"""

from __future__ import annotations

from typing import ClassVar

from papergym.agents.predcoding.pc import PCLearner, UniformPCConfig


class DeepPC(PCLearner):
    id: ClassVar[str] = "deeppc"
    role: ClassVar[str] = "method"
    schedule: ClassVar[str] = "S"
    weight_update: ClassVar[str] = "fu"
    aux: ClassVar[bool] = True


class DeepPCNoS(DeepPC):
    """Ablation: uniform precision (with FU and auxiliary neurons)."""

    id: ClassVar[str] = "deeppc_nos"
    role: ClassVar[str] = "baseline"
    schedule: ClassVar[str] = "uniform"
    Config: ClassVar[type] = UniformPCConfig


class DeepPCNoFU(DeepPC):
    """Ablation: the settled-state weight update (with S and auxiliary neurons)."""

    id: ClassVar[str] = "deeppc_nofu"
    role: ClassVar[str] = "baseline"
    weight_update: ClassVar[str] = "settled"


class DeepPCNoAux(DeepPC):
    """Ablation: residual skips without auxiliary neurons (with S and FU)."""

    id: ClassVar[str] = "deeppc_noaux"
    role: ClassVar[str] = "baseline"
    problems: ClassVar[tuple[str, ...]] = ("papergym/PCDepthResidual-v0",)
    aux: ClassVar[bool] = False
