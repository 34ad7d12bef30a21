"""Low-rank completion only: LoPhyDA's global prior x_LR without the diffusion stage."""

from __future__ import annotations

from typing import Any

import numpy as np

from papergym.agents.assimilation._common import CyclingAgent, CyclingPolicy, WindowHistory, soft_impute_cv

LAMBDAS = (0.5, 2.0, 5.0, 10.0, 20.0)


def low_rank_prior(obs: dict[str, Any], history: WindowHistory, rng: np.random.Generator,
                   lams: tuple[float, ...] = LAMBDAS) -> np.ndarray:
    """x_LR (W x n): soft-impute of the observation window Y (rows = the last W cycles, mask =
    the observed entries), missing entries initialized by the agent's past analyses and, for
    the current cycle (and rows before the first cycle), by the background mean; lam chosen on
    20% held-out observed entries [recon: the L96 matrix case of the spec's HaLRTC]."""
    xb = np.asarray(obs["background"]).mean(axis=0)
    W = np.asarray(obs["history_y"]).shape[0]
    init = np.repeat(xb[None], W, axis=0)
    if W > 1:
        init[:-1] = np.where(history.valid[:, None], history.states, xb[None])
    mask = np.asarray(obs["history_mask"]).astype(bool)
    Z, _ = soft_impute_cv(np.asarray(obs["history_y"], dtype=float), mask, init, lams, rng)
    return Z


class TCOnlyPolicy(CyclingPolicy):
    def __init__(self, ensemble_size: int, window: int, n: int, seed: int) -> None:
        self.window, self.n, self.seed = window, n, seed
        super().__init__(ensemble_size)

    def reset(self) -> None:
        self.history = WindowHistory(self.window, self.n)
        self.rng = np.random.default_rng([self.seed, 23])

    def analyse(self, obs: dict[str, Any]) -> np.ndarray:
        x = low_rank_prior(obs, self.history, self.rng)[-1]
        self.history.push(x)
        return x


class TCOnly(CyclingAgent):
    """The last slice of the soft-impute completion of the observation window (no diffusion,
    no physics): what the low-rank global prior alone recovers."""

    id = "tc_only"
    role = "baseline"

    def make_policy(self, view: Any, params: dict[str, Any], seed: int) -> CyclingPolicy:
        return TCOnlyPolicy(view.ensemble_size, view.window, view.n, seed)
