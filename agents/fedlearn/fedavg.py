"""FedAvg (McMahan et al. 2017) with a tuned local step size.

Client: x^0 = theta; K local SGD steps x^{k+1} = x^k - eta_l g_k; up Delta_i = x^K - theta.
Server: theta += eta_g mean_S Delta_i, eta_g = 1. eta_l is chosen from the grid on the
view's tuning instances (mean validation accuracy of the last 5 rounds).
"""

from __future__ import annotations

import numpy as np

from papergym.agent import Agent, AgentConfig
from papergym.agents.fedlearn.common import broadcast, cache_key, received, send, tune
from papergym.envs.fedlearn import codec
from papergym.envs.fedlearn.protocol import ClientPolicy, FedAlgorithm, ServerStrategy


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


class LocalSGDClient(ClientPolicy):
    def __init__(self, oracle, setting, eta_l: float) -> None:
        self.oracle, self.setting, self.eta_l = oracle, setting, eta_l

    def __call__(self, observation):
        theta = received(observation, 0)
        x = theta.copy()
        for _ in range(self.setting.local_steps):
            _, g = self.oracle(x)
            x -= self.eta_l * g
        return send(self.setting, [codec.dense(x - theta)])


class FedAvg(Agent):
    """FedAvg with eta_l tuned over the spec's grid, eta_g = 1."""

    id = "fedavg"
    family = "fedlearn"
    role = "baseline"
    paper = "mcmahan2017"

    class Config(AgentConfig):
        eta_l_grid: tuple[float, ...] = (0.003, 0.01, 0.03, 0.1, 0.3, 1.0)
        eta_l: float | None = None  # set: no tuning
        eta_g: float = 1.0

    def build(self, eta_l: float) -> FedAlgorithm:
        eta_g = self.config.eta_g
        return FedAlgorithm(
            name=self.id, make_server=lambda: FedAvgServer(eta_g),
            make_client=lambda i, oracle, setting: LocalSGDClient(oracle, setting, eta_l),
            cache_key=cache_key(type(self), eta_l=eta_l, eta_g=eta_g),
            info=(("eta_l", eta_l), ("eta_g", eta_g)),
        )

    def solve(self, view, budget, seed):
        eta_l = self.config.eta_l
        if eta_l is None:
            grid = [{"eta_l": e} for e in self.config.eta_l_grid]
            eta_l = tune(view, self.build, grid)[0]["eta_l"]
        return self.build(eta_l)
