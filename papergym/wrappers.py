"""Wrappers that put papergym's structured spaces into the shapes RL libraries take.

``FlattenDictAction`` turns a ``Dict`` action space (a continuous ``Box`` beside ``Discrete``,
``MultiDiscrete`` or ``MultiBinary`` parts, as in ``QAOA2Partition`` and ``DragFFD2D``) into
one space that Stable-Baselines3, CleanRL or RLlib policies emit:

- ``to="box"``: one ``Box(-1, 1, (n,), float32)``, one coordinate per scalar of the Dict. A
  ``Box`` part maps linearly onto its bounds; a discrete part of ``k`` choices takes the
  ``k`` equal bins of [-1, 1] (so a Gaussian policy learns it like any other coordinate);
  a ``MultiBinary`` part is ``> 0``. Every Box part needs finite bounds.
- ``to="multidiscrete"``: one ``MultiDiscrete``; discrete parts keep their choices, a binary
  part has 2, and each scalar of a ``Box`` part takes ``bins`` evenly spaced values between
  its bounds (ends included).

Both are plain :class:`gymnasium.ActionWrapper` s: the wrapped env still checks and meters
every action, so a policy trained through the wrapper is scored by the same rules. Observations
are left as they are (``gymnasium.wrappers.FlattenObservation`` flattens a Dict observation).

    env = FlattenObservation(FlattenDictAction(papergym.make("papergym/QAOA2Partition-v1")))
    model = stable_baselines3.PPO("MlpPolicy", env).learn(10_000)

See ``examples/sb3_dict_actions.py``.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Literal

import gymnasium as gym
import numpy as np
from gymnasium import spaces

Target = Literal["box", "multidiscrete"]


def _parts(space: spaces.Dict) -> list[tuple[str, spaces.Space]]:
    parts = list(space.spaces.items())
    for name, sub in parts:
        if not isinstance(sub, (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)):
            raise TypeError(f"FlattenDictAction: action {name!r} is a {type(sub).__name__}; "
                            "only Box, Discrete, MultiDiscrete and MultiBinary parts can be flattened")
    return parts


def _size(sub: spaces.Space) -> int:
    return 1 if isinstance(sub, spaces.Discrete) else int(np.prod(sub.shape))


class FlattenDictAction(gym.ActionWrapper):
    """A ``Dict`` action space as one ``Box`` (``to="box"``) or ``MultiDiscrete``
    (``to="multidiscrete"``, ``bins`` values per continuous scalar); see the module docstring."""

    def __init__(self, env: gym.Env, to: Target = "box", bins: int = 11) -> None:
        super().__init__(env)
        if not isinstance(env.action_space, spaces.Dict):
            raise TypeError(f"FlattenDictAction needs a Dict action space, got {env.action_space}")
        if to not in ("box", "multidiscrete"):
            raise ValueError(f"FlattenDictAction: to must be 'box' or 'multidiscrete', got {to!r}")
        if to == "multidiscrete" and bins < 2:
            raise ValueError(f"FlattenDictAction: bins must be >= 2, got {bins}")
        self.to, self.bins = to, int(bins)
        self._parts = _parts(env.action_space)
        for name, sub in self._parts:
            if isinstance(sub, spaces.Box) and not (np.all(np.isfinite(sub.low))
                                                    and np.all(np.isfinite(sub.high))):
                raise ValueError(f"FlattenDictAction: action {name!r} has unbounded entries; "
                                 "wrap it with gymnasium.wrappers.RescaleAction first")
        sizes = [_size(sub) for _, sub in self._parts]
        self._slices = np.cumsum([0, *sizes])
        if to == "box":
            self.action_space = spaces.Box(-1.0, 1.0, (int(self._slices[-1]),), np.float32)
        else:
            nvec = np.concatenate([self._choices(sub) for _, sub in self._parts])
            self.action_space = spaces.MultiDiscrete(nvec.astype(np.int64))

    def _choices(self, sub: spaces.Space) -> np.ndarray:
        """Choices per scalar of a part in the MultiDiscrete encoding."""
        if isinstance(sub, spaces.Discrete):
            return np.array([sub.n])
        if isinstance(sub, spaces.MultiDiscrete):
            return np.asarray(sub.nvec).ravel()
        if isinstance(sub, spaces.MultiBinary):
            return np.full(_size(sub), 2)
        return np.full(_size(sub), self.bins)

    def action(self, action: Any) -> OrderedDict[str, Any]:
        flat = np.asarray(action).ravel()
        if flat.shape != (self._slices[-1],):
            raise ValueError(f"FlattenDictAction: expected {self._slices[-1]} numbers, got "
                             f"shape {np.shape(action)}")
        out: OrderedDict[str, Any] = OrderedDict()
        for (name, sub), lo, hi in zip(self._parts, self._slices[:-1], self._slices[1:]):
            chunk = flat[lo:hi]
            out[name] = (self._from_box(sub, chunk.astype(np.float64)) if self.to == "box"
                         else self._from_indices(sub, chunk.astype(np.int64)))
        return out

    @staticmethod
    def _from_box(sub: spaces.Space, u: np.ndarray) -> Any:
        u = np.clip(u, -1.0, 1.0)
        unit = (u + 1.0) / 2.0  # in [0, 1]
        if isinstance(sub, spaces.Box):
            value = sub.low.ravel() + unit * (sub.high.ravel() - sub.low.ravel())
            return value.reshape(sub.shape).astype(sub.dtype)
        if isinstance(sub, spaces.MultiBinary):
            return (u > 0).astype(sub.dtype).reshape(sub.shape)
        nvec = np.array([sub.n]) if isinstance(sub, spaces.Discrete) else np.asarray(sub.nvec).ravel()
        index = np.minimum((unit * nvec).astype(np.int64), nvec - 1)
        if isinstance(sub, spaces.Discrete):
            return np.int64(sub.start + index[0])
        return (index + np.asarray(sub.start).ravel()).reshape(sub.shape).astype(sub.dtype)

    def _from_indices(self, sub: spaces.Space, k: np.ndarray) -> Any:
        if isinstance(sub, spaces.Box):
            low, high = sub.low.ravel(), sub.high.ravel()
            value = low + np.clip(k, 0, self.bins - 1) / (self.bins - 1) * (high - low)
            return value.reshape(sub.shape).astype(sub.dtype)
        if isinstance(sub, spaces.MultiBinary):
            return k.astype(sub.dtype).reshape(sub.shape)
        if isinstance(sub, spaces.Discrete):
            return np.int64(sub.start + k[0])
        return (k + np.asarray(sub.start).ravel()).reshape(sub.shape).astype(sub.dtype)


class SummarizePopulation(gym.ObservationWrapper):
    """A Dict observation that carries a whole population (an ``(n, d)`` matrix ``rows_key``,
    optionally its binary ``labels_key``) as one short ``Box`` vector: the other entries
    flattened, then the population's column means and standard deviations, and with labels the
    positive rate and the column means of each class. ``StrategicCredit-v0`` at the standard
    tier observes 12,850 individuals (a 154k-dimensional observation: PPO's rollout buffer
    alone takes gigabytes); summarized it is 56 numbers (theta, 4 x 11 feature statistics and
    the positive rate), e.g.

        env = SummarizePopulation(papergym.make("papergym/StrategicCredit-v0", tier="standard"))

    The summary is what a deployer of a linear model mostly needs (the response shifts every
    individual by the same vector, which moves the means and leaves the spreads), but it is a
    lossy view: the env and its scoring are unchanged."""

    def __init__(self, env: gym.Env, rows_key: str = "features", labels_key: str | None = "labels",
                 dtype: type = np.float32) -> None:
        super().__init__(env)
        space = env.observation_space
        if not isinstance(space, spaces.Dict) or rows_key not in space.spaces:
            raise TypeError(f"SummarizePopulation needs a Dict observation with {rows_key!r}, "
                            f"got {space}")
        rows = space.spaces[rows_key]
        if not isinstance(rows, spaces.Box) or len(rows.shape) != 2:
            raise TypeError(f"SummarizePopulation: {rows_key!r} must be an (n, d) Box, got {rows}")
        self.rows_key = rows_key
        self.labels_key = labels_key if labels_key in space.spaces else None
        self._rest = [k for k in space.spaces if k not in (rows_key, self.labels_key)]
        for key in self._rest:
            if not isinstance(space.spaces[key], spaces.Box):
                raise TypeError(f"SummarizePopulation: entry {key!r} is not a Box")
        d = rows.shape[1]
        size = sum(int(np.prod(space.spaces[k].shape)) for k in self._rest) + 2 * d
        if self.labels_key is not None:
            size += 1 + 2 * d
        self.dtype = dtype
        self.observation_space = spaces.Box(-np.inf, np.inf, (size,), dtype)

    def observation(self, observation: dict[str, Any]) -> np.ndarray:
        rows = np.asarray(observation[self.rows_key], dtype=np.float64)
        parts = [np.asarray(observation[k], dtype=np.float64).ravel() for k in self._rest]
        parts += [rows.mean(axis=0), rows.std(axis=0)]
        if self.labels_key is not None:
            positive = np.asarray(observation[self.labels_key]).astype(bool)
            parts.append(np.array([positive.mean()]))
            for group in (positive, ~positive):
                parts.append(rows[group].mean(axis=0) if group.any() else np.zeros(rows.shape[1]))
        return np.concatenate(parts).astype(self.dtype)
