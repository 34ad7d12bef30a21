"""A GPT whose attention mixers are replaceable: the students of linearized distillation.

Same layout and parameter names as :class:`papergym.tinylm.gpt.GPT` (``tok_emb``, ``pos_emb``,
``blocks[l].{ln1, attn.qkv, attn.proj, ln2, mlp}``, ``ln_f``, ``head``), so a teacher's state dict
loads into it (``strict=False``: the new mixer parameters keep their initialization). Mixer kinds:

- ``softmax``: the teacher's causal softmax attention (a student that starts equal to the teacher);
- ``swa``: softmax attention over the last ``window`` tokens plus the first ``sinks`` tokens;
- ``mlstm``: the stabilized mLSTM (:mod:`papergym.tinylm.mlstm`) on Hedgehog feature maps of the
  teacher's q and k, input and forget gates from the layer input;
- ``hybrid``: per head ĥ_t = o_t · mLSTM_t + (1 − o_t) · SWA_t with o_t = σ(W_og [q_t; k_t; v_t]) a
  scalar per head (Hauzenberger et al. 2026, Eq. 11), then the output projection;
- ``linear``: linear attention with φ = elu + 1 or a Hedgehog map;
- ``lolcats``: softmax inside the window weighted σ(w) (w per head, init logit(0.1), LoLCATs'
  window factor), Hedgehog linear attention beyond it, one normalizer
  (:func:`papergym.tinylm.attention.window_linear_attention` with γ = 1 / σ(w)).

``forward(tokens)`` is the parallel (training) form; ``decode(tokens)`` runs the same model token by
token on its recurrent decode state (a KV cache for ``softmax``; a window-and-sink cache and/or
matrix memories for the others) and returns the logits and the final state; ``state_bytes(n)`` is the
size of that state after n tokens, constant in n for every kind but ``softmax``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
from torch import nn

from papergym.tinylm import attention, mlstm
from papergym.tinylm.gpt import GPTConfig

KINDS = ("softmax", "swa", "mlstm", "hybrid", "linear", "lolcats")
LOLCATS_WINDOW_FACTOR = -2.1972245773362196  # logit of 0.1, LoLCATs' init_window_factor
FLOAT_BYTES = 4


@dataclass(frozen=True)
class MixerConfig:
    kind: str = "hybrid"
    window: int = 8  # tokens a query sees in its window, itself included
    sinks: int = 4
    feature_map: str = "hedgehog"  # linear only: "hedgehog" | "elu"
    hedgehog_fullspace: bool = False  # φ = [softmax(Wx), softmax(−Wx)] (LoLCATs' map; HedgehogMap)
    hedgehog_init: str = "identity"  # "identity" | "kaiming" (LoLCATs' learned-kernel init)
    forget_bias: tuple[float, float] = (3.0, 6.0)  # per head, linearly spaced: σ(3..6) ≈ 0.95..0.998 [lib]
    input_bias: float = 5.0  # exp(−m) <= e^-5 at init, so the normalizer's floor does not bind [recon]

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"mixer kind must be one of {KINDS}, got {self.kind!r}")
        if self.window < 1 or self.sinks < 0:
            raise ValueError(f"need window >= 1 and sinks >= 0, got {self.window}, {self.sinks}")
        if self.feature_map not in ("hedgehog", "elu"):
            raise ValueError(f"feature_map must be 'hedgehog' or 'elu', got {self.feature_map!r}")
        if self.hedgehog_init not in ("identity", "kaiming"):
            raise ValueError(f"hedgehog_init must be 'identity' or 'kaiming', got {self.hedgehog_init!r}")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class MixerState:
    """Decode state of one layer: cached keys/values (window, sinks or all), mLSTM memory, and
    the linear-attention sums; ``pos`` tokens seen so far."""

    pos: int = 0
    keys: list[tuple[int, torch.Tensor, torch.Tensor]] = field(default_factory=list)  # (position, k, v)
    memory: mlstm.MLSTMState | None = None
    linear: tuple[torch.Tensor, torch.Tensor] | None = None

    def nbytes(self) -> int:
        total = sum(k.numel() * k.element_size() + v.numel() * v.element_size() for _, k, v in self.keys)
        if self.memory is not None:
            total += self.memory.nbytes()
        if self.linear is not None:
            total += sum(t.numel() * t.element_size() for t in self.linear)
        return total


class MixerAttention(nn.Module):
    """Multi-head attention with the teacher's q/k/v/o projections and a replaceable mixer."""

    def __init__(self, d_model: int, n_head: int, mixer: MixerConfig) -> None:
        super().__init__()
        if d_model % n_head:
            raise ValueError(f"d_model {d_model} must be divisible by n_head {n_head}")
        self.n_head, self.head_dim, self.mixer = n_head, d_model // n_head, mixer
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.force_gate: float | None = None  # hybrid: fix o_t (0: SWA only, 1: mLSTM only)
        kind, heads, dim = mixer.kind, n_head, self.head_dim
        if kind in ("mlstm", "hybrid", "lolcats") or (kind == "linear" and mixer.feature_map == "hedgehog"):
            maps = {"fullspace": mixer.hedgehog_fullspace, "init": mixer.hedgehog_init}
            self.phi_q = attention.HedgehogMap(heads, dim, **maps)
            self.phi_k = attention.HedgehogMap(heads, dim, **maps)
        elif kind == "linear":
            self.phi_q = self.phi_k = attention.EluMap()
        if kind in ("mlstm", "hybrid"):
            self.gates = nn.Linear(d_model, 2 * heads)  # ĩ (exponential) and f̃ (sigmoid) per head
            with torch.no_grad():
                self.gates.weight.zero_()
                forget = torch.linspace(*mixer.forget_bias, heads)
                self.gates.bias.copy_(torch.cat([torch.full((heads,), mixer.input_bias), forget]))
        if kind == "hybrid":
            self.mix_weight = nn.Parameter(torch.zeros(heads, 3 * dim))  # o_t = σ(W_og [q; k; v] + b)
            self.mix_bias = nn.Parameter(torch.zeros(heads))
        if kind == "lolcats":
            # LoLCATs' per-head window factor: the window's softmax weights are scaled by
            # σ(window_factor), the linear branch's by 1, init −2.197 so σ = 0.1 (HazyResearch/lolcats,
            # LolcatsSlidingWindowAttention: init_window_factor, affine_attention_factors=False)
            self.window_factor = nn.Parameter(torch.full((heads,), LOLCATS_WINDOW_FACTOR))

    def linear_weight(self) -> torch.Tensor:
        """lolcats: the linear branch's weight relative to the window's softmax weights, 1 / σ(w):
        one shared normalizer makes σ(w)·softmax + 1·linear the same mixture as 1·softmax + γ·linear."""
        return 1.0 + torch.exp(-self.window_factor)

    def new_parameters(self) -> list[nn.Parameter]:
        """The parameters the teacher does not have (stage I trains only these)."""
        return [p for name, p in self.named_parameters() if not name.startswith(("qkv.", "proj."))]

    def _heads(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        batch, length, width = x.shape
        q, k, v = self.qkv(x).split(width, dim=-1)
        return tuple(t.view(batch, length, self.n_head, self.head_dim).transpose(1, 2) for t in (q, k, v))

    def _gate(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        if self.force_gate is not None:
            return torch.full(q.shape[:-1], float(self.force_gate), dtype=q.dtype)
        qkv = torch.cat([q, k, v], dim=-1)  # (B, H, T, 3D)
        return torch.sigmoid(torch.einsum("bhtd,hd->bht", qkv, self.mix_weight) + self.mix_bias[:, None])

    def _gate_pre(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        g = self.gates(x).transpose(1, 2)  # (B, 2H, T)
        return g[:, : self.n_head], g[:, self.n_head:]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(self.mix(x).transpose(1, 2).reshape(x.shape))

    def mix(self, x: torch.Tensor) -> torch.Tensor:
        """The per-head mixer output (B, H, T, D), before the output projection."""
        q, k, v = self._heads(x)
        return self._mix(x, q, k, v)

    def transfer_pair(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(this mixer's per-head output, causal softmax attention's on the same q, k, v), both
        before the output projection: the pair LoLCATs' attention transfer matches by MSE
        (HazyResearch/lolcats, ``LolcatsSlidingWindowAttention.forward`` with ``train_attention``)."""
        q, k, v = self._heads(x)
        length = x.shape[1]
        with torch.no_grad():
            target = attention.softmax_attention(q, k, v, torch.ones(length, length, dtype=torch.bool).tril())
        return self._mix(x, q, k, v), target

    def _mix(self, x: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        kind, length = self.mixer.kind, x.shape[1]
        if kind == "softmax":
            out = attention.softmax_attention(q, k, v, torch.ones(length, length, dtype=torch.bool).tril())
        elif kind == "swa":
            out = attention.softmax_attention(q, k, v, window_mask(self.mixer, length))
        elif kind == "linear":
            out = attention.linear_attention(self.phi_q(q), self.phi_k(k), v)
        elif kind == "lolcats":
            out = attention.window_linear_attention(q, k, v, self.phi_q(q), self.phi_k(k),
                                                    self.linear_weight(), self.mixer.window)
        else:
            i_pre, f_pre = self._gate_pre(x)
            memory = mlstm.parallel(self.phi_q(q), self.phi_k(k), v, i_pre, f_pre)
            if kind == "mlstm":
                out = memory
            else:
                o = self._gate(q, k, v)[..., None]
                window = attention.softmax_attention(q, k, v, window_mask(self.mixer, length))
                out = o * memory + (1 - o) * window
        return out

    # ------------------------------------------------------------------ recurrent decoding
    def step(self, x: torch.Tensor, state: MixerState) -> torch.Tensor:
        """One token x (B, 1, W) on the decode state (updated in place)."""
        q, k, v = self._heads(x)  # (B, H, 1, D)
        kind, cfg, t = self.mixer.kind, self.mixer, state.pos
        outs = {}
        if kind in ("softmax", "swa", "hybrid", "lolcats"):
            state.keys.append((t, k, v))
            pos = torch.tensor([p for p, _, _ in state.keys])
            keys = torch.cat([kk for _, kk, _ in state.keys], dim=2)
            values = torch.cat([vv for _, _, vv in state.keys], dim=2)
            if kind == "lolcats":
                near = t - pos < cfg.window
                scores = (q @ keys.transpose(-2, -1)) / math.sqrt(self.head_dim)
                scores = scores.masked_fill(~near, float("-inf"))
                m = scores.max(-1, keepdim=True).values
                soft = torch.exp(scores - m)
                num, den = soft @ values, soft.sum(-1, keepdim=True)
                if state.linear is not None:
                    S, z = state.linear
                    fq = self.phi_q(q)[:, :, 0]
                    gamma = self.linear_weight()[None, :, None]  # not shifted by m (LoLCATs)
                    num = num + (gamma * (S @ fq[..., None]).squeeze(-1))[:, :, None]
                    den = den + (gamma * (z * fq).sum(-1, keepdim=True))[:, :, None]
                outs["window"] = num / (den + 1e-6)
            else:
                visible = (t - pos < cfg.window) | (pos < cfg.sinks) if kind != "softmax" else pos <= t
                outs["window"] = attention.softmax_attention(q, keys, values, visible[None, None, None, :])
        if kind in ("mlstm", "hybrid"):
            i_pre, f_pre = self._gate_pre(x)
            if state.memory is None:
                state.memory = mlstm.MLSTMState.zeros(x.shape[0], self.n_head, self.head_dim, self.head_dim)
            h, state.memory = mlstm.step(state.memory, self.phi_q(q)[:, :, 0], self.phi_k(k)[:, :, 0],
                                         v[:, :, 0], i_pre[:, :, 0], f_pre[:, :, 0])
            outs["memory"] = h[:, :, None]
        if kind == "linear":
            outs["memory"], state.linear = attention.linear_attention_recurrent(
                self.phi_q(q), self.phi_k(k), v, state.linear)
        if kind == "mlstm" or kind == "linear":
            out = outs["memory"]
        elif kind == "hybrid":
            o = self._gate(q, k, v)[..., None]
            out = o * outs["memory"] + (1 - o) * outs["window"]
        else:
            out = outs["window"]
        state.pos = t + 1
        self._evict(state)
        return self.proj(out.transpose(1, 2).reshape(x.shape))

    def _evict(self, state: MixerState) -> None:
        """Drop what no later query can see; lolcats folds a key leaving its window into (S, z)."""
        kind, cfg, nxt = self.mixer.kind, self.mixer, state.pos  # the next query's position
        if kind == "softmax":
            return
        kept = []
        for p, k, v in state.keys:
            if nxt - p < cfg.window or (kind != "lolcats" and p < cfg.sinks):
                kept.append((p, k, v))
            elif kind == "lolcats":
                fk = self.phi_k(k)[:, :, 0]
                S, z = state.linear if state.linear is not None else (
                    fk.new_zeros(*fk.shape[:2], v.shape[-1], fk.shape[-1]), torch.zeros_like(fk))
                state.linear = (S + v[:, :, 0, :, None] * fk[..., None, :], z + fk)
        state.keys = kept

    def state_bytes(self, n: int, batch: int = 1) -> int:
        """Bytes of this layer's decode state after n tokens (what ``step`` keeps)."""
        cfg, heads, dim, kind = self.mixer, self.n_head, self.head_dim, self.mixer.kind
        per_token = 2 * heads * dim * FLOAT_BYTES * batch
        if kind == "softmax":
            cached = n
        elif kind in ("swa", "hybrid"):
            cached = sum(1 for p in range(n) if n - p < cfg.window or p < cfg.sinks)
        elif kind == "lolcats":
            cached = min(n, cfg.window - 1)
        else:
            cached = 0
        total = cached * per_token
        if kind in ("mlstm", "hybrid") and n:
            total += batch * heads * (dim * dim + dim + 1) * FLOAT_BYTES
        if (kind == "linear" and n) or (kind == "lolcats" and n >= cfg.window):
            features = self.phi_k.features if isinstance(self.phi_k, attention.HedgehogMap) else dim
            total += batch * heads * (dim * features + features) * FLOAT_BYTES
        return total


def window_mask(cfg: MixerConfig, length: int) -> torch.Tensor:
    return attention.window_sink_mask(length, cfg.window, cfg.sinks)


class MixerBlock(nn.Module):
    def __init__(self, cfg: GPTConfig, mixer: MixerConfig) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = MixerAttention(cfg.d_model, cfg.n_head, mixer)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.mlp = nn.Sequential(
            nn.Linear(cfg.d_model, 4 * cfg.d_model), nn.GELU(), nn.Linear(4 * cfg.d_model, cfg.d_model)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))

    def step(self, x: torch.Tensor, state: MixerState) -> torch.Tensor:
        x = x + self.attn.step(self.ln1(x), state)
        return x + self.mlp(self.ln2(x))


class LinearizedGPT(nn.Module):
    """The teacher's GPT layout with :class:`MixerAttention` in every block (see the module doc)."""

    def __init__(self, cfg: GPTConfig, mixer: MixerConfig) -> None:
        super().__init__()
        self.cfg, self.mixer = cfg, mixer
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos_emb = nn.Embedding(cfg.ctx, cfg.d_model)
        self.blocks = nn.ModuleList(MixerBlock(cfg, mixer) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)

    @classmethod
    def from_teacher(cls, teacher_state: dict[str, torch.Tensor], cfg: GPTConfig,
                     mixer: MixerConfig) -> LinearizedGPT:
        """Stage 0 [paper]: embeddings, norms, MLPs and q/k/v/o copied from the teacher."""
        model = cls(cfg, mixer)
        missing, unexpected = model.load_state_dict(teacher_state, strict=False)
        new = {name for name, _ in model.named_parameters() if name.split(".attn.")[-1].split(".")[0]
               not in ("qkv", "proj") and ".attn." in name}
        if unexpected or set(missing) - new:
            raise ValueError(f"teacher state does not fit: missing {sorted(set(missing) - new)}, "
                             f"unexpected {sorted(unexpected)}")
        return model

    def new_parameters(self) -> list[nn.Parameter]:
        return [p for block in self.blocks for p in block.attn.new_parameters()]

    def embed(self, tokens: torch.Tensor) -> torch.Tensor:
        length = tokens.shape[1]
        if length > self.cfg.ctx:
            raise ValueError(f"sequence length {length} exceeds the context {self.cfg.ctx}")
        return self.tok_emb(tokens) + self.pos_emb(torch.arange(length))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))

    def transfer_pair(self, layer: int, hidden: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """LoLCATs' attention-transfer pair of block ``layer`` on the residual stream ``hidden``
        entering it (see :meth:`MixerAttention.transfer_pair`)."""
        block = self.blocks[layer]
        return block.attn.transfer_pair(block.ln1(hidden))

    def mixer_output(self, layer: int, hidden: torch.Tensor) -> torch.Tensor:
        """Attention-sublayer output of block ``layer`` on the residual stream ``hidden`` entering it
        (stage I's ĥ_S^l given the teacher's h_T^l)."""
        block = self.blocks[layer]
        return block.attn(block.ln1(hidden))

    @torch.no_grad()
    def decode(self, tokens: torch.Tensor) -> tuple[torch.Tensor, list[MixerState]]:
        """Token-by-token recurrent pass: logits (B, T, V) and the per-layer decode states."""
        states = [MixerState() for _ in self.blocks]
        out = []
        for t in range(tokens.shape[1]):
            x = self.tok_emb(tokens[:, t: t + 1]) + self.pos_emb(torch.tensor([t]))
            for block, state in zip(self.blocks, states):
                x = block.step(x, state)
            out.append(self.head(self.ln_f(x)))
        return torch.cat(out, dim=1), states

    def state_bytes(self, n: int) -> int:
        """Decode-state bytes after n tokens (batch 1): what :meth:`decode` keeps, all layers."""
        return sum(block.attn.state_bytes(int(n)) for block in self.blocks)

    def set_gate(self, value: float | None) -> None:
        for block in self.blocks:
            block.attn.force_gate = value
