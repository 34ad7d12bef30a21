"""LoLCATs student (Zhang et al. 2025), a baseline the paper names: softmax attention inside the
last w tokens, weighted σ(w_h) per head (learned, initialized to σ = 0.1 as LoLCATs'
``init_window_factor``), and Hedgehog linear attention beyond them at weight 1, in one normalizer,
the window's scores shifted by their maximum and the linear terms not (HazyResearch/lolcats,
``hybrid_attention_quadratic``). Departures: the Hedgehog map is softmax(W x) (LoLCATs concatenates
softmax(±W x)), and the shared pipeline fine-tunes every weight instead of LoLCATs' low-rank
update, so every student has the same recipe."""

from __future__ import annotations

from typing import ClassVar

from papergym.agents.distill._pipeline import DistillAgent


class LoLCATs(DistillAgent):
    id: ClassVar[str] = "lolcats"
    MIXER: ClassVar[str] = "lolcats"
