"""The teacher's own softmax mixer through the same pipeline (a sanity row, not ranked): it starts
equal to the teacher, so no stage-II run can lower its validation KL below the start's 0 and the
selection returns it unchanged, exactly lossless. Its stage-II runs still move it (at the old
fixed lr 1e-3 its alpha* reached 0.076 on one seed): fine-tuning noise, not a stage that breaks a
copy."""

from __future__ import annotations

from typing import ClassVar

from papergym.agents.distill._pipeline import DistillAgent


class AttentionIdentity(DistillAgent):
    id: ClassVar[str] = "attn-identity"
    MIXER: ClassVar[str] = "softmax"
