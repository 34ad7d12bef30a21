"""distill agents: the hybrid xLSTM student (the paper's method; single run and merged domain
experts), its mLSTM-only ablation, linear attention, a LoLCATs-style student, sliding-window
attention with sinks, the softmax identity student, and the teacher / uniform ends."""

from papergym.agents.distill import (  # noqa: F401  (registers them)
    attn_identity,
    hybrid_xlstm,
    linear_attn,
    lolcats,
    references,
    swa_only,
)
