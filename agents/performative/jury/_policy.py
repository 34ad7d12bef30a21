"""Shared piece of the jury agents: a policy that rebuilds the jury's model from observations."""

from __future__ import annotations

from typing import Any

import numpy as np

from papergym.envs.performative.jury import FLIPS_PER_POINT, JuryModel


class JuryPolicy:
    """Stateful policy: ``plan`` yields flips (ints); STOP when it is exhausted or out of budget."""

    def __init__(self, seed: int = 0) -> None:
        self.rng = np.random.default_rng(seed)
        self.reset()

    def reset(self, info: Any = None) -> None:
        self.model: JuryModel | None = None
        self.f: np.ndarray | None = None
        self.plan_iter = None
        self.used = 0

    def __call__(self, observation: dict[str, np.ndarray]) -> int:
        n = observation["f"].size
        if self.model is None:
            self.model = JuryModel(observation["weight"], observation["h"], observation["close"])
            self.budget = FLIPS_PER_POINT * n
        self.f = np.asarray(observation["f"]).astype(bool).copy()
        if self.plan_iter is None:
            self.plan_iter = self.plan()
        if self.used >= self.budget:
            return n
        try:
            i = next(self.plan_iter)
        except StopIteration:
            return n
        self.used += 1
        return int(i)

    def flip(self, i: int) -> None:
        """Record a flip the plan is about to emit (the env applies it)."""
        self.f[i] = not self.f[i]

    def remaining(self) -> int:
        return self.budget - self.used

    def plan(self):
        raise NotImplementedError

    def descend(self):
        """Best-improvement descent: flip the largest positive gain until none is left."""
        while self.remaining() > 0:
            gains = self.model.gains(self.f)
            i = int(np.argmax(gains))
            if gains[i] <= 1e-9:
                return
            self.flip(i)
            yield i
