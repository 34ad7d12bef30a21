"""Trivial reference: sends nothing, theta stays theta_0 (the 0 of the normalized score)."""

from __future__ import annotations

import numpy as np

from papergym.agent import Agent, AgentConfig
from papergym.agents.fedlearn.common import cache_key
from papergym.envs.fedlearn import codec
from papergym.envs.fedlearn.protocol import ClientPolicy, FedAlgorithm, ServerStrategy


class StillServer(ServerStrategy):
    def reset(self, theta0, setting):
        self.setting, self.theta = setting, np.array(theta0, dtype=np.float64)

    def downlink(self, participants):
        return codec.empty_message(self.setting.downlink_slots, self.setting.dim)

    def aggregate(self, uplinks):
        return self.theta


class SilentClient(ClientPolicy):
    def __init__(self, setting) -> None:
        self.message = codec.empty_message(setting.uplink_slots, setting.dim)

    def __call__(self, observation):
        return self.message


class Trivial(Agent):
    """Never moves theta_0 and sends 0 bits."""

    id = "trivial"
    family = "fedlearn"
    role = "reference"
    paper = "yan26x"

    class Config(AgentConfig):
        pass

    def solve(self, view, budget, seed):
        return FedAlgorithm(name=self.id, make_server=StillServer,
                            make_client=lambda i, oracle, setting: SilentClient(setting),
                            cache_key=cache_key(type(self)))
