"""ComParFreFL: ParFreFL with biased compression and error feedback (Yan et al., ICML 2026).

Read [rev] (public reviews of the withdrawn submission; Algorithm 2 itself is not public):
clients compress with a biased contractive compressor C (top-k in the paper's experiments);
client and server both hold c_i (the server's view of m_i); the client sends C(delta_i) with
delta_i = m_i - c_i and both sides set c_i += C(delta_i). Then delta_i^{t+1} = (m_i^{t+1} -
m_i^t) + (delta_i^t - C(delta_i^t)): the one transmitted quantity carries the momentum
increment plus the unsent residual ("unifying the momentum increment and error feedback into
a single parameter"; EF21-M style). The step sizes are ParFreFL's and do not depend on the
compression ratio.

Reconstructed [recon], as ParFreFL (see parfrefl.py): the warm-up initialisation of m_i, the
normalized momentum local steps, the dense downlink of theta, the server's c_bar += (1/N)
sum_S C(delta_i) and the normalized step theta -= gamma c_bar/||c_bar||. With the identity
compressor it is ParFreFL up to float32 rounding of the increments (tested).
"""

from __future__ import annotations

import numpy as np

from papergym.agent import Agent, AgentConfig
from papergym.agents.fedlearn.common import cache_key, received, send
from papergym.agents.fedlearn.compressors import make_compressor
from papergym.agents.fedlearn.constants import Schedule
from papergym.agents.fedlearn.parfrefl import (
    ParFreFLClient,
    ParFreFLServer,
    is_overridden,
    resolved_constants,
)
from papergym.envs.fedlearn.protocol import FedAlgorithm


class ComParFreFLClient(ParFreFLClient):
    def __init__(self, oracle, setting, beta, eta, compressor) -> None:
        super().__init__(oracle, setting, beta, eta)
        self.compressor = compressor
        self.control = np.zeros(setting.dim)  # c_i, mirrored exactly by the server

    def __call__(self, observation):
        self.momentum = self.next_momentum(received(observation, 0), observation)
        delta = self.momentum - self.control  # delta_i = m_i - c_i
        decoded, slot = self.compressor(delta)
        self.control += decoded  # c_i += C(delta_i), what the server decodes
        return send(self.setting, [slot])


class ComParFreFL(Agent):
    """ComParFreFL (Yan, Zhong, Zhang, ICML 2026), reconstructed rule; no tuning."""

    id = "comparfrefl"
    family = "fedlearn"
    role = "method"
    paper = "yan26x"

    class Config(AgentConfig):
        # the experimental condition (not a tuned constant): the uplink compressor
        compressor: str = "topk"
        ratio: float = 0.1
        # parameter-free constants (ParFreFL's schedule; see parfrefl.py); another schedule,
        # a constant set, or step_scale != 1 marks the run `overridden`
        constants: Schedule = "parfrefl"
        beta: float | None = None
        eta: float | None = None
        gamma: float | None = None
        step_scale: float = 1.0

    def solve(self, view, budget, seed):
        cfg = self.config
        make_compressor(cfg.compressor, cfg.ratio)  # validate early
        beta, eta, gamma = resolved_constants(cfg, view.setting)

        def client(i, oracle, setting):
            b, e, _ = resolved_constants(cfg, setting)
            return ComParFreFLClient(oracle, setting, b, e,
                                     make_compressor(cfg.compressor, cfg.ratio))

        return FedAlgorithm(
            name=self.id,
            make_server=lambda: ParFreFLServer(lambda s: resolved_constants(cfg, s)),
            make_client=client,
            cache_key=cache_key(type(self), **cfg.model_dump()),
            constants_verified=False, overridden=is_overridden(cfg),
            info=(("beta", beta), ("eta", eta), ("gamma", gamma), ("ratio", cfg.ratio),
                  ("step_scale", cfg.step_scale)),
        )
