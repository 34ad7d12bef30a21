"""The artifact format of ``DragSurrogate-v0``: a multi-output drag surrogate on boundary points.

The problem fixes the architecture family (so that the trained module can be scored, and its
gradient in the shape checked, in the problem process); agents choose its switches and train it.
[recon] UniDrag's parts are known by name only; this is our reading at a small scale:

- input per boundary point: (x, y, n_x, n_y, arc length) and Fourier features sin/cos(2^k pi x),
  sin/cos(2^k pi y), k < 4, plus the body type one-hot; lifted to ``width``;
- enhanced Physics-Sliced Attention (ePSA, after Transolver's slice attention): soft slice weights
  w_pm = softmax_m(W_s h_p / temperature) over M slices (learnable temperature), slice tokens
  z_m = sum_p w_pm h_p / sum_p w_pm, multi-head self-attention among the M tokens, scatter back
  h_p += sum_m w_pm z'_m, then a residual MLP;
- heads: C_d by Gated Expert Routing (E expert MLPs on the pooled token, mixed by
  softmax(W_g [type one-hot, pooled])) or one MLP; surface C_p per point; the drag build-up b (32
  stations) and the mean velocity field u (2 x 32 x 12) from the pooled token.

``predict(points, body_type)`` returns de-normalized ``{"cd", "cp", "b", "u"}`` (heads that were
switched off return zeros) and is differentiable in ``points``.
"""

from __future__ import annotations

import torch
from torch import nn

from papergym.envs.aero.flow import FIELD_SHAPE, N_STATIONS
from papergym.envs.aero.shapes import BODY_TYPES, K

N_TYPES = len(BODY_TYPES)
N_FOURIER = 4
TARGETS = {"cd": (), "cp": (K,), "b": (N_STATIONS,), "u": (2, *FIELD_SHAPE)}


def point_features(points: torch.Tensor) -> torch.Tensor:
    """(N, K, 2) -> (N, K, 5 + 4 N_FOURIER): coordinates, unit normals, arc length, Fourier."""
    tangent = torch.roll(points, -1, dims=1) - torch.roll(points, 1, dims=1)
    normal = torch.stack([tangent[..., 1], -tangent[..., 0]], dim=-1)
    normal = normal / (normal.norm(dim=-1, keepdim=True) + 1e-8)
    seg = (torch.roll(points, -1, dims=1) - points).norm(dim=-1)
    arc = torch.cumsum(seg, dim=1) - seg
    arc = arc / (seg.sum(dim=1, keepdim=True) + 1e-8)
    freqs = (2.0 ** torch.arange(N_FOURIER, dtype=points.dtype, device=points.device)) * torch.pi
    angles = points[..., None] * freqs  # (N, K, 2, F)
    fourier = torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1).flatten(-2)
    return torch.cat([points, normal, arc[..., None], fourier], dim=-1)


class SliceAttention(nn.Module):
    """One ePSA layer: points -> M slice tokens -> attention among tokens -> back to points."""

    def __init__(self, width: int, slices: int, heads: int) -> None:
        super().__init__()
        self.slice = nn.Linear(width, slices)
        self.log_temperature = nn.Parameter(torch.zeros(()))
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.attention = nn.MultiheadAttention(width, heads, batch_first=True)
        self.mlp = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        x = self.norm1(h)
        w = torch.softmax(self.slice(x) / self.log_temperature.exp(), dim=-1)     # (N, K, M)
        tokens = w.transpose(1, 2) @ x / (w.sum(dim=1)[..., None] + 1e-6)       # (N, M, width)
        tokens, _ = self.attention(tokens, tokens, tokens, need_weights=False)
        h = h + w @ tokens
        return h + self.mlp(self.norm2(h))


class DragSurrogateNet(nn.Module):
    """Boundary points and body type -> C_d, C_p, b, u (see the module docstring)."""

    def __init__(self, width: int = 64, slices: int = 16, layers: int = 2, heads: int = 4,
                 experts: int = 4, gated: bool = True,
                 heads_on: tuple[str, ...] = ("cd", "cp", "b", "u")) -> None:
        super().__init__()
        unknown = set(heads_on) - set(TARGETS)
        if "cd" not in heads_on or unknown:
            raise ValueError(f"heads_on must include 'cd' and name only {sorted(TARGETS)}, got {heads_on!r}")
        self.width, self.gated, self.heads_on = width, bool(gated), tuple(heads_on)
        self.lift = nn.Linear(5 + 4 * N_FOURIER + N_TYPES, width)
        self.layers = nn.ModuleList(SliceAttention(width, slices, heads) for _ in range(layers))
        self.pool_norm = nn.LayerNorm(width)

        def mlp(out: int) -> nn.Module:
            return nn.Sequential(nn.Linear(width, width), nn.GELU(), nn.Linear(width, out))

        self.experts = nn.ModuleList(mlp(1) for _ in range(experts if gated else 1))
        self.gate = nn.Linear(N_TYPES + width, experts) if gated else None
        self.cp_head = nn.Linear(width, 1) if "cp" in heads_on else None
        self.b_head = mlp(N_STATIONS) if "b" in heads_on else None
        self.u_head = mlp(2 * FIELD_SHAPE[0] * FIELD_SHAPE[1]) if "u" in heads_on else None
        for name, shape in TARGETS.items():
            self.register_buffer(f"{name}_mean", torch.zeros(shape))
            self.register_buffer(f"{name}_std", torch.ones(shape))

    def trunk_parameters(self) -> list[nn.Parameter]:
        """The shared trunk (lift, ePSA layers, pooling): where the heads' gradients meet."""
        return [*self.lift.parameters(), *self.layers.parameters(), *self.pool_norm.parameters()]

    def set_normalization(self, stats: dict[str, tuple[torch.Tensor, torch.Tensor]]) -> None:
        for name, (mean, std) in stats.items():
            getattr(self, f"{name}_mean").copy_(mean)
            getattr(self, f"{name}_std").copy_(std)

    def forward(self, points: torch.Tensor, body_type: torch.Tensor) -> dict[str, torch.Tensor]:
        """Normalized outputs: (N,), (N, K), (N, 32), (N, 2, 32, 12)."""
        onehot = nn.functional.one_hot(body_type.long(), N_TYPES).to(points.dtype)
        x = torch.cat([point_features(points), onehot[:, None, :].expand(-1, points.shape[1], -1)], dim=-1)
        h = self.lift(x)
        for layer in self.layers:
            h = layer(h)
        pooled = self.pool_norm(h.mean(dim=1))
        if self.gated:
            gate = torch.softmax(self.gate(torch.cat([onehot, pooled], dim=-1)), dim=-1)  # (N, E)
            cd = (torch.cat([e(pooled) for e in self.experts], dim=-1) * gate).sum(-1)
        else:
            cd = self.experts[0](pooled)[:, 0]
        n = points.shape[0]
        out = {"cd": cd}
        out["cp"] = self.cp_head(h)[..., 0] if self.cp_head is not None else points.new_zeros(n, K)
        out["b"] = self.b_head(pooled) if self.b_head is not None else points.new_zeros(n, N_STATIONS)
        out["u"] = (self.u_head(pooled).view(n, 2, *FIELD_SHAPE) if self.u_head is not None
                    else points.new_zeros(n, 2, *FIELD_SHAPE))
        return out

    def predict(self, points: torch.Tensor, body_type: torch.Tensor) -> dict[str, torch.Tensor]:
        out = self(points, body_type)
        return {k: v * getattr(self, f"{k}_std") + getattr(self, f"{k}_mean") for k, v in out.items()}


class SurrogateEnsemble(nn.Module):
    """A mean over members; ``member(i)`` predicts with one."""

    def __init__(self, members: list[DragSurrogateNet]) -> None:
        super().__init__()
        if not members:
            raise ValueError("an ensemble needs at least one member")
        self.members = nn.ModuleList(members)

    def member(self, i: int, points: torch.Tensor, body_type: torch.Tensor) -> dict[str, torch.Tensor]:
        return self.members[i].predict(points, body_type)

    def predict(self, points: torch.Tensor, body_type: torch.Tensor) -> dict[str, torch.Tensor]:
        preds = [m.predict(points, body_type) for m in self.members]
        return {k: torch.stack([p[k] for p in preds]).mean(0) for k in preds[0]}
