"""The verify-then-hold policy shared by the DragFFD2D agents; each agent supplies proposals.

Each step the policy either proposes a design for the problem's solver (``verify = 1``, while
the episode's budget lasts) or, once its proposals or the budget are spent, holds the best
verified design (z = 0, the base shape, counts as verified at C_d,0) with ``verify = 0`` until the
episode ends and the problem verifies it at the finer resolution. The policy learns the projected
design the env actually evaluated from ``obs["z"]`` and its C_d from ``obs["last_verified_cd"]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class VerifyThenHold:
    """``propose(obs, rng)`` returns the next design to verify or ``None``; ``observe(z, cd)`` is
    told each result. Subclasses implement both; ``start(obs, rng)`` runs at an episode's start."""

    def __init__(self, seed: int) -> None:
        self.seed, self.episode = int(seed), -1
        self.reset()

    def reset(self) -> None:
        self.episode += 1
        self.rng = np.random.default_rng([self.seed, self.episode])
        self.pending, self.best_z, self.best_cd, self.started = False, None, np.inf, False

    def start(self, obs: dict[str, Any]) -> None:  # noqa: B027 - optional hook
        pass

    def propose(self, obs: dict[str, Any]) -> np.ndarray | None:
        raise NotImplementedError

    def observe(self, z: np.ndarray, cd: float) -> None:  # noqa: B027 - optional hook
        pass

    def __call__(self, obs: dict[str, Any]) -> dict[str, Any]:
        if not self.started:
            self.started = True
            self.best_z, self.best_cd = np.zeros_like(np.asarray(obs["z"], np.float32)), float(obs["cd0"][0])
            self.start(obs)
        if self.pending:
            z, cd = np.asarray(obs["z"], np.float32).copy(), float(obs["last_verified_cd"][0])
            self.pending = False
            self.observe(z, cd)
            if cd < self.best_cd:
                self.best_z, self.best_cd = z, cd
        if int(obs["budget_left"]) > 0 and int(obs["steps_left"]) > 1:
            z = self.propose(obs)
            if z is not None:
                self.pending = True
                return {"z": np.asarray(z, np.float32), "verify": 1}
        return {"z": self.best_z, "verify": 0}
