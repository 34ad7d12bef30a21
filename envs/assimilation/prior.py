"""The shared window diffusion prior: an EDM denoiser over W consecutive states of a model.

Trained once per (tier, window) by denoising score matching on the training trajectories
(``make_training_set``, seeds disjoint from every tuning and held-out seed) and kept in the
problem's cache, so LoPhyDA, its ablations and SDA (W = the env's window) and DPS (W = 1) share
it instead of training one per trial. The view hands agents a plain record (``config``,
``state``, normalization); ``build(record)`` rebuilds the module in the agent's process.

Denoiser (Karras et al. 2022, "EDM", eq. 7 and Table 1): D(x; sigma) = c_skip x + c_out
F(c_in x, c_noise) with sigma_data = 1 on standardized states, c_noise = ln(sigma) / 4, loss
weight (sigma^2 + 1) / sigma^2, ln sigma ~ N(-1.2, 1.2^2) clipped to [0.01, 20]. F takes the W
time slices as channels and is periodic over the model's grid (circular padding): on Lorenz-96's
ring of sites a 1-D residual conv net, on Kolmogorov flow's size x size torus a small 2-D UNet
(the same residual stage at full, 1/2 and 1/4 resolution, average-pool down, nearest-neighbour
up, skip sums) [recon: the spec's "periodic 1-D conv net over sites with time as channels" and
"small UNet with time as channels"]. One class serves both: the grid's rank picks the
convolution, ``levels`` the UNet depth (0 on the ring).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

SIGMA_MIN, SIGMA_MAX = 0.01, 20.0
P_MEAN, P_STD = -1.2, 1.2
log = logging.getLogger(__name__)


def architecture(grid: Sequence[int]) -> dict[str, int]:
    """The denoiser of a grid: the ring's 1-D net (hidden 32, 3 blocks of kernel 5), or a 2-D
    UNet (hidden 32, 2 blocks of kernel 3 per level, up to 2 halvings the grid allows)."""
    if len(grid) == 1:
        return {"hidden": 32, "layers": 3, "kernel": 5, "levels": 0}
    levels, side = 0, min(grid)
    while levels < 2 and all(g % 2 ** (levels + 1) == 0 for g in grid) and side // 2 ** (levels + 1) >= 4:
        levels += 1
    return {"hidden": 32, "layers": 2, "kernel": 3, "levels": levels}


class _Stage(nn.Module):
    """``layers`` residual conv blocks h <- h + conv(silu(h + emb_i(c_noise))) at one resolution."""

    def __init__(self, conv: Any, hidden: int, layers: int) -> None:
        super().__init__()
        self.hidden, self.layers = hidden, layers
        self.emb = nn.Linear(1, hidden * layers)
        self.blocks = nn.ModuleList(conv(hidden, hidden) for _ in range(layers))

    def forward(self, h: torch.Tensor, c_noise: torch.Tensor) -> torch.Tensor:
        ones = (1,) * (h.ndim - 2)
        emb = self.emb(c_noise[:, None]).view(h.shape[0], self.layers, self.hidden, *ones)
        for i, block in enumerate(self.blocks):
            h = h + block(nn.functional.silu(h + emb[:, i]))
        return h


class WindowDenoiser(nn.Module):
    """EDM-preconditioned D(x; sigma) for windows of W states on ``grid`` ((n,) for a ring,
    (size, size) for a torus), in standardized units. ``forward`` takes (B, W, prod(grid))
    flattened states (or (B, W, *grid)) and returns the same shape."""

    def __init__(self, window: int, grid: Sequence[int], hidden: int = 32, layers: int = 3, kernel: int = 5,
                 levels: int = 0) -> None:
        super().__init__()
        self.window, self.grid = int(window), tuple(int(g) for g in grid)
        if len(self.grid) not in (1, 2):
            raise ValueError(f"WindowDenoiser: grid must have 1 or 2 axes, got {grid!r}")
        if any(g % 2**levels for g in self.grid):
            raise ValueError(f"WindowDenoiser: grid {self.grid} is not divisible by 2^{levels} (levels)")
        self.hidden, self.layers, self.kernel, self.levels = hidden, layers, kernel, levels
        kind = nn.Conv1d if len(self.grid) == 1 else nn.Conv2d

        def conv(c_in: int, c_out: int) -> nn.Module:
            return kind(c_in, c_out, kernel, padding=kernel // 2, padding_mode="circular")

        self.inp = conv(window, hidden)
        self.stage = _Stage(conv, hidden, layers)
        self.out = conv(hidden, window)
        # the UNet's coarser levels (none on the ring): a stage per halving, a merge conv on the way up
        self.coarse = nn.ModuleList(_Stage(conv, hidden, layers) for _ in range(levels))
        self.merge = nn.ModuleList(conv(hidden, hidden) for _ in range(levels))

    def raw(self, x: torch.Tensor, c_noise: torch.Tensor) -> torch.Tensor:
        pool = nn.functional.avg_pool1d if len(self.grid) == 1 else nn.functional.avg_pool2d
        h = self.stage(self.inp(x), c_noise)
        skips = []
        for stage in self.coarse:
            skips.append(h)
            h = stage(pool(h, 2), c_noise)
        for skip, merge in zip(reversed(skips), reversed(self.merge)):
            h = skip + merge(nn.functional.silu(nn.functional.interpolate(h, scale_factor=2, mode="nearest")))
        return self.out(nn.functional.silu(h))

    def forward(self, x: torch.Tensor, sigma: torch.Tensor | float) -> torch.Tensor:
        shape = x.shape
        x = x.reshape(shape[0], self.window, *self.grid)
        sigma = torch.as_tensor(sigma, dtype=x.dtype).reshape(-1).expand(x.shape[0])
        s = sigma.view(-1, *(1,) * (x.ndim - 1))
        c_skip = 1.0 / (s**2 + 1.0)
        c_out = s / torch.sqrt(s**2 + 1.0)
        c_in = 1.0 / torch.sqrt(s**2 + 1.0)
        return (c_skip * x + c_out * self.raw(c_in * x, torch.log(sigma) / 4.0)).reshape(shape)


def windows(trajectories: np.ndarray, window: int) -> np.ndarray:
    """Every window of ``window`` consecutive states, shape (count, W, n)."""
    n_traj, length, n = trajectories.shape
    idx = np.arange(length - window + 1)[:, None] + np.arange(window)[None, :]
    return trajectories[:, idx].reshape(-1, window, n)


def train_prior(trajectories: np.ndarray, window: int, steps: int, seed: int = 0, batch: int = 64,
                lr: float = 2e-3, grid: Sequence[int] | None = None,
                net: dict[str, int] | None = None) -> dict[str, Any]:
    """Denoising score matching (EDM) on the training windows of ``trajectories`` (n_traj,
    length, n) whose states live on ``grid`` (default the ring (n,)); ``net`` overrides
    ``architecture(grid)``. Returns the plain record. Runs on one math thread (as every trial
    worker does; more threads only contend on small convs)."""
    grid = (trajectories.shape[-1],) if grid is None else tuple(int(g) for g in grid)
    if math.prod(grid) != trajectories.shape[-1]:
        raise ValueError(f"train_prior: grid {grid} does not hold states of size {trajectories.shape[-1]}")
    config = {"window": int(window), "grid": list(grid), **architecture(grid), **(net or {})}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _train(trajectories, config, steps, seed, batch, lr)
    finally:
        torch.set_num_threads(threads)


def _train(trajectories: np.ndarray, config: dict[str, Any], steps: int, seed: int, batch: int,
           lr: float) -> dict[str, Any]:
    mean, std = float(trajectories.mean()), float(trajectories.std())
    data = torch.as_tensor((windows(trajectories, config["window"]) - mean) / std, dtype=torch.float32)
    gen = torch.Generator().manual_seed(int(seed))
    torch.manual_seed(int(seed))
    net = _module(config)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(int(steps), 1))
    report = max(int(steps) // 10, 1)
    for step in range(int(steps)):
        x = data[torch.randint(len(data), (batch,), generator=gen)]
        log_sigma = P_MEAN + P_STD * torch.randn(batch, generator=gen)
        sigma = log_sigma.exp().clamp(SIGMA_MIN, SIGMA_MAX)
        noisy = x + sigma[:, None, None] * torch.randn(x.shape, generator=gen)
        weight = (sigma**2 + 1.0) / sigma**2
        loss = (weight[:, None, None] * (net(noisy, sigma) - x) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if (step + 1) % report == 0:
            log.info("window prior %s: step %d/%d, loss %.4f", config, step + 1, steps, float(loss.detach()))
    state = {k: v.detach().clone() for k, v in net.state_dict().items()}
    return {"config": config, "state": state, "mean": mean, "std": std, "steps": int(steps),
            "final_loss": float(loss.detach()) if steps else math.nan}


def _module(config: dict[str, Any]) -> WindowDenoiser:
    return WindowDenoiser(int(config["window"]), config["grid"], hidden=int(config["hidden"]),
                          layers=int(config["layers"]), kernel=int(config["kernel"]),
                          levels=int(config["levels"]))


def build(record: dict[str, Any]) -> WindowDenoiser:
    """The denoiser of a record (``view.prior(window)``), in eval mode, gradients off."""
    net = _module(record["config"])
    net.load_state_dict(record["state"])
    net.eval()
    for p in net.parameters():
        p.requires_grad_(False)
    return net


def edm_sigmas(steps: int, sigma_max: float = SIGMA_MAX, sigma_min: float = SIGMA_MIN,
               rho: float = 7.0) -> np.ndarray:
    """Karras et al. (2022) eq. 5: the sampler's noise levels, then a final 0."""
    i = np.arange(int(steps))
    hi, lo = sigma_max ** (1 / rho), sigma_min ** (1 / rho)
    s = (hi + i / max(steps - 1, 1) * (lo - hi)) ** rho
    return np.append(s, 0.0)
