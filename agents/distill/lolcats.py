"""LoLCATs-style student (Zhang et al. 2025), a baseline the paper names: softmax attention inside
the last w tokens and γ-weighted Hedgehog linear attention beyond them, in one normalizer, γ
learned per head [recon of the published form]. Trained by the shared pipeline (a full fine-tune
instead of LoLCATs' low-rank one, so every student has the same recipe)."""

from __future__ import annotations

from typing import ClassVar

from papergym.agents.distill._pipeline import DistillAgent


class LoLCATs(DistillAgent):
    id: ClassVar[str] = "lolcats"
    MIXER: ClassVar[str] = "lolcats"
