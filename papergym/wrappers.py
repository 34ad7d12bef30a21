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
