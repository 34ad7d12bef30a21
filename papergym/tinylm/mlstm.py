"""The matrix-memory LSTM cell (mLSTM; Beck et al. 2024, xLSTM), stabilized, in plain torch.

Per head, with scalar input gate pre-activation ĩ_t (exponential gate), forget gate
pre-activation f̃_t (sigmoid gate), queries q_t, keys k_t and values v_t (already feature-mapped
by the caller where a feature map is used):

recurrent (decoding), the log-space stabilizer m_t keeps every exponential <= 1::

    m_t  = max(log σ(f̃_t) + m_{t-1}, ĩ_t)
    i'_t = exp(ĩ_t − m_t);   f'_t = exp(log σ(f̃_t) + m_{t-1} − m_t)
    C_t  = f'_t C_{t-1} + i'_t v_t k_tᵀ;   n_t = f'_t n_{t-1} + i'_t k_t
    h_t  = C_t q_t / max(|n_tᵀ q_t|, exp(−m_t))

parallel (training), the same numbers for all t at once::

    log D_tj = Σ_{r=j+1..t} log σ(f̃_r) + ĩ_j  (j <= t, else −∞);   m_t = max_j log D_tj
    S = (Q Kᵀ) ⊙ exp(log D − m);   H = (S / max(|S·1|, exp(−m))) V

The initial state is C_0 = 0, n_0 = 0, m_0 = 0 (the xLSTM library's convention; see ``parallel``
for how the parallel form carries m_0). Gate
pre-activations are soft-capped (cap · tanh(x / cap), cap 15) and computed in float32 [xLSTM
library]. There is no scaling of q by 1/sqrt(d) here: callers scale q themselves if they want it.

Shapes: q, k (B, H, T, Dk), v (B, H, T, Dv), gates (B, H, T). The recurrent state of one head is
(C: Dv x Dk, n: Dk, m: scalar): its size does not depend on the sequence length.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

GATE_CAP = 15.0


def soft_cap(x: torch.Tensor, cap: float = GATE_CAP) -> torch.Tensor:
    """cap · tanh(x / cap): smooth, identity near 0, bounded by ±cap."""
    return cap * torch.tanh(x / cap)


@dataclass
class MLSTMState:
    C: torch.Tensor  # (B, H, Dv, Dk)
    n: torch.Tensor  # (B, H, Dk)
    m: torch.Tensor  # (B, H)

    @classmethod
    def zeros(cls, batch: int, heads: int, dk: int, dv: int,
              dtype: torch.dtype = torch.float32) -> MLSTMState:
        return cls(C=torch.zeros(batch, heads, dv, dk, dtype=dtype),
                   n=torch.zeros(batch, heads, dk, dtype=dtype), m=torch.zeros(batch, heads, dtype=dtype))

    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in (self.C, self.n, self.m))


def parallel(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, i_pre: torch.Tensor, f_pre: torch.Tensor,
             eps: float = 1e-6) -> torch.Tensor:
    """Stabilized parallel mLSTM over a whole sequence: (B, H, T, Dv).

    The zero initial state enters as m_0 = 0: the recurrent m_t equals
    max(max_{j<=t} log D_tj, F_t) with F_t = Σ_{r<=t} log σ(f̃_r) (the decayed initial m_0 = 0), and
    the lower bound exp(−m_t) uses that m_t, so both forms give identical numbers.
    """
    dtype = q.dtype
    i_pre = soft_cap(i_pre.float())
    logf = F.logsigmoid(soft_cap(f_pre.float()))  # (B, H, T)
    cum = torch.cumsum(logf, dim=-1)  # F_t = Σ_{r<=t} log σ(f̃_r)
    length = q.shape[-2]
    causal = torch.ones(length, length, dtype=torch.bool, device=q.device).tril()
    # log D_tj = F_t − F_j + ĩ_j for j <= t
    log_d = cum[..., :, None] - cum[..., None, :] + i_pre[..., None, :]
    log_d = log_d.masked_fill(~causal, float("-inf"))
    m = torch.maximum(log_d.max(dim=-1).values, cum)  # (B, H, T); cum: the decayed m_0 = 0
    decay = torch.exp(log_d - m[..., None])
    scores = (q.float() @ k.float().transpose(-2, -1)) * decay
    normalizer = torch.maximum(scores.sum(-1).abs(), torch.exp(-m))
    return ((scores / (normalizer[..., None] + eps)) @ v.float()).to(dtype)


def step(state: MLSTMState, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, i_pre: torch.Tensor,
         f_pre: torch.Tensor, eps: float = 1e-6) -> tuple[torch.Tensor, MLSTMState]:
    """One recurrent step. q, k (B, H, Dk), v (B, H, Dv), gates (B, H); returns h (B, H, Dv)."""
    i_pre = soft_cap(i_pre.float())
    logf = F.logsigmoid(soft_cap(f_pre.float()))
    m = torch.maximum(logf + state.m, i_pre)
    i_gate = torch.exp(i_pre - m)
    f_gate = torch.exp(logf + state.m - m)
    outer = v.float()[..., :, None] * k.float()[..., None, :]  # v_t φ(k_t)ᵀ
    C = f_gate[..., None, None] * state.C + i_gate[..., None, None] * outer
    n = f_gate[..., None] * state.n + i_gate[..., None] * k.float()
    num = (C @ q.float()[..., :, None]).squeeze(-1)  # (B, H, Dv)
    den = torch.maximum((n * q.float()).sum(-1).abs(), torch.exp(-m))
    return (num / (den[..., None] + eps)).to(q.dtype), MLSTMState(C=C, n=n, m=m)


def recurrent(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, i_pre: torch.Tensor, f_pre: torch.Tensor,
              state: MLSTMState | None = None, eps: float = 1e-6) -> tuple[torch.Tensor, MLSTMState]:
    """The recurrent form over a sequence, step by step: (B, H, T, Dv) and the final state."""
    batch, heads, length, dk = q.shape
    if state is None:
        state = MLSTMState.zeros(batch, heads, dk, v.shape[-1])
    out = []
    for t in range(length):
        h, state = step(state, q[:, :, t], k[:, :, t], v[:, :, t], i_pre[:, :, t], f_pre[:, :, t], eps)
        out.append(h)
    return torch.stack(out, dim=2), state
