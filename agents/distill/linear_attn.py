"""Linear attention student (Katharopoulos et al. 2020): softmax(q kᵀ) replaced by φ(q)ᵀφ(k) with
a Hedgehog feature map (learned softmax map, the default) or φ = elu + 1 (``feature_map: elu``);
the generic linearized baseline, trained by the shared pipeline."""

from __future__ import annotations

from typing import ClassVar

from papergym.agents.distill._pipeline import DistillAgent


class LinearAttention(DistillAgent):
    id: ClassVar[str] = "linear-attn"
    MIXER: ClassVar[str] = "linear"
