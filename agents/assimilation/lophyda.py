"""LoPhyDA-lite: a low-rank completion global prior, then a window diffusion prior guided by
the observations, the low-rank field and the PDE residual (injected into the noise prediction).

Reconstructed from the abstract (spec ``assimilation.md``, [recon]) except the placement of the
physics gradient in the noise-prediction steps, which a citing paper states [cited]. Per cycle:
(1) complete the observation window (missing entries initialized from the agent's past
analyses and the background): on Lorenz-96 soft-impute of the W x n matrix, lam on held-out
observed entries; on Kolmogorov flow HaLRTC of the W x size x size tensor of innovations
(``tc_only.low_rank_prior``) -> x_LR; (2) SDEdit start
x_{sigma*} = x_LR + sigma* z; (3) 16 Euler steps (``steps``) of the shared EDM window prior with DPS-style
steps on the observation + background residual (zeta_o) and on the distance-weighted low-rank
residual ||(1 - M) W_d (x_LR - x0_hat)|| (zeta_LR, W_d = exp(-d / 2)), and the physics
correction eps' = eps_hat + zeta_p sigma g / rms(g), g = grad ||R(x0_hat)||^2 with R_tau =
x_{tau+1} - RK4_Delta(x_tau) (Kolmogorov flow: the pseudo-spectral RK4 step through
``torch.fft``), below sigma_p = 1; (4) the analysis is the last row.
"""

from __future__ import annotations

from typing import Any

from papergym.agent import AgentConfig
from papergym.agents.assimilation._common import CyclingAgent, CyclingPolicy
from papergym.agents.assimilation._diffusion import SIGMA_MAX, DiffusionPolicy, Guidance
from papergym.tuning import LogUniform

GUIDANCE = {"zeta_obs": LogUniform(0.02, 3.0), "zeta_phys": LogUniform(0.01, 10.0)}


class LoPhyDA(CyclingAgent):
    """LoPhyDA-lite (the method): zeta_o on log-U[0.02, 3] and zeta_p on log-U[0.01, 10] (the old
    grid {0.3, 1} widened; on [0.1, 3] the standard tier chose zeta_p at its largest draw, on
    [0.1, 10] a 2-seed pilot chose zeta_o 0.13 and zeta_p 0.13, both the smallest of their
    draws), zeta_LR on log-U[0.1, 3] and sigma* on log-U[0.5, 8] (fixed at 1 and 2 before; the
    spec tunes all four), tuned by the protocol on the tuning seeds at 10% density. The ablations fix
    their removed term at zero and tune the rest on runs of their own (the problem keys runs by
    agent)."""

    id = "lophyda"
    role = "method"

    class Config(AgentConfig):
        steps: int = 16  # Euler steps of the sampler (the spec's 32 halved for the CPU tier)
        # no official code and no full text: unit guidance weights and an SDEdit start at
        # sigma* = 2 (of the EDM prior's 20) [recon]
        zeta_obs: float = 1.0
        zeta_lr: float = 1.0
        zeta_phys: float = 1.0
        sigma_start: float = 2.0

    search_space = {**GUIDANCE, "zeta_lr": LogUniform(0.1, 3.0), "sigma_start": LogUniform(0.5, 8.0)}

    def guidance(self, params: dict[str, Any]) -> Guidance:
        return Guidance(steps=params["steps"], zeta_obs=params["zeta_obs"], zeta_lr=params["zeta_lr"],
                        zeta_phys=params["zeta_phys"], sigma_start=params["sigma_start"])

    def make_policy(self, view: Any, params: dict[str, Any], seed: int) -> CyclingPolicy:
        g = self.guidance(params)
        use_lr = g.zeta_lr > 0 or g.sigma_start < SIGMA_MAX
        return DiffusionPolicy(view, int(view.window), g, seed, use_lr=use_lr)


class LoPhyDANoLR(LoPhyDA):
    """Ablation: no low-rank prior (zeta_LR = 0, sampling from noise); zeta_o and zeta_p tuned."""

    id = "lophyda_nolr"
    role = "baseline"

    class Config(LoPhyDA.Config):
        zeta_lr: float = 0.0
        sigma_start: float = SIGMA_MAX

    search_space = dict(GUIDANCE)


class LoPhyDANoPhys(LoPhyDA):
    """Ablation: no physics guidance (zeta_p = 0); zeta_o, zeta_LR and sigma* tuned."""

    id = "lophyda_nophys"
    role = "baseline"

    class Config(LoPhyDA.Config):
        zeta_phys: float = 0.0

    search_space = {"zeta_obs": GUIDANCE["zeta_obs"], "zeta_lr": LogUniform(0.1, 3.0),
                    "sigma_start": LogUniform(0.5, 8.0)}
