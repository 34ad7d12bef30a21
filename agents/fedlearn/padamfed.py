"""PAdaMFed: problem-parameter-free federated learning (Yan, Zhang, Wang, Cao, ICLR 2025).

Structure [3p] (a third-party VR implementation; no official code): SCAFFOLD-M with
normalized local steps and constants from (T, K, S) only; two d-vectors each way, the
clients' local models among the uploads and one global momentum are confirmed by the
ParFreFL reviews [rev]. Server state: theta, c = (1/N) sum of the latest c_i, global
momentum g, every c_i.
- down (2 vectors): theta^t and d^t = beta c^t + (1-beta) g^t.
- client: x^0 = theta^t; v_k = beta (g_k - c_i) + d^t; x^{k+1} = x^k - eta v_k/||v_k||;
  c_i^new = (1/K) sum_k g_k; Delta_i = (theta^t - x^K)/(eta K); up: Delta_i, c_i^new.
- server: theta^{t+1} = theta^t - gamma mean_S Delta_i; c^{t+1} = c^t + (1/N) sum_S
  (c_i^new - c_i); g^{t+1} = beta (c^t + (1/S) sum_S (c_i^new - c_i)) + (1-beta) g^t.
Constants [3p, VR variant]: eta = 1/(KT), gamma = beta = (SK)^{1/3} / T^{2/3}; the base
variant's exponents are unknown, so the VR values are used (constants_verified=False).
"""

from __future__ import annotations

import numpy as np

from papergym.agent import Agent, AgentConfig
from papergym.agents.fedlearn.common import LocalStepsClient, broadcast, cache_key, received, send
from papergym.envs.fedlearn import codec
from papergym.envs.fedlearn.protocol import FedAlgorithm, FedSetting, ServerStrategy


def padamfed_constants(setting: FedSetting) -> tuple[float, float, float]:
    """(beta, eta, gamma) [3p]: eta = 1/(KT), gamma = beta = (SK)^{1/3}/T^{2/3} (<= 1)."""
    S, K, T = setting.participants, setting.local_steps, setting.rounds
    beta = min(1.0, (S * K) ** (1 / 3) / T ** (2 / 3))
    return beta, 1.0 / (K * T), beta


class PAdaMFedServer(ServerStrategy):
    send_previous_model = False  # the VR variant also broadcasts theta^{t-1}

    def __init__(self, step_scale: float = 1.0) -> None:
        self.step_scale = step_scale

    def reset(self, theta0, setting):
        self.setting = setting
        self.beta, _, gamma = padamfed_constants(setting)
        self.gamma = gamma * self.step_scale
        self.theta = np.array(theta0, dtype=np.float64)
        self.previous_theta = self.theta.copy()
        self.c = np.zeros(setting.dim)
        self.momentum = np.zeros(setting.dim)  # global momentum g
        self.client_c = np.zeros((setting.num_clients, setting.dim))

    def downlink(self, participants):
        d = self.beta * self.c + (1 - self.beta) * self.momentum
        slots = [codec.dense(self.theta), codec.dense(d)]
        if self.send_previous_model:
            slots.append(codec.dense(self.previous_theta))
        return broadcast(self.setting, slots)

    def aggregate(self, uplinks):
        if not uplinks:
            return self.theta
        s = self.setting
        deltas = np.mean([u.vector(0) for u in uplinks.values()], axis=0)
        c_change = np.zeros(s.dim)
        for i, u in uplinks.items():
            c_new = u.vector(1)
            c_change += c_new - self.client_c[i]
            self.client_c[i] = c_new
        self.momentum = (self.beta * (self.c + c_change / len(uplinks))
                         + (1 - self.beta) * self.momentum)
        self.c = self.c + c_change / s.num_clients
        self.previous_theta = self.theta
        self.theta = self.theta - self.gamma * deltas
        return self.theta


class PAdaMFedClient(LocalStepsClient):
    """Normalized local steps along v_k = beta (g_k - c_i) + d^t (the shared local loop)."""

    normalized = True

    def __init__(self, oracle, setting: FedSetting, step_scale: float = 1.0) -> None:
        self.beta, eta, _ = padamfed_constants(setting)
        super().__init__(oracle, setting, eta * step_scale)
        self.c = np.zeros(setting.dim)  # own c_i (last c_i^new sent)

    def direction(self, g, x, observation):
        return self.beta * (g - self.c) + received(observation, 1)

    def __call__(self, observation):
        theta = received(observation, 0)
        x, c_new = self.local_steps(theta, observation)  # c_i^new = (1/K) sum_k g_k
        delta = (theta - x) / (self.step * self.setting.local_steps)
        self.c = c_new
        return send(self.setting, [codec.dense(delta), codec.dense(c_new)])


class PAdaMFed(Agent):
    """PAdaMFed (ICLR 2025) base variant with the VR constants; no tuning."""

    id = "padamfed"
    family = "fedlearn"
    role = "baseline"
    paper = "yan25"
    server_cls = PAdaMFedServer
    client_cls = PAdaMFedClient

    class Config(AgentConfig):
        # parameter-free: a step_scale other than 1 multiplies eta and gamma and marks the
        # run `overridden` (the step-size sensitivity section)
        step_scale: float = 1.0

    def solve(self, view, budget, seed):
        beta, eta, gamma = padamfed_constants(view.setting)
        scale = self.config.step_scale
        server_cls, client_cls = self.server_cls, self.client_cls
        return FedAlgorithm(
            name=self.id, make_server=lambda: server_cls(scale),
            make_client=lambda i, oracle, setting: client_cls(oracle, setting, scale),
            cache_key=cache_key(type(self), step_scale=scale), constants_verified=False,
            overridden=scale != 1.0,
            info=(("beta", beta), ("eta", eta * scale), ("gamma", gamma * scale),
                  ("step_scale", scale)),
        )
