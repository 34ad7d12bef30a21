"""The teacher's own softmax mixer through the same pipeline: it starts equal to the teacher and
stage 2 must keep it lossless (a pipeline sanity row, not ranked)."""

from __future__ import annotations

from typing import ClassVar

from papergym.agents.distill._pipeline import DistillAgent


class AttentionIdentity(DistillAgent):
    id: ClassVar[str] = "attn-identity"
    MIXER: ClassVar[str] = "softmax"
