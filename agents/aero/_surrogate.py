"""Training of the drag surrogate, shared by the surrogate agents; variants by one hook.

Loss (UniDrag's multi-output objective, our weights [recon]): l = l_Cd + 0.3 (l_p + l_b + l_u),
mean squared errors of normalized targets. Modality-Protected Learning [recon] = PCGrad on the
shared trunk: where the auxiliary heads' trunk gradient g_aux conflicts with the C_d gradient
(g_aux . g_Cd < 0), its component along g_Cd is removed, g_aux <- g_aux - (g_aux . g_Cd) / |g_Cd|^2
g_Cd, so the auxiliary fields can shape the representation but never against C_d.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from papergym.envs.aero.surrogate import TARGETS, DragSurrogateNet

AUX_WEIGHT = 0.3


@dataclass(frozen=True)
class Variant:
    """What distinguishes the three surrogate agents."""

    heads: tuple[str, ...] = ("cd", "cp", "b", "u")
    gated: bool = True
    protected: bool = True


def normalization(data: dict[str, np.ndarray]) -> dict[str, tuple[torch.Tensor, torch.Tensor]]:
    stats = {}
    for name in TARGETS:
        t = torch.tensor(np.asarray(data[name], dtype=np.float32))
        if name == "cd":
            stats[name] = (t.mean(), t.std().clamp_min(1e-6))
        else:  # one scale per output, per-entry means
            stats[name] = (t.mean(0), t.std().clamp_min(1e-6).expand(t.shape[1:]).clone())
    return stats


def train_surrogate(data: dict[str, np.ndarray], variant: Variant, seed: int, epochs: int, width: int,
                    batch_size: int = 32, lr: float = 1e-3) -> DragSurrogateNet:
    """Adam on minibatches for ``epochs`` epochs; deterministic given ``seed``."""
    gen = torch.Generator().manual_seed(int(seed))
    torch.manual_seed(int(seed))  # parameter initialization draws from torch's default generator
    net = DragSurrogateNet(width=width, gated=variant.gated, heads_on=variant.heads)
    stats = normalization(data)
    net.set_normalization(stats)
    points = torch.tensor(data["points"], dtype=torch.float32)
    body = torch.tensor(data["body_type"], dtype=torch.long)
    targets = {k: (torch.tensor(np.asarray(data[k], dtype=np.float32)) - m) / s
               for k, (m, s) in stats.items()}
    trunk = net.trunk_parameters()
    trunk_ids = {id(p) for p in trunk}
    others = [p for p in net.parameters() if id(p) not in trunk_ids]
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    n = len(points)
    aux = [k for k in variant.heads if k != "cd"]
    for _ in range(epochs):
        order = torch.randperm(n, generator=gen)
        for start in range(0, n, batch_size):
            idx = order[start:start + batch_size]
            out = net(points[idx], body[idx])
            loss_cd = torch.mean((out["cd"] - targets["cd"][idx]) ** 2)
            loss_aux = sum(torch.mean((out[k] - targets[k][idx]) ** 2) for k in aux) if aux else None
            optimizer.zero_grad()
            if loss_aux is None or not variant.protected:
                (loss_cd + (AUX_WEIGHT * loss_aux if loss_aux is not None else 0.0)).backward()
            else:
                params = trunk + others
                g_cd = torch.autograd.grad(loss_cd, params, retain_graph=True, allow_unused=True)
                g_aux = torch.autograd.grad(AUX_WEIGHT * loss_aux, params, allow_unused=True)
                g_cd = [torch.zeros_like(p) if g is None else g for p, g in zip(params, g_cd)]
                g_aux = [torch.zeros_like(p) if g is None else g for p, g in zip(params, g_aux)]
                k = len(trunk)
                flat_cd = torch.cat([g.flatten() for g in g_cd[:k]])
                flat_aux = torch.cat([g.flatten() for g in g_aux[:k]])
                dot = torch.dot(flat_cd, flat_aux)
                if dot < 0:  # PCGrad: drop the conflicting component of the auxiliary gradient
                    scale = dot / flat_cd.pow(2).sum().clamp_min(1e-20)
                    g_aux = [ga - scale * gc if j < k else ga for j, (ga, gc) in enumerate(zip(g_aux, g_cd))]
                for p, a, b in zip(params, g_cd, g_aux):
                    p.grad = a + b
            optimizer.step()
    net.eval()
    return net
