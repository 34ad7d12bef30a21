"""SCAFFOLD, option II (Karimireddy et al. 2020), with a tuned local step size.

Down: theta, c. Client: y^0 = theta; y^{k+1} = y^k - eta_l (g_k - c_i + c) (the shared local
loop with a corrected direction); c_i^+ = c_i - c + (theta - y^K)/(K eta_l); up: Delta y =
y^K - theta, Delta c_i = c_i^+ - c_i. Server: theta += eta_g mean_S Delta y; c += (1/N)
sum_S Delta c_i. eta_l tuned as FedAvg's, eta_g = 1; ``step_scale`` multiplies the chosen eta_l.
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
from papergym.agents.fedlearn.fedavg import ETA_L_RANGE
from papergym.envs.fedlearn import codec
from papergym.envs.fedlearn.protocol import FedAlgorithm, ServerStrategy
from papergym.tuning import Tuned


class ScaffoldServer(ServerStrategy):
    def __init__(self, eta_g: float) -> None:
        self.eta_g = eta_g

    def reset(self, theta0, setting):
        self.setting, self.theta = setting, np.array(theta0, dtype=np.float64)
        self.c = np.zeros(setting.dim)

    def downlink(self, participants):
        return broadcast(self.setting, [codec.dense(self.theta), codec.dense(self.c)])

    def aggregate(self, uplinks):
        if uplinks:
            self.theta = self.theta + self.eta_g * np.mean(
                [u.vector(0) for u in uplinks.values()], axis=0)
            self.c = self.c + sum(u.vector(1) for u in uplinks.values()) / self.setting.num_clients
        return self.theta


class ScaffoldClient(LocalStepsClient):
    def __init__(self, oracle, setting, eta_l: float) -> None:
        super().__init__(oracle, setting, eta_l)
        self.c_i = np.zeros(setting.dim)

    def direction(self, g, x, observation):
        return g - self.c_i + received(observation, 1)  # g_k - c_i + c

    def __call__(self, observation):
        theta, c = received(observation, 0), received(observation, 1)
        y, _ = self.local_steps(theta, observation)
        c_plus = self.c_i - c + (theta - y) / (self.setting.local_steps * self.step)  # option II
        delta_c, self.c_i = c_plus - self.c_i, c_plus
        return send(self.setting, [codec.dense(y - theta), codec.dense(delta_c)])


class Scaffold(Tuned, Agent):
    """SCAFFOLD (option II) with eta_l tuned by the protocol over FedAvg's range, eta_g = 1."""

    id = "scaffold"
    family = "fedlearn"
    role = "baseline"
    paper = "karimireddy2020"

    class Config(AgentConfig):
        # no value in the paper or code for this problem: the old grid's choice on every split
        # of the standard tier (on the tuning instances) [recon]
        eta_l: float = 0.3
        eta_g: float = 1.0
        step_scale: float = 1.0
        tune: bool = True  # false: eta_l as given, no tuning runs

    search_space = {"eta_l": ETA_L_RANGE}

    def build(self, eta_l: float, step_scale: float = 1.0) -> FedAlgorithm:
        eta_g = self.config.eta_g
        step = eta_l * step_scale
        return FedAlgorithm(
            name=self.id, make_server=lambda: ScaffoldServer(eta_g),
            make_client=lambda i, oracle, setting: ScaffoldClient(oracle, setting, step),
            cache_key=cache_key(type(self), eta_l=eta_l, eta_g=eta_g, step_scale=step_scale),
            info=(("eta_l", step), ("eta_g", eta_g), ("step_scale", step_scale)),
        )

    def solve(self, view, budget, seed):
        eta_l = self.config.eta_l
        if self.config.tune:
            eta_l = tune(view, self.build, protocol_grid(self))[0]["eta_l"]
        return self.build(eta_l, self.config.step_scale)
