"""EF21-M (Fatkhullin et al. 2023): error feedback with momentum, adapted to partial
participation; the compressed baseline (the paper's SCAFCOM is not implemented).

Client i (participating): K minibatch gradients at theta^t (the same sample budget as the
local-step methods, no local movement), gbar_i their mean; v_i <- (1-a) v_i + a gbar_i
(first participation: v_i = gbar_i [recon]); c_i = C(v_i - g_i); g_i += c_i (mirrored by
the server); up: c_i. Server: g += (1/N) sum_S c_i; theta^{t+1} = theta^t - gamma g.
(gamma, a) are tuned by the protocol (log-U[0.003, 1] x log-U[0.05, 1]; every label draws the
same candidates) at top-k ratio `tune_ratio` (0.1) only and reused unchanged at every
other ratio: that reuse is what the ratio-independence claim (C3) tests.
"""

from __future__ import annotations

import numpy as np

from papergym.agent import Agent, AgentConfig
from papergym.agents.fedlearn.common import broadcast, cache_key, protocol_grid, received, send, tune
from papergym.agents.fedlearn.compressors import make_compressor
from papergym.envs.fedlearn import codec
from papergym.envs.fedlearn.protocol import ClientPolicy, FedAlgorithm, ServerStrategy
from papergym.tuning import LogUniform, Tuned


class EF21MServer(ServerStrategy):
    def __init__(self, gamma: float) -> None:
        self.gamma = gamma

    def reset(self, theta0, setting):
        self.setting, self.theta = setting, np.array(theta0, dtype=np.float64)
        self.g = np.zeros(setting.dim)  # (1/N) sum_i g_i

    def downlink(self, participants):
        return broadcast(self.setting, [codec.dense(self.theta)])

    def aggregate(self, uplinks):
        for u in uplinks.values():
            self.g += u.vector(0) / self.setting.num_clients
        self.theta = self.theta - self.gamma * self.g
        return self.theta


class EF21MClient(ClientPolicy):
    def __init__(self, oracle, setting, momentum: float, compressor) -> None:
        self.oracle, self.setting, self.a, self.compressor = oracle, setting, momentum, compressor
        self.v: np.ndarray | None = None
        self.g = np.zeros(setting.dim)

    def __call__(self, observation):
        theta = received(observation, 0)
        g_bar = np.mean([self.oracle(theta)[1] for _ in range(self.setting.local_steps)], axis=0)
        self.v = g_bar if self.v is None else (1 - self.a) * self.v + self.a * g_bar
        decoded, slot = self.compressor(self.v - self.g)
        self.g += decoded
        return send(self.setting, [slot])


class EF21M(Tuned, Agent):
    """EF21-M with (gamma, a) tuned at ratio 0.1 and reused at every ratio."""

    id = "ef21m"
    family = "fedlearn"
    role = "baseline"
    paper = "fatkhullin2023"

    class Config(AgentConfig):
        compressor: str = "topk"
        ratio: float = 0.1
        tune_ratio: float = 0.1
        tune_compressor: str = "topk"  # the grid runs compressed, whatever `compressor` is
        # no official code for this setting: the middle of the old grid's gamma and its
        # momentum 0.1 [recon]
        gamma: float = 0.1
        momentum: float = 0.1
        tune: bool = True  # false: (gamma, momentum) as given, no tuning runs

    search_space = {"gamma": LogUniform(0.003, 1.0), "momentum": LogUniform(0.05, 1.0)}

    def build(self, gamma: float, momentum: float, ratio: float,
              compressor: str | None = None) -> FedAlgorithm:
        name = compressor or self.config.compressor
        make_compressor(name, ratio)
        return FedAlgorithm(
            name=self.id, make_server=lambda: EF21MServer(gamma),
            make_client=lambda i, oracle, setting: EF21MClient(
                oracle, setting, momentum, make_compressor(name, ratio)),
            cache_key=cache_key(type(self), gamma=gamma, momentum=momentum, ratio=ratio,
                                compressor=name),
            info=(("gamma", gamma), ("momentum", momentum), ("ratio", ratio)),
        )

    def solve(self, view, budget, seed):
        c = self.config
        if not c.tune:
            return self.build(c.gamma, c.momentum, c.ratio)
        grid = protocol_grid(self, ratio=c.tune_ratio, compressor=c.tune_compressor)
        best = tune(view, self.build, grid)[0]
        return self.build(best["gamma"], best["momentum"], c.ratio)
