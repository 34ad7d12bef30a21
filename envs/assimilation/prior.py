"""The shared window diffusion prior: an EDM denoiser over W consecutive Lorenz-96 states.

Trained once per (tier, window) by denoising score matching on the training trajectories
(``make_training_set``, seeds disjoint from every tuning and held-out seed) and kept in the
problem's cache, so LoPhyDA, its ablations and SDA (W = 8) and DPS (W = 1) share it instead of
training one per trial. The view hands agents a plain record (``config``, ``state``,
normalization); ``build(record)`` rebuilds the module in the agent's process.

Denoiser (Karras et al. 2022, "EDM", eq. 7 and Table 1): D(x; sigma) = c_skip x + c_out
F(c_in x, c_noise) with sigma_data = 1 on standardized states, c_noise = ln(sigma) / 4, loss
weight (sigma^2 + 1) / sigma^2, ln sigma ~ N(-1.2, 1.2^2) clipped to [0.01, 20]. F is a
periodic 1-D convolutional net over sites with the W time slices as channels [recon: the spec's
"periodic 1-D conv net over sites with time as channels"].
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch import nn

SIGMA_MIN, SIGMA_MAX = 0.01, 20.0
P_MEAN, P_STD = -1.2, 1.2


class WindowDenoiser(nn.Module):
    """EDM-preconditioned D(x; sigma) for x of shape (B, W, n) in standardized units."""

    def __init__(self, window: int, hidden: int = 32, layers: int = 3, kernel: int = 5) -> None:
        super().__init__()
        self.window, self.hidden, self.layers, self.kernel = window, hidden, layers, kernel
        pad = kernel // 2
        self.inp = nn.Conv1d(window, hidden, kernel, padding=pad, padding_mode="circular")
        self.emb = nn.Linear(1, hidden * layers)
        self.blocks = nn.ModuleList(
            nn.Conv1d(hidden, hidden, kernel, padding=pad, padding_mode="circular") for _ in range(layers))
        self.out = nn.Conv1d(hidden, window, kernel, padding=pad, padding_mode="circular")

    def raw(self, x: torch.Tensor, c_noise: torch.Tensor) -> torch.Tensor:
        h = self.inp(x)
        emb = self.emb(c_noise[:, None]).view(x.shape[0], self.layers, self.hidden, 1)
        for i, block in enumerate(self.blocks):
            h = h + block(nn.functional.silu(h + emb[:, i]))
        return self.out(nn.functional.silu(h))

    def forward(self, x: torch.Tensor, sigma: torch.Tensor | float) -> torch.Tensor:
        sigma = torch.as_tensor(sigma, dtype=x.dtype).reshape(-1).expand(x.shape[0])
        s = sigma[:, None, None]
        c_skip = 1.0 / (s**2 + 1.0)
        c_out = s / torch.sqrt(s**2 + 1.0)
        c_in = 1.0 / torch.sqrt(s**2 + 1.0)
        return c_skip * x + c_out * self.raw(c_in * x, torch.log(sigma) / 4.0)


def windows(trajectories: np.ndarray, window: int) -> np.ndarray:
    """Every window of ``window`` consecutive states, shape (count, W, n)."""
    n_traj, length, n = trajectories.shape
    idx = np.arange(length - window + 1)[:, None] + np.arange(window)[None, :]
    return trajectories[:, idx].reshape(-1, window, n)


def train_prior(trajectories: np.ndarray, window: int, steps: int, seed: int = 0, batch: int = 64,
                lr: float = 2e-3, hidden: int = 32) -> dict[str, Any]:
    """Denoising score matching (EDM) on the training windows; returns the plain record. Runs on
    one math thread (as every trial worker does; more threads only contend on small convs)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _train(trajectories, window, steps, seed, batch, lr, hidden)
    finally:
        torch.set_num_threads(threads)


def _train(trajectories: np.ndarray, window: int, steps: int, seed: int, batch: int, lr: float,
           hidden: int) -> dict[str, Any]:
    mean, std = float(trajectories.mean()), float(trajectories.std())
    data = torch.as_tensor((windows(trajectories, window) - mean) / std, dtype=torch.float32)
    gen = torch.Generator().manual_seed(int(seed))
    torch.manual_seed(int(seed))
    net = WindowDenoiser(window, hidden=hidden)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(int(steps), 1))
    for _ in range(int(steps)):
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
    state = {k: v.detach().clone() for k, v in net.state_dict().items()}
    return {"config": {"window": window, "hidden": hidden}, "state": state, "mean": mean, "std": std,
            "steps": int(steps), "final_loss": float(loss.detach()) if steps else math.nan}


def build(record: dict[str, Any]) -> WindowDenoiser:
    """The denoiser of a record (``view.prior(window)``), in eval mode, gradients off."""
    net = WindowDenoiser(int(record["config"]["window"]), hidden=int(record["config"]["hidden"]))
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
