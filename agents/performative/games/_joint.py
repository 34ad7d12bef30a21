"""Shared piece of the game learners: independent per-player rules run as one joint policy."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from papergym.envs.performative.core import project_simplex


class JointPolicy:
    """dict of observations -> dict of actions; each player runs ``update`` on its own data.

    A player's observation is [own strategy (k), others' strategies, own payoff gradient (k)].
    With ``average=True`` the last round (``horizon``) plays each player's time-average.
    """

    def __init__(self, kind: str, block_sizes: dict[str, int], horizon: int,
                 average: bool = False) -> None:
        self.kind, self.block_sizes, self.horizon, self.average = kind, block_sizes, horizon, average
        self.reset()

    def reset(self) -> None:
        self.state: dict[str, dict[str, Any]] = {a: {} for a in self.block_sizes}
        self.sums = {a: 0.0 for a in self.block_sizes}
        self.round = 0

    def project(self, v: np.ndarray) -> np.ndarray:
        return project_simplex(v) if self.kind == "bimatrix" else np.clip(v, 0.0, 1.0)

    def __call__(self, observations: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        actions = {}
        self.round += 1
        for agent, obs in observations.items():
            k = self.block_sizes[agent]
            own, grad = np.asarray(obs[:k], dtype=np.float64), np.asarray(obs[-k:], dtype=np.float64)
            action = self.update(self.state[agent], own, grad)
            self.sums[agent] = self.sums[agent] + action
            if self.average and self.round >= self.horizon:
                action = self.sums[agent] / self.round
            actions[agent] = action
        return actions

    def update(self, state: dict[str, Any], own: np.ndarray, grad: np.ndarray) -> np.ndarray:
        raise NotImplementedError


def tune_step(view: Any, make: Callable[[float], JointPolicy], grid: Sequence[float]) -> float:
    """The grid value with the smallest mean log10 final exploitability on training games."""
    scores = {}
    for value in grid:
        logs = [np.log10(max(view.play(make(value), s), 1e-16)) for s in view.train_instance_seeds]
        scores[value] = float(np.mean(logs))
    return min(grid, key=lambda v: scores[v])
