"""Diffusion posterior sampling (Chung et al., ICLR 2023): a single-state prior (W = 1) with
DPS steps zeta grad ||r(x0_hat)|| on the observation + background residual, from noise, 16
Euler ODE steps (``steps``; the spec's 32 halved). zeta tuned in {1, 0.3, 3} at 10% density."""

from __future__ import annotations

from typing import Any

from papergym.agent import AgentConfig
from papergym.agents.assimilation._common import CyclingAgent, CyclingPolicy
from papergym.agents.assimilation._diffusion import DiffusionPolicy, Guidance

ZETAS = (1.0, 0.3, 3.0)


class DPS(CyclingAgent):
    id = "dps"
    role = "baseline"

    class Config(AgentConfig):
        steps: int = 16  # Euler steps of the sampler (the spec's 32 halved for the CPU tier)

    def grid(self, view: Any) -> list[dict[str, Any]]:
        return [{"zeta": z} for z in ZETAS]

    def make_policy(self, view: Any, params: dict[str, Any], seed: int) -> CyclingPolicy:
        g = Guidance(steps=self.config.steps, zeta_obs=float(params["zeta"]))
        return DiffusionPolicy(view, 1, g, seed, use_lr=False)
