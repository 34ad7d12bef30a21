"""The authors' per-edge backbone (the full tier's; ``backbone = "message_passing"``) [code, sizes
recon]: e3nn message passing on a k-NN graph of the points (k = 8; for crystals the bond vectors
are the points), edge attributes the spherical harmonics up to l = 4 of the edge vectors, a radial
MLP on 8 Gaussian radial bases of the edge length (smooth cosine cutoff) giving the weights of a
per-edge ``FullyConnectedTensorProduct``, messages summed and divided by √k, a linear skip and
the gated nonlinearity; then two separate equivariant attention poolings (softmax over the
nodes of an invariant score), one for the mean head and one for the covariance bottleneck.

Per-edge tensor products cost ~100x the pooled moments on a CPU: the standard tier uses
``_common.EquivariantNet`` instead.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from papergym.agents.tensoruq._common import L_MAX, N_RADIAL, Bottleneck, make_gate
from papergym.envs.tensoruq import geometry

K_NEIGHBOURS = 8
TIE_TOLERANCE = 1e-5  # relative: far above float32 rounding of a rotated distance (~1e-7)


class PointSets:
    """Packs inputs as [B, M, 5] (centred xyz, mask, species) for the message-passing network."""

    def __init__(self, inputs: dict[str, np.ndarray], kind: str) -> None:
        self.kind = kind
        self.n_species = 10 if kind == "dielectric" else 1
        self.irreps = f"{self.n_species}x0e"
        packed = self.raw(inputs)
        xyz, mask = packed[..., :3], packed[..., 3] > 0
        d = torch.cdist(xyz, xyz)
        d = d.masked_fill(~(mask[:, :, None] & mask[:, None, :]), math.inf)
        d = d + torch.diag_embed(torch.full(d.shape[:2], math.inf, dtype=d.dtype))
        knn = d.topk(min(K_NEIGHBOURS, d.shape[-1] - 1), largest=False).values
        self.cutoff = float(torch.quantile(knn[torch.isfinite(knn)], 0.99)) * 1.5

    def raw(self, inputs: dict[str, np.ndarray]) -> torch.Tensor:
        pts = np.asarray(inputs["points"], dtype=np.float64)
        mask = np.asarray(inputs["mask"])
        if self.kind != "dielectric":
            m = mask[..., None]
            pts = (pts - (pts * m).sum(1, keepdims=True) / m.sum(1, keepdims=True)) * m
        species = np.asarray(inputs["species"], dtype=float)[..., None]
        return torch.as_tensor(np.concatenate([pts, mask[..., None].astype(float), species], axis=-1))


def neighbours(xyz: torch.Tensor, mask: torch.Tensor, k: int,
               tie: float = TIE_TOLERANCE) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The k nearest neighbours of each point *with their ties*: every j whose distance is within
    a relative ``tie`` of the k-th one. Lattices have many equidistant bonds, and a plain top-k
    would break the tie by index and by rounding, so a rotated crystal could get another graph
    (a 1e-4 equivariance error in float64). The candidate count is the smallest that holds
    every tie group of the batch: k for generic clouds. Returns distances, indices and a
    validity mask, each [B, M, k']."""
    M = xyz.shape[1]
    d = torch.cdist(xyz, xyz)
    invalid = ~(mask[:, :, None] & mask[:, None, :]) | torch.eye(M, dtype=torch.bool)
    ranked, order = d.masked_fill(invalid, math.inf).sort(dim=-1)
    bound = ranked[..., k - 1 : k] * (1.0 + tie)  # [B, M, 1]
    within = ranked <= bound
    width = max(k, int(within.sum(-1).max())) if within.numel() else k
    dist, nbr = ranked[..., :width], order[..., :width]
    ok = torch.isfinite(dist) & (dist <= bound) & mask[..., None]
    return dist, nbr, ok


def gather_neighbours(values: torch.Tensor, nbr: torch.Tensor) -> torch.Tensor:
    """values [B, M, F] at neighbour indices nbr [B, M, k] -> [B, M, k, F]."""
    B, M, F = values.shape
    k = nbr.shape[-1]
    return torch.gather(values[:, None].expand(B, M, M, F), 2, nbr[..., None].expand(B, M, k, F))


class Convolution(nn.Module):
    """h_i' = Gate(skip(h_i) + (1/√k) Σ_j TP(h_j, Y(r_ij); MLP(RBF(|r_ij|)) · cutoff(|r_ij|)))."""

    def __init__(self, irreps_in: str, hidden: str, cutoff: float) -> None:
        from e3nn import o3

        super().__init__()
        self.gate = make_gate(hidden)
        self.sh = o3.Irreps.spherical_harmonics(L_MAX)
        self.tp = o3.FullyConnectedTensorProduct(irreps_in, self.sh, self.gate.irreps_in,
                                                 shared_weights=False)
        self.radial = nn.Sequential(nn.Linear(N_RADIAL, 16), nn.SiLU(), nn.Linear(16, self.tp.weight_numel))
        self.skip = o3.Linear(irreps_in, self.gate.irreps_in)
        self.cutoff = cutoff
        self.irreps_out = self.gate.irreps_out

    def forward(self, h: torch.Tensor, xyz: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        from e3nn import o3

        B, M, _ = h.shape
        k = min(K_NEIGHBOURS, M - 1)
        dist, nbr, ok = neighbours(xyz, mask, k)
        ok = ok & (dist < self.cutoff)
        rel = gather_neighbours(xyz, nbr) - xyz[:, :, None]
        length = torch.linalg.norm(rel, dim=-1).clamp_min(1e-9)
        Y = o3.spherical_harmonics(self.sh, rel, normalize=True, normalization="component")
        centres = torch.linspace(0, self.cutoff, N_RADIAL, dtype=h.dtype)
        rbf = torch.exp(-((length[..., None] - centres) / (self.cutoff / (N_RADIAL - 1))) ** 2)
        smooth = 0.5 * (torch.cos(math.pi * (length / self.cutoff).clamp(max=1)) + 1) * ok
        h_j = gather_neighbours(h, nbr)
        msg = self.tp(h_j, Y, self.radial(rbf)) * smooth[..., None]
        return self.gate(self.skip(h) + msg.sum(2) / math.sqrt(k)) * mask[..., None]


class AttentionPool(nn.Module):
    """Σ_i softmax_i(score(h_i)) h_i, the score an invariant (0e) linear map of h_i."""

    def __init__(self, irreps: str) -> None:
        from e3nn import o3

        super().__init__()
        self.score = o3.Linear(irreps, "1x0e")

    def forward(self, h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        logits = self.score(h)[..., 0].masked_fill(~mask, -math.inf)
        return (torch.softmax(logits, dim=-1)[..., None] * h).sum(1)


class MessagePassingNet(nn.Module):
    """Two convolutions, a linear-gate-linear block, two attention poolings, the heads."""

    def __init__(self, features: PointSets, hidden: str, cov_irreps_out: str) -> None:
        from e3nn import o3

        super().__init__()
        self.n_species = features.n_species
        self.conv1 = Convolution(features.irreps, hidden, features.cutoff)
        self.conv2 = Convolution(str(self.conv1.irreps_out), hidden, features.cutoff)
        h = str(self.conv2.irreps_out)
        self.post = Bottleneck(h, hidden, h)
        self.pool_mean, self.pool_cov = AttentionPool(h), AttentionPool(h)
        self.mean = o3.Linear(h, geometry.TENSOR_IRREPS)
        self.cov = Bottleneck(h, hidden, cov_irreps_out)
        self.offset = nn.Parameter(torch.zeros(()))  # learnable isotropic generator offset s₀ [code]
        with torch.no_grad():
            self.mean.weight.mul_(0.1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        xyz, mask = x[..., :3], x[..., 3] > 0
        species = x[..., 4].long().clamp(0, self.n_species - 1)
        h = nn.functional.one_hot(species, self.n_species).to(x.dtype) * mask[..., None]
        h = self.conv2(self.conv1(h, xyz, mask), xyz, mask)
        h = self.post(h)
        return self.mean(self.pool_mean(h, mask)), self.cov(self.pool_cov(h, mask))

    def covariance_parameters(self) -> list[nn.Parameter]:
        return [*self.cov.parameters(), *self.pool_cov.parameters(), self.offset]
