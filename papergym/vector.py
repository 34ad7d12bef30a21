"""Vector environments over a problem's metered envs (``EnvView.make_vector_env``).

:func:`sequential` is the default ``vectorize`` of a view: gymnasium's ``SyncVectorEnv`` in
same-step autoreset mode. :class:`SameStepVectorEnv` follows the same conventions over envs
that are built already (tested equal to it); a family with faster stepping (the humanoid family's
threaded physics, ``envs/humanoid/vector.py``) subclasses :class:`SameStepVectorEnv` and
overrides :meth:`SameStepVectorEnv.step` only, so its results keep these conventions.

Same-step autoreset (gymnasium's ``AutoresetMode.SAME_STEP``): a sub-env whose step ends its
episode is reset at once, with ``seed=None`` (its own random stream goes on); the step returns
the reset observation in its row, the episode's last observation in ``info["final_obs"]`` (an
object array, ``None`` where no episode ended) and the last step's info in
``info["final_info"]``. Every info key is stacked over sub-envs with a ``_key`` mask of the
sub-envs that gave it (``VectorEnv._add_info``); a sub-env that was reset contributes its
reset info to the top-level keys.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from copy import deepcopy
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import VectorEnv
from gymnasium.vector.utils import batch_space, concatenate, create_empty_array, iterate

SAME_STEP = gym.vector.AutoresetMode.SAME_STEP

StepResult = tuple[Any, float, bool, bool, dict[str, Any]]


def sequential(envs: Sequence[gym.Env]) -> VectorEnv:
    """The generic vector env of ``envs``, stepped one by one with same-step autoreset."""
    return gym.vector.SyncVectorEnv([_const(env) for env in envs], autoreset_mode=SAME_STEP)


def _const(env: gym.Env) -> Callable[[], gym.Env]:
    return lambda: env


class SameStepVectorEnv(VectorEnv):
    """``envs`` (built already) as one vector env, stepped one by one, same-step autoreset;
    observations concatenated into a fresh array per call (``SyncVectorEnv(copy=True)``)."""

    def __init__(self, envs: Sequence[gym.Env]) -> None:
        self.envs = list(envs)
        if not self.envs:
            raise ValueError("a vector env needs at least one env")
        first = self.envs[0]
        self.num_envs = len(self.envs)
        self.metadata = {**first.metadata, "autoreset_mode": SAME_STEP}
        self.render_mode = first.render_mode
        self.single_observation_space = first.observation_space
        self.single_action_space = first.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        for env in self.envs[1:]:
            if env.observation_space != self.single_observation_space \
                    or env.action_space != self.single_action_space:
                raise RuntimeError("the sub-envs of a vector env must share their spaces")
        self._observations = create_empty_array(self.single_observation_space, n=self.num_envs,
                                                fn=np.zeros)

    def reset(self, *, seed: int | Sequence[int | None] | None = None,
              options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        """``seed``: None, an int (sub-env i gets ``seed + i``) or one seed per sub-env."""
        seeds = self._seeds(seed)
        infos: dict[str, Any] = {}
        obs = []
        for i, (env, s) in enumerate(zip(self.envs, seeds, strict=True)):
            ob, info = env.reset(seed=s, options=options)
            obs.append(ob)
            infos = self._add_info(infos, info, i)
        return self._concatenate(obs), infos

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        results = [env.step(a) for env, a in zip(self.envs, self._actions(actions), strict=True)]
        return self._collect(results)

    # ----------------------------------------------------------------- pieces for subclasses
    def _seeds(self, seed: int | Sequence[int | None] | None) -> list[int | None]:
        if seed is None:
            return [None] * self.num_envs
        if isinstance(seed, (int, np.integer)):
            return [int(seed) + i for i in range(self.num_envs)]
        seeds = list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(f"reset: {len(seeds)} seeds for {self.num_envs} envs")
        return seeds

    def _actions(self, actions: Any) -> list[Any]:
        actions = list(iterate(self.action_space, actions))
        if len(actions) != self.num_envs:
            raise ValueError(f"step: {len(actions)} actions for {self.num_envs} envs")
        return actions

    def _collect(self, results: Sequence[StepResult]) -> tuple[Any, np.ndarray, np.ndarray,
                                                                 np.ndarray, dict[str, Any]]:
        """The vector step of the sub-envs' step results (in order): same-step autoreset of
        the finished ones, infos stacked as ``SyncVectorEnv`` stacks them."""
        n = self.num_envs
        rewards = np.zeros(n, np.float64)
        terminated = np.zeros(n, np.bool_)
        truncated = np.zeros(n, np.bool_)
        infos: dict[str, Any] = {}
        obs = []
        for i, (env, (ob, reward, term, trunc, info)) in enumerate(
                zip(self.envs, results, strict=True)):
            rewards[i], terminated[i], truncated[i] = reward, term, trunc
            if term or trunc:
                infos = self._add_info(infos, {"final_obs": ob, "final_info": info}, i)
                ob, info = env.reset()
            obs.append(ob)
            infos = self._add_info(infos, info, i)
        return self._concatenate(obs), rewards, terminated, truncated, infos

    def _concatenate(self, obs: list[Any]) -> Any:
        self._observations = concatenate(self.single_observation_space, obs, self._observations)
        return deepcopy(self._observations)

    def close_extras(self, **kwargs: Any) -> None:
        for env in self.envs:
            env.close()
