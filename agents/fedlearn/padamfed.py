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
``constants: parfrefl`` runs the rule at ParFreFL's schedule instead (constants.py: the
step-matched comparison of the two methods); with ``step_scale`` != 1 it marks the run
``overridden``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from papergym.agent import Agent, AgentConfig
from papergym.agents.fedlearn.common import LocalStepsClient, broadcast, cache_key, received, send
from papergym.agents.fedlearn.constants import Schedule, StepConstants, theory_constants
from papergym.envs.fedlearn import codec
from papergym.envs.fedlearn.protocol import FedAlgorithm, FedSetting, ServerStrategy


def resolved_constants(schedule: Schedule, step_scale: float,
                       setting: FedSetting) -> StepConstants:
    """(beta, eta, gamma): the schedule's, with eta and gamma multiplied by step_scale."""
    beta, eta, gamma = theory_constants(schedule, setting)
    return StepConstants(beta, eta * step_scale, gamma * step_scale)


class PAdaMFedServer(ServerStrategy):
    """``constants(setting)``: the (beta, eta, gamma) the run uses."""

    send_previous_model = False  # the VR variant also broadcasts theta^{t-1}

    def __init__(self, constants: Callable[[FedSetting], StepConstants]) -> None:
        self.constants = constants

    def reset(self, theta0, setting):
        self.setting = setting
        self.beta, _, self.gamma = self.constants(setting)
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

    def __init__(self, oracle, setting: FedSetting, constants: StepConstants) -> None:
        self.beta, eta, _ = constants
        super().__init__(oracle, setting, eta)
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
        # parameter-free: the constants come from (S, K, T) by the `constants` schedule
        # (constants.py; ParFreFL's for the step-matched comparison); another schedule, or
        # a step_scale other than 1 (multiplies eta and gamma; the step-size sensitivity
        # section), marks the run `overridden`
        constants: Schedule = "padamfed"
        step_scale: float = 1.0

    def solve(self, view, budget, seed):
        schedule, scale = self.config.constants, self.config.step_scale
        beta, eta, gamma = resolved_constants(schedule, scale, view.setting)
        server_cls, client_cls = self.server_cls, self.client_cls
        return FedAlgorithm(
            name=self.id,
            make_server=lambda: server_cls(lambda s: resolved_constants(schedule, scale, s)),
            make_client=lambda i, oracle, setting: client_cls(
                oracle, setting, resolved_constants(schedule, scale, setting)),
            cache_key=cache_key(type(self), constants=schedule, step_scale=scale),
            constants_verified=False, overridden=scale != 1.0 or schedule != "padamfed",
            info=(("beta", beta), ("eta", eta), ("gamma", gamma), ("step_scale", scale)),
        )
