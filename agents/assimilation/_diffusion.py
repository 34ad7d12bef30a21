"""The guided EDM sampler the diffusion agents share (LoPhyDA-lite, its ablations, SDA, DPS).

Units: the sampler works on standardized windows z = (x - mu) / s (the prior's normalization),
shape (W, n) with states flattened (the denoiser folds them onto its grid: Lorenz-96's ring or
Kolmogorov flow's torus); row W - 1 is the current cycle, rows 0..W-2 the previous ones. Every agent gets
the same data terms [recon]: this cycle's and the window's observations (noise sigma_o) and a
background term, the agent's own past analyses for rows 0..W-2 and the forecast background for
row W - 1, with noise sigma_b from training forecast errors (``background_sigma``: the RMS growth
over one cycle of an initial error of size sigma_o on training states). What differs is how
they enter:

- DPS-style steps (Chung et al. 2023, Algorithm 1): x_{i+1} <- x'_{i+1} - zeta grad_{x_i} ||r(x0_hat)||,
  the gradient of the residual norm (their zeta / ||r|| times grad ||r||^2, up to 2);
- SDA's likelihood score (Rozet and Louppe 2023, eq. 14): grad log N(y | H x0_hat, S_y + gamma
  sigma^2 I), added to the prior score in the probability-flow ODE step;
- LoPhyDA's physics gradient in the noise prediction [cited: "injects the physics gradient into
  the noise-prediction steps"]: eps' = eps_hat + zeta_p sigma g / rms(g), g = grad_{x_sigma}
  ||R(x0_hat)||^2, R the window's model residual, active below sigma_p [recon: the scaling, the
  RMS normalization and the ramp].

Steps are Euler steps of the EDM probability-flow ODE on Karras et al.'s (2022) schedule
(x_{i+1} = x0_hat + sigma_{i+1} eps_hat); randomness enters only through the starting noise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from papergym.agents.assimilation._common import CyclingPolicy, WindowHistory, window_residual
from papergym.agents.assimilation.tc_only import low_rank_prior
from papergym.envs.assimilation.prior import SIGMA_MAX, build, edm_sigmas

SIGMA_B_SAMPLES = 256  # training states used to estimate the background-term noise sigma_b
LR_LENGTH = 2.0  # the distance weighting's length scale ell, in sites or grid cells [recon]


@dataclass(frozen=True)
class Guidance:
    """One diffusion agent's sampler settings (z units unless noted)."""

    steps: int = 16
    zeta_obs: float = 0.0  # DPS step on the observation + background residual
    zeta_lr: float = 0.0  # DPS step on the distance-weighted low-rank prior residual
    zeta_phys: float = 0.0  # physics correction of the noise prediction
    sigma_phys: float = 1.0  # the physics term acts below this noise level
    sigma_start: float = SIGMA_MAX  # SDEdit start from x_LR + sigma_start z (SIGMA_MAX: from noise)
    sda_gamma: float | None = None  # SDA's likelihood (gamma) instead of DPS steps
    extra: dict[str, Any] = field(default_factory=dict)


def physics_correction(eps: torch.Tensor, sigma: float, grad: torch.Tensor | None,
                       zeta: float) -> torch.Tensor:
    """eps' = eps + zeta sigma g / rms(g); with zeta = 0 (or no gradient) eps itself, unchanged."""
    if zeta == 0.0 or grad is None:
        return eps
    rms = torch.sqrt(torch.mean(grad**2)).clamp_min(1e-12)
    return eps + zeta * sigma * grad / rms


def unconditional_sample(net: torch.nn.Module, x: torch.Tensor, sigmas: np.ndarray) -> torch.Tensor:
    """The prior's own Euler ODE sampler from the start ``x`` (at sigmas[0])."""
    with torch.no_grad():
        for sigma, nxt in zip(sigmas[:-1], sigmas[1:]):
            x0 = net(x[None], float(sigma))[0]
            eps = (x - x0) / float(sigma)
            x = x0 + float(nxt) * eps
    return x


@dataclass
class Terms:
    """The data of one cycle's sampling problem, in z units (masks 0/1 float tensors)."""

    y: torch.Tensor  # (W, n) observations (0 where missing)
    mask: torch.Tensor  # (W, n)
    background: torch.Tensor  # (W, n): past analyses and the current background
    background_mask: torch.Tensor  # (W, n): 1 on valid rows
    sigma_obs: float
    sigma_b: float
    lr: torch.Tensor | None = None  # (W, n) low-rank prior
    lr_weight: torch.Tensor | None = None  # (W, n): (1 - M) W_d
    valid: torch.Tensor | None = None  # (W,) bool: rows with a state (for the physics residual)


def guided_sample(net: torch.nn.Module, x: torch.Tensor, sigmas: np.ndarray, terms: Terms, g: Guidance,
                  residual: Any) -> torch.Tensor:
    """Reverse diffusion from ``x`` at sigmas[0] with the guidance of ``g`` (module docstring).
    ``residual(x0)`` is ||R(x0)||^2 (a scalar tensor) for the physics term."""
    for sigma, nxt in zip(sigmas[:-1], sigmas[1:]):
        sigma, nxt = float(sigma), float(nxt)
        use_phys = g.zeta_phys > 0.0 and sigma <= g.sigma_phys
        use_data = g.zeta_obs > 0.0 or g.zeta_lr > 0.0 or g.sda_gamma is not None
        if not (use_phys or use_data):
            with torch.no_grad():
                x0 = net(x[None], sigma)[0]
                eps = (x - x0) / sigma
                x = x0 + nxt * eps
            continue
        xg = x.detach().requires_grad_(True)
        x0 = net(xg[None], sigma)[0]
        grad_phys = None
        if use_phys:
            grad_phys, = torch.autograd.grad(residual(x0), xg, retain_graph=use_data)
        grad_data = None
        if use_data:
            loss = _data_loss(x0, terms, g, sigma)
            grad_data, = torch.autograd.grad(loss, xg)
        x0, xd = x0.detach(), xg.detach()
        eps = physics_correction((xd - x0) / sigma, sigma, grad_phys, g.zeta_phys)
        if g.sda_gamma is not None:
            # probability-flow ODE with the likelihood score: dx/dsigma = eps' + sigma grad(-log p)
            drift = eps + sigma * grad_data
            x = xd + (nxt - sigma) * drift
        else:
            x0p = xd - sigma * eps if use_phys else x0
            x = x0p + nxt * eps
            if grad_data is not None:
                x = x - grad_data
    return x.detach()


def _data_loss(x0: torch.Tensor, t: Terms, g: Guidance, sigma: float) -> torch.Tensor:
    r_obs = t.mask * (t.y - x0)
    r_b = t.background_mask * (t.background - x0)
    if g.sda_gamma is not None:
        # -log N(y | H x0, S + gamma sigma^2 I), background rows alike
        var_o = t.sigma_obs**2 + g.sda_gamma * sigma**2
        var_b = t.sigma_b**2 + g.sda_gamma * sigma**2
        return 0.5 * (torch.sum(r_obs**2) / var_o + torch.sum(r_b**2) / var_b)
    loss = torch.zeros(())
    if g.zeta_obs > 0.0:
        r = torch.cat([(r_obs / t.sigma_obs).reshape(-1), (r_b / t.sigma_b).reshape(-1)])
        loss = loss + g.zeta_obs * torch.sqrt(torch.sum(r**2) + 1e-12)
    if g.zeta_lr > 0.0 and t.lr is not None and t.lr_weight is not None:
        r_lr = t.lr_weight * (t.lr - x0)
        loss = loss + g.zeta_lr * torch.sqrt(torch.sum(r_lr**2) + 1e-12)
    return loss


def background_sigma(view: Any) -> float:
    """sigma_b: RMS difference after one cycle of training states perturbed by N(0, sigma_o^2)
    and the same states unperturbed (the forecast error an analysis of error sigma_o leaves)."""
    states = np.asarray(view.training_set()).reshape(-1, int(view.n))
    rng = np.random.default_rng(31)
    x = states[rng.choice(len(states), size=min(SIGMA_B_SAMPLES, len(states)), replace=False)]
    noisy = x + rng.normal(0.0, float(view.sigma_obs), x.shape)
    return float(np.sqrt(np.mean((view.model.forecast(noisy, 1) - view.model.forecast(x, 1)) ** 2)))


class DiffusionPolicy(CyclingPolicy):
    """One diffusion agent's cycling policy: per cycle, build the window's terms, (LoPhyDA) the
    low-rank prior, sample the window, return its last row (one run, repeated E times)."""

    def __init__(self, view: Any, window: int, guidance: Guidance, seed: int, use_lr: bool) -> None:
        record = view.prior(window)
        self.net = build(record)
        self.mu, self.s = float(record["mean"]), float(record["std"])
        self.model, self.window, self.n = view.model, window, int(view.n)
        self.grid = tuple(view.model.grid)
        self.sigma_obs = float(view.sigma_obs)
        self.sigma_b = background_sigma(view)
        self.distances = np.asarray(view.distances)
        self.g, self.seed, self.use_lr = guidance, seed, use_lr
        start = guidance.sigma_start
        self.sigmas = edm_sigmas(guidance.steps, sigma_max=start)
        super().__init__(int(view.ensemble_size))

    def reset(self) -> None:
        self.history = WindowHistory(self.window, self.n)
        self.gen = torch.Generator().manual_seed(int(self.seed) * 7919 + 1)
        self.rng = np.random.default_rng([self.seed, 29])

    def _z(self, x: np.ndarray) -> torch.Tensor:
        return torch.as_tensor((np.asarray(x, dtype=float) - self.mu) / self.s, dtype=torch.float32)

    def terms(self, obs: dict[str, Any]) -> Terms:
        W = self.window
        y = np.asarray(obs["history_y"], dtype=float)[-W:]
        mask = np.asarray(obs["history_mask"], dtype=float)[-W:]
        xb = np.asarray(obs["background"], dtype=float).mean(axis=0)
        background = np.repeat(xb[None], W, axis=0)
        valid = np.ones(W, dtype=bool)
        if W > 1:
            background[:-1] = self.history.states
            valid[:-1] = self.history.valid
        # the background term: the forecast on the current row, the agent's own past analyses on
        # the earlier rows (the spec puts it on the last row only; the window form cycles the
        # information of past cycles into the whole window) [recon]
        bmask = np.repeat(valid[:, None].astype(float), self.n, axis=1)
        terms = Terms(y=self._z(y) * torch.as_tensor(mask, dtype=torch.float32),
                      mask=torch.as_tensor(mask, dtype=torch.float32), background=self._z(background),
                      background_mask=torch.as_tensor(bmask, dtype=torch.float32),
                      sigma_obs=self.sigma_obs / self.s, sigma_b=self.sigma_b / self.s,
                      valid=torch.as_tensor(valid))
        if self.use_lr:
            full = {**obs, "history_y": np.asarray(obs["history_y"])[-W:],
                    "history_mask": np.asarray(obs["history_mask"])[-W:]}
            x_lr = low_rank_prior(full, self.history, self.rng, grid=self.grid)
            near = np.full((W, self.n), np.inf)
            for row in range(W):
                sites = np.flatnonzero(mask[row])
                if len(sites):
                    near[row] = self.distances[:, sites].min(axis=1)
            weight = (1.0 - mask) * np.exp(-near / LR_LENGTH)
            terms.lr = self._z(x_lr)
            terms.lr_weight = torch.as_tensor(weight, dtype=torch.float32)
        return terms

    def residual(self, terms: Terms) -> Any:
        mu, s, model, valid = self.mu, self.s, self.model, terms.valid

        def value(x0: torch.Tensor) -> torch.Tensor:
            return torch.sum(window_residual(model, x0 * s + mu, valid) ** 2)

        return value

    def analyse(self, obs: dict[str, Any]) -> np.ndarray:
        terms = self.terms(obs)
        noise = torch.randn((self.window, self.n), generator=self.gen)
        if self.use_lr and terms.lr is not None and self.g.sigma_start < SIGMA_MAX:
            start = terms.lr + self.g.sigma_start * noise  # SDEdit from the low-rank prior
        else:
            start = self.sigmas[0] * noise
        x = guided_sample(self.net, start, self.sigmas, terms, self.g, self.residual(terms))
        analysis = x[-1].numpy().astype(float) * self.s + self.mu
        if not np.all(np.isfinite(analysis)):
            analysis = np.asarray(obs["background"], dtype=float).mean(axis=0)
        self.history.push(analysis)
        return analysis
