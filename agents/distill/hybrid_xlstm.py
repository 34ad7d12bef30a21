"""The paper's student (Hauzenberger et al. 2026, Eq. 11): every attention layer becomes an
intra-layer hybrid of a stabilized mLSTM (Hedgehog feature maps on the teacher's q and k; no
normalization layer before the output projection) and sliding-window attention with 4 sink tokens,
mixed per head by a data-dependent scalar gate o_t = σ(W_og [q_t; k_t; v_t]), trained by the shared
pipeline (stages 0-2). ``xlstm-hybrid-merged`` adds stage 3: one expert per domain from the shared
stage-1 weights, merged uniformly (Eq. 14). ``mlstm-only`` fixes o ≡ 1 (the paper's component
ablation, App. F.1). The teacher uses learned absolute positions, so there is no RoPE to keep
[recon: the paper applies RoPE to q and k]."""

from __future__ import annotations

from typing import ClassVar

from papergym.agents.distill._pipeline import DistillAgent


class XLSTMHybrid(DistillAgent):
    id: ClassVar[str] = "xlstm-hybrid"
    role: ClassVar[str] = "method"
    MIXER: ClassVar[str] = "hybrid"


class XLSTMHybridMerged(XLSTMHybrid):
    id: ClassVar[str] = "xlstm-hybrid-merged"
    MERGED: ClassVar[bool] = True


class MLSTMOnly(DistillAgent):
    id: ClassVar[str] = "mlstm-only"
    MIXER: ClassVar[str] = "mlstm"
