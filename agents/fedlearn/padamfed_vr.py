"""PAdaMFed-VR: PAdaMFed with a STORM-type correction (Yan, Zhang, Wang, Cao, ICLR 2025).

As padamfed.py, except the local direction [3p]:
    v_k = g_k + d^t - beta c_i - (1-beta) grad f_i(theta^{t-1}; xi_k),
with both gradients on the same minibatch (one oracle call, two points). How a client
obtains theta^{t-1} is not specified: here it is a third downlink slot, and it is
charged [recon]. Constants [3p]: eta = 1/(KT), gamma = beta = (SK)^{1/3}/T^{2/3}.
"""

from __future__ import annotations

import numpy as np

from papergym.agents.fedlearn.common import received
from papergym.agents.fedlearn.padamfed import PAdaMFed, PAdaMFedClient, PAdaMFedServer


class PAdaMFedVRServer(PAdaMFedServer):
    send_previous_model = True


class PAdaMFedVRClient(PAdaMFedClient):
    """PAdaMFed's local loop with the STORM direction; two points per oracle call."""

    def gradient(self, x, observation):
        _, grads = self.oracle(np.stack([x, received(observation, 2)]))  # same minibatch xi_k
        g, self._g_previous = grads
        return g

    def direction(self, g, x, observation):
        return (g + received(observation, 1) - self.beta * self.c
                - (1 - self.beta) * self._g_previous)


class PAdaMFedVR(PAdaMFed):
    """PAdaMFed with variance reduction (ICLR 2025); no tuning."""

    id = "padamfed_vr"
    server_cls = PAdaMFedVRServer
    client_cls = PAdaMFedVRClient
