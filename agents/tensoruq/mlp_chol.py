"""Non-equivariant Cholesky (isolates equivariance): a DeepSets / PointNet-style network on raw
coordinates (per point: centred xyz, |r|, the species-pair one-hot and (r₀/r)³ for bonds; a
shared MLP, mean pooling, an MLP) that outputs μ (6, KM) and a Cholesky factor (21, softplus
diagonal) of Σ, trained with the Gaussian NLL and random-rotation augmentation (each batch
rotated by uniform O(3) elements, targets by Q(R)): the analogue of the authors' "standard GNN +
Cholesky" baseline [code]."""

from __future__ import annotations

import copy
import math
from typing import Any, ClassVar

import numpy as np
import torch
from torch import nn

from papergym.agent import Agent, AgentConfig
from papergym.agents.tensoruq._common import PAPER, clamp_spectrum, mean_range, standardizer, to_space
from papergym.envs.tensoruq import geometry

ROWS, COLS = torch.tril_indices(6, 6)


class PointNet(nn.Module):
    def __init__(self, point_dim: int, width: int) -> None:
        super().__init__()
        self.phi = nn.Sequential(nn.Linear(point_dim, width), nn.SiLU(), nn.Linear(width, width), nn.SiLU())
        self.rho = nn.Sequential(nn.Linear(width + 1, width), nn.SiLU(), nn.Linear(width, 6 + 21))

    def forward(self, p: torch.Tensor, mask: torch.Tensor, extra: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.phi(p) * mask[..., None]
        pooled = h.sum(1) / mask.sum(1, keepdim=True).clamp_min(1)
        out = self.rho(torch.cat([pooled, extra[:, None]], dim=-1))
        mu, c = out[:, :6], out[:, 6:]
        L = c.new_zeros((len(c), 6, 6))
        L[:, ROWS, COLS] = c
        diag = nn.functional.softplus(torch.diagonal(L, dim1=-2, dim2=-1)) + 1e-3
        L = torch.tril(L, -1) + torch.diag_embed(diag)
        return mu, L


class PointFeatures:
    def __init__(self, inputs: dict[str, np.ndarray], kind: str) -> None:
        self.kind = kind
        self.n_species = 10 if kind == "dielectric" else 0
        vec, mask = self.vectors(inputs)
        r = np.linalg.norm(vec, axis=-1)[mask]
        self.r_ref = float(np.median(r))
        self.volume_ref = float(np.mean(inputs["volume"]))
        self.dim = 4 + 2 * self.n_species

    def vectors(self, inputs: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        pts, mask = np.asarray(inputs["points"], dtype=np.float64), np.asarray(inputs["mask"])
        if self.kind != "dielectric":
            m = mask[..., None]
            pts = (pts - (pts * m).sum(1, keepdims=True) / m.sum(1, keepdims=True)) * m
        return pts, mask

    def __call__(self, vec: torch.Tensor, inputs: dict[str, np.ndarray]) -> tuple[torch.Tensor, ...]:
        r = torch.linalg.norm(vec, dim=-1, keepdim=True)
        parts = [vec / self.r_ref, r / self.r_ref]
        if self.n_species:
            onehot = nn.functional.one_hot(torch.as_tensor(inputs["species"]), self.n_species).to(vec.dtype)
            parts += [onehot, onehot * (self.r_ref / r.clamp_min(1e-6)) ** 3]
        mask = torch.as_tensor(np.asarray(inputs["mask"])).to(vec.dtype)
        extra = torch.as_tensor(np.asarray(inputs["volume"]) / self.volume_ref).to(vec.dtype)
        return torch.cat(parts, dim=-1), mask, extra


class CholeskyModel:
    def __init__(self, features: PointFeatures, net: PointNet, offset: torch.Tensor, scale: float,
                 space: str) -> None:
        self.features, self.net, self.offset, self.scale = features, net.eval(), offset, scale
        self.space = space
        self.family = "gaussian"
        self.mean_range: tuple[float, float] | None = None

    def predict(self, inputs: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, str, str]:
        vec, _ = self.features.vectors(inputs)
        with torch.no_grad():
            p, mask, extra = self.features(torch.as_tensor(vec).float(), inputs)
            mu, L = self.net(p, mask, extra)
        mu = self.offset + self.scale * mu.double()
        Sigma = self.scale ** 2 * (L @ L.transpose(-1, -2)).double()
        if self.mean_range is not None:
            mu = clamp_spectrum(mu, *self.mean_range)
        return mu.numpy(), Sigma.numpy(), self.family, self.space


class MLPCholConfig(AgentConfig):
    width: int = 64
    lr: float = 3e-3
    weight_decay: float = 1e-3
    grad_clip: float = 1.0
    epochs: int = 0  # 0: the view's
    space: str = "auto"


def random_orthogonal(n: int, generator: torch.Generator) -> torch.Tensor:
    A = torch.randn((n, 3, 3), generator=generator, dtype=torch.float64)
    Q, R = torch.linalg.qr(A)
    Q = Q * torch.sign(torch.diagonal(R, dim1=-2, dim2=-1))[:, None, :]
    return Q  # Haar on O(3): rotations and reflections


class MLPCholesky(Agent):
    id: ClassVar[str] = "mlp_chol"
    family: ClassVar[str] = "tensoruq"
    role: ClassVar[str] = "baseline"
    paper: ClassVar[str] = PAPER
    Config: ClassVar[type[AgentConfig]] = MLPCholConfig

    def solve(self, view: Any, budget: Any, seed: int) -> CholeskyModel:
        cfg = self.config
        torch.manual_seed(int(view.init_seed))
        gen = torch.Generator().manual_seed(int(view.init_seed))
        space = ("log_km" if "log_km" in view.spaces else "km") if cfg.space == "auto" else cfg.space
        train, val = view.train.inputs, view.validation.inputs
        y = to_space(torch.as_tensor(np.asarray(view.train.targets)), space)
        yv = to_space(torch.as_tensor(np.asarray(view.validation.targets)), space)
        offset, scale = standardizer(y)
        log_range = mean_range(y, space)
        y, yv = (y - offset) / scale, (yv - offset) / scale
        features = PointFeatures(train, view.kind)
        vec = torch.as_tensor(features.vectors(train)[0])
        vec_val = torch.as_tensor(features.vectors(val)[0]).float()
        net = PointNet(features.dim, cfg.width)
        opt = torch.optim.AdamW(net.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        epochs = cfg.epochs or int(view.epochs)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=cfg.lr,
                                                    total_steps=epochs * int(view.batches.batches_per_epoch))
        best, best_state = math.inf, None
        for _ in range(epochs):
            net.train()
            for idx, _ in view.batches.epoch():
                idx = np.asarray(idx)
                R = random_orthogonal(len(idx), gen)  # augmentation: rotate inputs and targets
                v = torch.einsum("bij,bmj->bmi", R, vec[idx]).float()
                target = torch.einsum("bij,bj->bi", geometry.km_rotation(R), y[idx] + offset / scale
                                      ).float() - (offset / scale).float()
                sub = {k: np.asarray(a)[idx] for k, a in train.items()}
                loss = self.nll(net, features(v, sub), target)
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(net.parameters(), cfg.grad_clip)
                opt.step()
                sched.step()
            net.eval()
            with torch.no_grad():
                value = float(self.nll(net, features(vec_val, val), yv.float()))
            if math.isfinite(value) and value < best:
                best, best_state = value, copy.deepcopy(net.state_dict())
        if best_state is not None:
            net.load_state_dict(best_state)
        model = CholeskyModel(features, net, offset, scale, space)
        model.mean_range = log_range
        return model

    @staticmethod
    def nll(net: PointNet, feats: tuple[torch.Tensor, ...], y: torch.Tensor) -> torch.Tensor:
        """Gaussian NLL with Σ = L Lᵀ: log|L| + ½||L⁻¹(y − μ)||² (constant dropped)."""
        mu, L = net(*feats)
        z = torch.linalg.solve_triangular(L, (y - mu)[..., None], upper=False)[..., 0]
        return (torch.log(torch.diagonal(L, dim1=-2, dim2=-1)).sum(-1) + 0.5 * (z ** 2).sum(-1)).mean()
