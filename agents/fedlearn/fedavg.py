"""FedAvg (McMahan et al. 2017) with a tuned local step size.

Client: x^0 = theta; K local SGD steps x^{k+1} = x^k - eta_l g_k; up Delta_i = x^K - theta.
Server: theta += eta_g mean_S Delta_i, eta_g = 1. eta_l is tuned by the protocol
(agents.fedlearn.common.TUNING_CONFIGS configurations, the default first) on log-U[1e-2, 10]
on the view's tuning instances (mean validation accuracy of the last 5 rounds); the old grid
over that range chose an interior 1.0 on every split of the standard tier. ``step_scale``
multiplies the chosen eta_l (the step-size sensitivity section).
"""

from __future__ import annotations

import numpy as np

from papergym.agent import Agent, AgentConfig
from papergym.agents.fedlearn.common import (
    LocalStepsClient,
    broadcast,
    cache_key,
    protocol_grid,
    received,
    send,
    tune,
)
from papergym.envs.fedlearn import codec
from papergym.envs.fedlearn.protocol import FedAlgorithm, ServerStrategy
from papergym.tuning import LogUniform, Tuned

ETA_L_RANGE = LogUniform(0.01, 10.0)  # the old grid's span, 1e-2..10


class FedAvgServer(ServerStrategy):
    def __init__(self, eta_g: float) -> None:
        self.eta_g = eta_g

    def reset(self, theta0, setting):
        self.setting, self.theta = setting, np.array(theta0, dtype=np.float64)

    def downlink(self, participants):
        return broadcast(self.setting, [codec.dense(self.theta)])

    def server_step(self, mean_delta: np.ndarray) -> None:
        self.theta = self.theta + self.eta_g * mean_delta

    def aggregate(self, uplinks):
        if uplinks:
            self.server_step(np.mean([u.vector(0) for u in uplinks.values()], axis=0))
        return self.theta


class LocalSGDClient(LocalStepsClient):
    """K plain SGD steps (the shared local loop with v_k = g_k); up x^K - theta."""

    def __call__(self, observation):
        theta = received(observation, 0)
        x, _ = self.local_steps(theta, observation)
        return send(self.setting, [codec.dense(x - theta)])


class FedAvg(Tuned, Agent):
    """FedAvg with eta_l tuned by the protocol, eta_g = 1."""

    id = "fedavg"
    family = "fedlearn"
    role = "baseline"
    paper = "mcmahan2017"

    class Config(AgentConfig):
        # no value in the paper or code for this problem: the old grid's choice on every split
        # of the standard tier (on the tuning instances) [recon]
        eta_l: float = 1.0
        eta_g: float = 1.0
        step_scale: float = 1.0  # multiplies the chosen eta_l (sensitivity runs)
        tune: bool = True  # false: eta_l as given, no tuning runs

    search_space = {"eta_l": ETA_L_RANGE}

    def build(self, eta_l: float, step_scale: float = 1.0) -> FedAlgorithm:
        eta_g = self.config.eta_g
        step = eta_l * step_scale
        return FedAlgorithm(
            name=self.id, make_server=lambda: FedAvgServer(eta_g),
            make_client=lambda i, oracle, setting: LocalSGDClient(oracle, setting, step),
            cache_key=cache_key(type(self), eta_l=eta_l, eta_g=eta_g, step_scale=step_scale),
            info=(("eta_l", step), ("eta_g", eta_g), ("step_scale", step_scale)),
        )

    def solve(self, view, budget, seed):
        eta_l = self.config.eta_l
        if self.config.tune:
            eta_l = tune(view, self.build, protocol_grid(self))[0]["eta_l"]
        return self.build(eta_l, self.config.step_scale)
