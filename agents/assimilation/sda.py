"""Score-based data assimilation (Rozet and Louppe, NeurIPS 2023), SDA-style: the shared window
prior with the Gaussian likelihood approximation p(y | x_sigma) ~ N(H x0_hat, S_y + gamma sigma^2 I)
added to the prior score, sampled from noise with 16 Euler ODE steps (``steps``; the spec's 32
halved). Their Langevin corrector steps are left out at this scale [departure]. gamma tuned in
{0.1, 0.01, 1} at 10% density."""

from __future__ import annotations

from typing import Any

from papergym.agent import AgentConfig
from papergym.agents.assimilation._common import CyclingAgent, CyclingPolicy
from papergym.agents.assimilation._diffusion import DiffusionPolicy, Guidance

GAMMAS = (0.1, 0.01, 1.0)


class SDA(CyclingAgent):
    id = "sda"
    role = "baseline"

    class Config(AgentConfig):
        steps: int = 16  # Euler steps of the sampler (the spec's 32 halved for the CPU tier)

    def grid(self, view: Any) -> list[dict[str, Any]]:
        return [{"gamma": g} for g in GAMMAS]

    def make_policy(self, view: Any, params: dict[str, Any], seed: int) -> CyclingPolicy:
        g = Guidance(steps=self.config.steps, sda_gamma=float(params["gamma"]))
        return DiffusionPolicy(view, int(view.window), g, seed, use_lr=False)
