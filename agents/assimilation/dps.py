"""Diffusion posterior sampling (Chung et al., ICLR 2023): a single-state prior (W = 1) with
DPS steps zeta grad ||r(x0_hat)|| on the observation + background residual, from noise, 16
Euler ODE steps (``steps``; the spec's 32 halved). zeta tuned by the protocol on log-U[0.05, 5]
(the old grid {0.3, 1, 3} widened) at 10% density, the official code's 0.5 first."""

from __future__ import annotations

from typing import Any

from papergym.agent import AgentConfig
from papergym.agents.assimilation._common import CyclingAgent, CyclingPolicy
from papergym.agents.assimilation._diffusion import DiffusionPolicy, Guidance
from papergym.tuning import LogUniform


class DPS(CyclingAgent):
    id = "dps"
    role = "baseline"

    class Config(AgentConfig):
        steps: int = 16  # Euler steps of the sampler (the spec's 32 halved for the CPU tier)
        # the step on grad ||y - H x0_hat||: 0.5 in the official code's random-mask inpainting
        # (DPS2022/diffusion-posterior-sampling, configs/inpainting_config.yaml) [code]
        zeta: float = 0.5

    search_space = {"zeta": LogUniform(0.05, 5.0)}

    def make_policy(self, view: Any, params: dict[str, Any], seed: int) -> CyclingPolicy:
        g = Guidance(steps=self.config.steps, zeta_obs=float(params["zeta"]))
        return DiffusionPolicy(view, 1, g, seed, use_lr=False)
