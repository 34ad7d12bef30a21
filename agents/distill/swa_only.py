"""Sliding-window attention with 4 sink tokens alone: what the window can do without a recurrent
memory (the hybrid's other half). No new parameters: stage 1 is skipped and its tokens go to
stage 2."""

from __future__ import annotations

from typing import ClassVar

from papergym.agents.distill._pipeline import DistillAgent


class SWAOnly(DistillAgent):
    id: ClassVar[str] = "swa-only"
    MIXER: ClassVar[str] = "swa"
