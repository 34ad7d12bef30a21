"""PAdaMFed-VR: PAdaMFed with a STORM-type correction (Yan, Zhang, Wang, Cao, ICLR 2025).

As padamfed.py, except the local direction [3p]:
    v_k = g_k + d^t - beta c_i - (1-beta) grad f_i(theta^{t-1}; xi_k),
with both gradients on the same minibatch (one oracle call, two points). How a client
obtains theta^{t-1} is not specified: here it is a third downlink slot, and it is
charged [recon]. Constants [3p]: eta = 1/(KT), gamma = beta = (SK)^{1/3}/T^{2/3}.
"""

from __future__ import annotations

import numpy as np

from papergym.agent import Agent, AgentConfig
from papergym.agents.fedlearn.common import cache_key, received
from papergym.agents.fedlearn.padamfed import PAdaMFedClient, PAdaMFedServer, padamfed_constants
from papergym.envs.fedlearn.protocol import FedAlgorithm


class PAdaMFedVRServer(PAdaMFedServer):
    send_previous_model = True


class PAdaMFedVRClient(PAdaMFedClient):
    def direction(self, x, observation, d):
        previous = received(observation, 2)
        _, grads = self.oracle(np.stack([x, previous]))  # same minibatch xi_k
        g, g_previous = grads
        return g, g + d - self.beta * self.c - (1 - self.beta) * g_previous


class PAdaMFedVR(Agent):
    """PAdaMFed with variance reduction (ICLR 2025); no tuning."""

    id = "padamfed_vr"
    family = "fedlearn"
    role = "baseline"
    paper = "yan25"

    class Config(AgentConfig):
        pass

    def solve(self, view, budget, seed):
        beta, eta, gamma = padamfed_constants(view.setting)
        return FedAlgorithm(
            name=self.id, make_server=PAdaMFedVRServer,
            make_client=lambda i, oracle, setting: PAdaMFedVRClient(oracle, setting),
            cache_key=cache_key(type(self)), constants_verified=False,
            info=(("beta", beta), ("eta", eta), ("gamma", gamma)),
        )
