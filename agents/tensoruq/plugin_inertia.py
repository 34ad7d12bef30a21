"""Plug-in inertia (Inertia only) [recon]: the inertia tensor of the centred input points,
I_pts = tr(M) I − M (M = mean r rᵀ), with its isotropic and deviatoric parts scaled by two
scalars fitted by least squares on the training set; covariance: a bootstrap over the points (32
resamples with fixed indices, so the map stays exactly equivariant) inflated by one scalar and a
ridge σ² I fitted on the validation set (mean Mahalanobis distance 6). Equivariant by
construction; almost no learning."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import torch

from papergym.agent import Agent, AgentConfig
from papergym.agents.tensoruq._common import ISO, PAPER
from papergym.envs.tensoruq import geometry


def point_inertia(points: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """KM coordinates of tr(M) I − M for each cloud (masked mean about the centroid)."""
    m = mask[..., None].astype(float)
    c = (points * m).sum(1, keepdims=True) / m.sum(1, keepdims=True)
    r = (points - c) * m
    M = np.einsum("bmi,bmj->bij", r, r) / m.sum(1)[..., None]
    inertia = np.trace(M, axis1=1, axis2=2)[:, None, None] * np.eye(3) - M
    return geometry.km(torch.as_tensor(inertia)).numpy()


def split_iso(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    iso = (v @ ISO.numpy())[:, None] * ISO.numpy()
    return iso, v - iso


class PluginConfig(AgentConfig):
    bootstrap: int = 32


class PluginInertia(Agent):
    id: ClassVar[str] = "plugin_inertia"
    family: ClassVar[str] = "tensoruq"
    role: ClassVar[str] = "baseline"
    paper: ClassVar[str] = PAPER
    Config: ClassVar[type[AgentConfig]] = PluginConfig
    problems: ClassVar[tuple[str, ...]] = ("papergym/TensorUQInertia-v*",)

    def solve(self, view: Any, budget: Any, seed: int) -> PluginModel:
        x = point_inertia(view.train.inputs["points"], view.train.inputs["mask"])
        y = np.asarray(view.train.targets)
        (xi, xd), (yi, yd) = split_iso(x), split_iso(y)
        a = float((xi * yi).sum() / max((xi * xi).sum(), 1e-30))
        b = float((xd * yd).sum() / max((xd * xd).sum(), 1e-30))
        model = PluginModel(a, b, 1.0, 0.0, self.config.bootstrap)
        # inflation γ and ridge σ² on the validation set: residual second moment matched
        mu, boot = model.parts(view.validation.inputs)
        res = np.asarray(view.validation.targets) - mu
        tr_boot = np.trace(boot, axis1=1, axis2=2)
        sq = (res ** 2).sum(-1)
        A = np.stack([tr_boot, np.full_like(tr_boot, 6.0)], axis=1)
        coef, *_ = np.linalg.lstsq(A, sq, rcond=None)
        model.gamma, model.ridge = max(float(coef[0]), 1e-3), max(float(coef[1]), 1e-8)
        return model


class PluginModel:
    def __init__(self, a: float, b: float, gamma: float, ridge: float, bootstrap: int) -> None:
        self.a, self.b, self.gamma, self.ridge, self.bootstrap = a, b, gamma, ridge, bootstrap

    def map(self, points: np.ndarray, mask: np.ndarray) -> np.ndarray:
        iso, dev = split_iso(point_inertia(points, mask))
        return self.a * iso + self.b * dev

    def parts(self, inputs: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        points, mask = np.asarray(inputs["points"], dtype=float), np.asarray(inputs["mask"])
        mu = self.map(points, mask)
        rng = np.random.default_rng(0)  # fixed resampling indices: exactly equivariant
        n = points.shape[1]
        draws = []
        for _ in range(self.bootstrap):
            idx = rng.integers(n, size=n)
            draws.append(self.map(points[:, idx], mask[:, idx] & mask.any(1, keepdims=True)))
        d = np.stack(draws) - mu[None]
        return mu, np.einsum("kbi,kbj->bij", d, d) / self.bootstrap

    def predict(self, inputs: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, str, str]:
        mu, boot = self.parts(inputs)
        return mu, self.gamma * boot + self.ridge * np.eye(6), "gaussian", "km"
