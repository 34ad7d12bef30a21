"""ParFreFL: parameter-free federated learning with one vector each way (Yan et al., ICML 2026).

Known from the public reviews of the withdrawn submission [rev]: each client keeps its own
momentum m_i, which doubles as its control variate (c_i = m_i); the server keeps
c_bar = (1/N) sum_i c_i over all N clients and moves theta along the direction built from
the control variates; one d-vector up and one down per participant per round (PAdaMFed
sends two each way); constants from (S, K, T) only (Theorem 1):
    beta = sqrt(SK/T) (clipped to <= 1 [recon]),  eta = 1/(K (SKT)^{1/4}),
    gamma = (SK)^{1/4} / T^{3/4}.

Reconstructed here [recon] (the paper's Algorithm 1 was not available; decisions follow
papergym's spec, shared/specs/fedlearn.md, and are flagged constants_verified=False):
- downlink: theta^t (the single downlink vector);
- local steps: x^{k+1} = x^k - eta g_k/||g_k|| (normalized, no drift correction), K steps;
- momentum: m_i^new = (1-beta) m_i + beta gbar_i with gbar_i = (1/K) sum_k g_k; the paper
  computes m_i^{-1} before training, which FedRounds-v0 cannot (only participants act), so
  a client's first participation sets m_i^new = gbar_i;
- uplink: the momentum increment u_i = m_i^new - m_i;
- server: c_bar += (1/N) sum_{i in S_t} u_i; theta^{t+1} = theta^t - gamma c_bar/||c_bar||
  (normalized server step). The server needs only c_bar, not every c_i.
"""

from __future__ import annotations

import math

import numpy as np

from papergym.agent import Agent, AgentConfig
from papergym.agents.fedlearn.common import cache_key, received, send, unit
from papergym.envs.fedlearn import codec
from papergym.envs.fedlearn.protocol import ClientPolicy, FedAlgorithm, FedSetting, ServerStrategy


def parfrefl_constants(setting: FedSetting) -> tuple[float, float, float]:
    """(beta, eta, gamma) of Theorem 1 [rev]: functions of S, K, T only."""
    S, K, T = setting.participants, setting.local_steps, setting.rounds
    beta = min(1.0, math.sqrt(S * K / T))
    eta = 1.0 / (K * (S * K * T) ** 0.25)
    gamma = (S * K) ** 0.25 / T**0.75
    return beta, eta, gamma


class ParFreFLServer(ServerStrategy):
    def __init__(self, gamma: float | None) -> None:
        self.gamma_override = gamma

    def reset(self, theta0, setting):
        self.setting, self.theta = setting, np.array(theta0, dtype=np.float64)
        self.gamma = self.gamma_override or parfrefl_constants(setting)[2]
        self.c_bar = np.zeros(setting.dim)  # (1/N) sum_i c_i over all N clients

    def downlink(self, participants):
        return codec.build_message(self.setting.downlink_slots, self.setting.dim,
                                   [codec.dense(self.theta)])

    def aggregate(self, uplinks):
        for payload in uplinks.values():
            self.c_bar += payload.vector(0) / self.setting.num_clients  # c_i += u_i
        self.theta = self.theta - self.gamma * unit(self.c_bar)  # normalized server step
        return self.theta


class ParFreFLClient(ClientPolicy):
    def __init__(self, oracle, setting: FedSetting, beta: float, eta: float) -> None:
        self.oracle, self.setting, self.beta, self.eta = oracle, setting, beta, eta
        self.momentum: np.ndarray | None = None  # m_i (its control variate c_i)

    def local_gradients(self, theta: np.ndarray) -> np.ndarray:
        """K normalized local steps from theta; returns gbar_i = (1/K) sum_k g_k."""
        x, total = theta.copy(), np.zeros_like(theta)
        for _ in range(self.setting.local_steps):
            _, g = self.oracle(x)
            total += g
            x -= self.eta * unit(g)
        return total / self.setting.local_steps

    def next_momentum(self, theta: np.ndarray) -> np.ndarray:
        g_bar = self.local_gradients(theta)
        if self.momentum is None:
            return g_bar  # first participation: m_i = gbar_i [recon]
        return (1 - self.beta) * self.momentum + self.beta * g_bar

    def __call__(self, observation):
        m_new = self.next_momentum(received(observation, 0))
        increment = m_new - (self.momentum if self.momentum is not None else 0.0)
        self.momentum = m_new
        return send(self.setting, [codec.dense(increment)])


class ParFreFL(Agent):
    """ParFreFL (Yan, Zhong, Zhang, ICML 2026), reconstructed rule; no tuning."""

    id = "parfrefl"
    family = "fedlearn"
    role = "method"
    paper = "yan26x"

    class Config(AgentConfig):
        # parameter-free: the constants come from (S, K, T); setting one marks the run
        # `overridden` in the table
        beta: float | None = None
        eta: float | None = None
        gamma: float | None = None

    def solve(self, view, budget, seed):
        cfg = self.config
        beta0, eta0, gamma0 = parfrefl_constants(view.setting)
        beta, eta = cfg.beta or beta0, cfg.eta or eta0
        return FedAlgorithm(
            name=self.id,
            make_server=lambda: ParFreFLServer(cfg.gamma),
            make_client=lambda i, oracle, setting: ParFreFLClient(
                oracle, setting, cfg.beta or parfrefl_constants(setting)[0],
                cfg.eta or parfrefl_constants(setting)[1]),
            cache_key=cache_key(type(self), **cfg.model_dump()),
            constants_verified=False,
            overridden=any(v is not None for v in cfg.model_dump().values()),
            info=(("beta", beta), ("eta", eta), ("gamma", cfg.gamma or gamma0)),
        )
