"""A vector env of humanoid-family envs whose physics advance together on a thread pool.

One vector step: every sub-env is charged (:meth:`papergym.problem.MeteredEnv.charge`) and
writes its action (``_act``: action check, joint targets, a due push), then the physics of all
sub-envs run (``mj_step`` of ``FRAME_SKIP`` substeps, which releases the GIL) in ``threads``
contiguous chunks, one chunk inline and the others on a ``ThreadPoolExecutor``, then every
sub-env finishes its step (``_advance``: reward, history, termination). Each sub-env owns its
``MjData``; bodies may share an ``MjModel``, which ``mj_step`` only reads. The results are
those of stepping the sub-envs one by one (bit for bit: a sub-env's arithmetic does not depend
on the others or on the thread it runs in), with the same-step autoreset and info stacking of
:class:`papergym.vector.SameStepVectorEnv` (gymnasium's ``AutoresetMode.SAME_STEP``).

``threads``: :data:`DEFAULT_THREADS` (2), from benchmarks/perf/humanoid_vector_speed.py (8
envs of the default training pools): the physics is 70% (walker-v2) and 58% (humanoid-v1) of
an env step, the only part that runs on the pool, so with a free core threads=2 takes up to
~1.5x / ~1.4x the steps of threads=1; with the other core busy (another process running
here) threads=2 measured within noise of threads=1, never significantly slower.
``threads=1`` steps inline, with no pool.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import gymnasium as gym
import mujoco
import numpy as np

from papergym.problem import MeteredEnv
from papergym.vector import SameStepVectorEnv

from .env import FRAME_SKIP, XEmbodiedEnv

DEFAULT_THREADS = 2


class XEmbodiedVectorEnv(SameStepVectorEnv):
    """``envs``: metered envs (:class:`papergym.problem.MeteredEnv`) of XEmbodied envs, or the
    raw envs themselves (unmetered: for the problem's own use and tests)."""

    def __init__(self, envs: Sequence[gym.Env], threads: int = DEFAULT_THREADS) -> None:
        super().__init__(envs)
        if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) \
                or threads < 1:
            raise ValueError(f"threads must be a positive integer, got {threads!r}")
        self._raw: list[XEmbodiedEnv] = [_bare(env) for env in self.envs]
        self.threads = min(int(threads), self.num_envs)
        self._chunks = [c.tolist() for c in np.array_split(np.arange(self.num_envs),
                                                              self.threads)]
        self._pool = (ThreadPoolExecutor(self.threads - 1, thread_name_prefix="xemb-physics")
                      if self.threads > 1 else None)

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        actions = self._actions(actions)
        applied = []
        for env, raw, a in zip(self.envs, self._raw, actions, strict=True):
            charge = getattr(env, "charge", None)  # a metered sub-env pays for its step
            if charge is not None:
                charge()
            applied.append(raw._act(a))
        if self._pool is None:
            self._physics(self._chunks[0])
        else:  # a closed pool refuses new work
            pending = [self._pool.submit(self._physics, chunk) for chunk in self._chunks[1:]]
            self._physics(self._chunks[0])
            for future in pending:
                future.result()
        return self._collect([raw._advance(a) for raw, a in zip(self._raw, applied,
                                                                strict=True)])

    def _physics(self, chunk: list[int]) -> None:
        for k in chunk:
            raw = self._raw[k]
            mujoco.mj_step(raw.body.model, raw.data, nstep=FRAME_SKIP)

    def close_extras(self, **kwargs: Any) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        super().close_extras(**kwargs)


def _bare(env: gym.Env) -> XEmbodiedEnv:
    """The XEmbodied env under ``env`` (itself, or the one a :class:`MeteredEnv` meters): any
    other wrapper would be bypassed by stepping the env's halves directly, so it is refused."""
    inner = env.env if isinstance(env, MeteredEnv) else env
    if not isinstance(inner, XEmbodiedEnv):
        raise TypeError(f"XEmbodiedVectorEnv steps bare or metered XEmbodied envs, not "
                        f"{type(env).__name__} (its other wrappers would be bypassed)")
    return inner
