"""FedAdam (Reddi et al. 2021, Algorithm 2) with tuned server and client step sizes.

Clients as FedAvg (K local SGD steps, up Delta_i = x^K - theta). Server: Delta = mean_S
Delta_i; m = b1 m + (1-b1) Delta; v = b2 v + (1-b2) Delta^2; theta += eta_s m/(sqrt(v)+tau),
b1 = 0.9, b2 = 0.99, tau = 1e-3. (eta_s, eta_l) tuned by the protocol on log-U[1e-3, 1] x
log-U[1e-2, 1]: the old grid {1e-3, ..., 1e-1} x {0.01, 0.03, 0.1} chose its top corner
(0.1, 0.1) on both Dirichlet splits of the standard tier.
"""

from __future__ import annotations

import numpy as np

from papergym.agent import Agent, AgentConfig
from papergym.agents.fedlearn.common import cache_key, protocol_grid, tune
from papergym.agents.fedlearn.fedavg import FedAvgServer, LocalSGDClient
from papergym.envs.fedlearn.protocol import FedAlgorithm
from papergym.tuning import LogUniform, Tuned


class FedAdamServer(FedAvgServer):
    def __init__(self, eta_s: float, beta1: float, beta2: float, tau: float) -> None:
        super().__init__(eta_g=1.0)
        self.eta_s, self.beta1, self.beta2, self.tau = eta_s, beta1, beta2, tau

    def reset(self, theta0, setting):
        super().reset(theta0, setting)
        self.m = np.zeros(setting.dim)
        self.v = np.zeros(setting.dim)

    def server_step(self, mean_delta):
        self.m = self.beta1 * self.m + (1 - self.beta1) * mean_delta
        self.v = self.beta2 * self.v + (1 - self.beta2) * mean_delta**2
        self.theta = self.theta + self.eta_s * self.m / (np.sqrt(self.v) + self.tau)


class FedAdam(Tuned, Agent):
    """FedAdam with (eta_s, eta_l) tuned by the protocol."""

    id = "fedadam"
    family = "fedlearn"
    role = "baseline"
    paper = "reddi2021"

    class Config(AgentConfig):
        # no value in the paper or code for this problem: the old grid's choice (its edge) on
        # the Dirichlet splits of the standard tier [recon]; beta1, beta2, tau: Reddi et al.
        eta_s: float = 0.1
        eta_l: float = 0.1
        tune: bool = True  # false: (eta_s, eta_l) as given, no tuning runs
        beta1: float = 0.9
        beta2: float = 0.99
        tau: float = 1e-3
        step_scale: float = 1.0  # multiplies the chosen server step eta_s

    search_space = {"eta_s": LogUniform(1e-3, 1.0), "eta_l": LogUniform(1e-2, 1.0)}

    def build(self, eta_s: float, eta_l: float, step_scale: float = 1.0) -> FedAlgorithm:
        c = self.config
        server_step = eta_s * step_scale
        return FedAlgorithm(
            name=self.id,
            make_server=lambda: FedAdamServer(server_step, c.beta1, c.beta2, c.tau),
            make_client=lambda i, oracle, setting: LocalSGDClient(oracle, setting, eta_l),
            cache_key=cache_key(type(self), eta_s=eta_s, eta_l=eta_l, beta1=c.beta1,
                                beta2=c.beta2, tau=c.tau, step_scale=step_scale),
            info=(("eta_s", server_step), ("eta_l", eta_l), ("step_scale", step_scale)),
        )

    def solve(self, view, budget, seed):
        c = self.config
        if not c.tune:
            return self.build(c.eta_s, c.eta_l, c.step_scale)
        return self.build(**tune(view, self.build, protocol_grid(self))[0], step_scale=c.step_scale)
