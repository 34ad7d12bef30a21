"""``papergym/MDMRemask-v0``: G-Star's remasking decision as an MDP, one star step per action."""

from __future__ import annotations

import inspect
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from papergym.actions import check_action
from papergym.envs.maskdiff.denoiser import ModelDenoiser
from papergym.envs.maskdiff.steps import grid, mdlm_step, n_remask, propose, remask
from papergym.envs.maskdiff.task import MaskedDiffusionTask
from papergym.problem import check_training_seed
from papergym.tinylm.sampling import top_k_mask

ENV_ID = "papergym/MDMRemask-v0"
SCORE_BOUND = 30.0


def decisions(T: int, t_on: float = 0.3) -> int:
    """Star steps an episode asks the agent for: the steps t -> s of the T-step grid with
    t <= t_on and s > 0 (the plain MDLM steps before t_on and the last step to s = 0 are the
    problem's)."""
    return sum(1 for t, s in grid(T) if t <= t_on + 1e-12 and s > 0)


class _Batch:
    """B sequences on the grid: the shared state of the single and the vector env."""

    def __init__(self, T: int, t_on: float, nucleus_p: float, language_index: int = 0,
                 env_id: str = ENV_ID, **task_kwargs: Any) -> None:
        if not isinstance(T, int) or T < 2 or 2.0 / T > t_on + 1e-12:
            raise ValueError(f"{env_id}: T={T!r} with t_on={t_on} has no decision step (a star step "
                             f"with s > 0 needs 2/T <= t_on)")
        if not 0.0 < nucleus_p <= 1.0:
            raise ValueError(f"{env_id}: nucleus_p must be in (0, 1], got {nucleus_p}")
        check_training_seed(language_index, env_id)
        task = MaskedDiffusionTask(**task_kwargs)
        self.language, model, _ = task.prepared(language_index)
        self.probs_fn = ModelDenoiser(model)
        self.T, self.t_on, self.nucleus = T, float(t_on), float(nucleus_p)
        self.L, self.V, self.mask = self.language.length, self.language.vocab_size, self.language.mask_id
        self.steps = grid(T)

    def spaces(self) -> tuple[spaces.Dict, spaces.Box]:
        obs = spaces.Dict({
            "x_t": spaces.MultiDiscrete([self.V + 1] * self.L),
            "t": spaces.Box(0.0, 1.0, (1,), np.float32),
            "proposal": spaces.MultiDiscrete([self.V] * self.L),
            "proposal_prob": spaces.Box(0.0, 1.0, (self.L,), np.float32),
            "k_remask": spaces.Discrete(self.L + 1),
        })
        return obs, spaces.Box(-SCORE_BOUND, SCORE_BOUND, (self.L,), np.float32)

    def reset(self, batch: int, seed: int) -> None:
        self.gen = torch.Generator().manual_seed(int(seed))
        x = torch.full((batch, self.L), self.mask, dtype=torch.long)
        self.i = 0
        while self.steps[self.i][0] > self.t_on + 1e-12:  # plain MDLM steps before t_on
            t, s = self.steps[self.i]
            x = mdlm_step(x, self.probs_fn(x), t, s, self.mask, self.gen, self.nucleus)
            self.i += 1
        self.x = x
        self._propose()

    def _propose(self) -> None:
        self.prop, self.prop_prob = propose(self.x, self.probs_fn(self.x), self.gen, self.nucleus)

    def k(self) -> int:
        return n_remask(self.steps[self.i][1], self.L)

    def obs(self, row: int) -> dict[str, Any]:
        return {"x_t": self.x[row].numpy().astype(np.int64),
                "t": np.array([self.steps[self.i][0]], np.float32),
                "proposal": self.prop[row].numpy().astype(np.int64),
                "proposal_prob": self.prop_prob[row].numpy().astype(np.float32).clip(0, 1),
                "k_remask": self.k()}

    def step(self, scores: torch.Tensor) -> np.ndarray | None:
        """Remask the K highest scores (ties: lower index); None, or x_0 after the last step."""
        self.x = remask(self.prop, top_k_mask(scores, self.k()), self.mask)
        self.i += 1
        self._propose()  # the proposal at s (at s = 0 it is x_0: every mask revealed)
        if self.steps[self.i][1] <= 0:
            return self.prop.numpy()
        return None


class MDMRemaskEnv(gym.Env):
    """
    ## Description
    One sequence of a frozen masked diffusion model (the smoke tier's denoiser of language
    ``language_index``, trained by the problem and cached) sampled on the fixed T-step grid with
    G-Star's schedule. ``reset`` runs the plain MDLM steps with t > t_on and returns the first
    decision; each ``step`` is one star step t -> s (s > 0): the proposal x_prop (x_t where
    revealed, else a nucleus-``nucleus_p`` draw of the denoiser) with the K = ceil((1 - eps) s L)
    highest-scored positions set back to MASK. The last step to s = 0 (x_0 = the next proposal)
    runs inside the last ``step``. Rewarding a single sequence favours mode seeking; samplers are
    ranked on ``MaskedDiffusionHMM-v0``, where diversity is guarded.

    ## Observation Space
    ``Dict``: ``x_t`` MultiDiscrete([V+1] * L) (V = MASK), ``t`` Box(0, 1, (1,)), ``proposal``
    MultiDiscrete([V] * L), ``proposal_prob`` Box(0, 1, (L,)) (the denoiser's probability of each
    proposed token; 1 where revealed), ``k_remask`` Discrete(L + 1) (K).

    ## Action Space
    Box(-30, 30, (L,), float32): error scores; exactly the K highest are remasked (ties to the
    lower index). Values outside the bounds are clipped; NaN, inf or a wrong shape raise
    ``InvalidAction``. Stochastic choice (Gumbel-top-K) is the agent's own.

    ## Rewards
    0 before the end; at the end (1/L) log p_HMM(x_0) <= 0 (exact, forward algorithm).
    ``info``: ``x0`` and ``nll`` at the end; ``clipped`` (entries clipped) every step.

    ## Starting State
    The all-MASK sequence after the plain MDLM steps with t > t_on, drawn with a generator
    seeded by ``reset(seed=)`` (else by ``np_random``): the first decision's x_t and proposal.

    ## Episode End
    Terminated after the final step (T - n_mdlm - 1 decisions); the env never truncates. That
    count (``episode_steps``) is the registered ``max_episode_steps``, so through
    ``gymnasium.make`` the ``TimeLimit`` also flags the last step as truncated.

    ## Arguments
    ``T`` (steps; needs 2/T <= t_on), ``t_on`` (0.3), ``nucleus_p`` (0.9), ``language_index``
    (the training seed whose language and denoiser are used) and the sizes of
    ``MaskedDiffusionHMM-v0`` (``states``, ``vocab``, ``length``, ``d_model``, ``denoiser_steps``,
    ...). ``gymnasium.make_vec(id, num_envs=B, vectorization_mode="vector_entry_point")``
    batches B sequences in one denoiser call.

    ## Tiers
    smoke: T = 8, HMM S=8, V=16, L=16, a 200-step denoiser. standard: T = 16 with the
    standard language. full: the full tier's sizes.

    ## Reference
    G-Star (arXiv 2510.08369), star-shaped sampling with a learned remasker; the official
    ``samplers/remasker.py::remasker_update`` step.

    ## Version History
    - v1 (``MDMRemaskV1Env``): default T = 32, 8 decisions an episode.
    - v0: initial release (its default T = 8 leaves one decision an episode).
    """

    metadata = {"render_modes": []}
    env_id = ENV_ID

    def __init__(self, T: int = 8, t_on: float = 0.3, nucleus_p: float = 0.9,
                 language_index: int = 0, states: int = 8, vocab: int = 16, length: int = 16,
                 d_model: int = 64, n_layer: int = 2, n_head: int = 2, denoiser_steps: int = 200,
                 denoiser_batch: int = 64, denoiser_lr: float = 3e-3, n_reference: int = 2000) -> None:
        self._b = _Batch(T, t_on, nucleus_p, language_index, env_id=self.env_id,
                         states=states, vocab=vocab, length=length, d_model=d_model, n_layer=n_layer,
                         n_head=n_head, denoiser_steps=denoiser_steps, denoiser_batch=denoiser_batch,
                         denoiser_lr=denoiser_lr, n_reference=n_reference)
        self.observation_space, self.action_space = self._b.spaces()
        self.episode_steps = decisions(self._b.T, self._b.t_on)  # registered max_episode_steps
        self._live = False

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        super().reset(seed=seed)
        self._b.reset(1, seed if seed is not None else int(self.np_random.integers(2**62)))
        self._live = True
        return self._b.obs(0), {}

    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict]:
        if not self._live:
            raise RuntimeError(f"{self.env_id}: call reset() before step() (the episode has ended)")
        arr = check_action(self.action_space, action, self.env_id)
        clipped = int(((arr < -SCORE_BOUND) | (arr > SCORE_BOUND)).sum())
        x0 = self._b.step(torch.from_numpy(arr.clip(-SCORE_BOUND, SCORE_BOUND))[None])
        info: dict[str, Any] = {"clipped": clipped}
        if x0 is None:
            return self._b.obs(0), 0.0, False, False, info
        self._live = False
        log_p = float(self._b.language.log_prob(x0)[0])
        info.update(x0=x0[0].copy(), nll=-log_p / self._b.L)
        return self._b.obs(0), log_p / self._b.L, True, False, info


class MDMRemaskVectorEnv(VectorEnv):
    """B sequences of ``MDMRemask-v0`` advanced together (one denoiser call per step). Every
    episode has the same length, so all end together; the step after the end resets them
    (next-step autoreset, its action ignored)."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP}
    env_id = ENV_ID

    def __init__(self, num_envs: int = 1, T: int = 8, t_on: float = 0.3, nucleus_p: float = 0.9,
                 language_index: int = 0, states: int = 8, vocab: int = 16, length: int = 16,
                 d_model: int = 64, n_layer: int = 2, n_head: int = 2, denoiser_steps: int = 200,
                 denoiser_batch: int = 64, denoiser_lr: float = 3e-3, n_reference: int = 2000,
                 render_mode: str | None = None) -> None:
        self.num_envs = int(num_envs)
        self._b = _Batch(T, t_on, nucleus_p, language_index, env_id=self.env_id,
                         states=states, vocab=vocab, length=length, d_model=d_model, n_layer=n_layer,
                         n_head=n_head, denoiser_steps=denoiser_steps, denoiser_batch=denoiser_batch,
                         denoiser_lr=denoiser_lr, n_reference=n_reference)
        self.single_observation_space, self.single_action_space = self._b.spaces()
        from gymnasium.vector.utils import batch_space

        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._ended = False
        self._rng = np.random.default_rng()

    def _obs(self) -> dict[str, np.ndarray]:
        rows = [self._b.obs(i) for i in range(self.num_envs)]
        return {k: np.stack([np.asarray(r[k]) for r in rows]) for k in rows[0]}

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._b.reset(self.num_envs, seed if seed is not None else int(self._rng.integers(2**62)))
        self._ended = False
        return self._obs(), {}

    def step(self, actions: Any) -> tuple[dict, np.ndarray, np.ndarray, np.ndarray, dict]:
        zeros = np.zeros(self.num_envs)
        false = np.zeros(self.num_envs, dtype=bool)
        if self._ended:
            obs, info = self.reset(seed=int(self._rng.integers(2**62)))
            return obs, zeros, false, false, info
        arr = check_action(self.action_space, actions, self.env_id)
        x0 = self._b.step(torch.from_numpy(arr.clip(-SCORE_BOUND, SCORE_BOUND)))
        if x0 is None:
            return self._obs(), zeros, false, false, {}
        self._ended = True
        log_p = self._b.language.log_prob(x0)
        return (self._obs(), log_p / self._b.L, ~false, false,
                {"x0": x0.copy(), "nll": -log_p / self._b.L})


V1_ID = "papergym/MDMRemask-v1"
V1_DEFAULT_T = 32  # 8 decisions at t_on = 0.3 (v0's T = 8 left one)


class MDMRemaskV1Env(MDMRemaskEnv):
    """
    ## Description
    ``MDMRemask-v0`` with a usable episode at its defaults: one sequence of the problem's frozen
    masked diffusion model sampled on the T-step grid with G-Star's schedule, one star step per
    action. At ``T = 32`` and ``t_on = 0.3`` an episode asks for 8 decisions (v0's default
    ``T = 8`` asked for one). Dynamics, spaces and rewards are v0's (``MDMRemaskEnv``).

    ## Observation Space
    ``Dict``: ``x_t`` MultiDiscrete([V+1] * L) (V = MASK), ``t`` Box(0, 1, (1,)), ``proposal``
    MultiDiscrete([V] * L), ``proposal_prob`` Box(0, 1, (L,)), ``k_remask`` Discrete(L + 1) (K).

    ## Action Space
    Box(-30, 30, (L,), float32): error scores; exactly the K highest are remasked (ties to the
    lower index). Values outside the bounds are clipped; NaN, inf or a wrong shape raise
    ``InvalidAction``.

    ## Rewards
    0 before the end; at the end (1/L) log p_HMM(x_0) <= 0. ``info``: ``x0`` and ``nll`` at the
    end; ``clipped`` every step.

    ## Starting State
    As v0: the all-MASK sequence after the plain MDLM steps with t > t_on, seeded by
    ``reset(seed=)``.

    ## Episode End
    Terminated after floor(t_on T) - 1 decisions (8 at the defaults). That count is the
    registered ``max_episode_steps`` (``env.spec.max_episode_steps``, following ``T`` and
    ``t_on``), so gymnasium's ``TimeLimit`` also flags the last step as truncated.

    ## Arguments
    ``T`` (32; needs 2/T <= t_on), ``t_on`` (0.3), ``nucleus_p`` (0.9), ``language_index`` and the
    sizes of ``MaskedDiffusionHMM-v0``, as v0. ``gymnasium.make_vec(id, num_envs=B,
    vectorization_mode="vector_entry_point")`` batches B sequences in one denoiser call.

    ## Tiers
    smoke: T = 16 (3 decisions) with the smoke language; standard: T = 32 (8 decisions) with
    the standard language; full: T = 64 (18 decisions) with the full tier's sizes.

    ## Reference
    G-Star (arXiv 2510.08369), star-shaped sampling with a learned remasker.

    ## Version History
    - v1: default ``T`` 32 (was 8: an episode of one decision); smoke tier T = 16 (was 8),
      standard T = 32 (was 16). Not comparable with v0 at the defaults or tiers.
    - v0: initial release.
    """

    env_id = V1_ID

    def __init__(self, T: int = V1_DEFAULT_T, **kwargs: Any) -> None:
        super().__init__(T=T, **kwargs)


class MDMRemaskV1VectorEnv(MDMRemaskVectorEnv):
    """B sequences of ``MDMRemask-v1`` advanced together (see :class:`MDMRemaskVectorEnv`)."""

    env_id = V1_ID

    def __init__(self, num_envs: int = 1, T: int = V1_DEFAULT_T, **kwargs: Any) -> None:
        super().__init__(num_envs=num_envs, T=T, **kwargs)


def _v1_signature(cls: type, parent: type) -> None:
    """The v1 constructor's signature is v0's with ``T`` defaulting to V1_DEFAULT_T, so that the
    registry (and a spec check) sees every argument v1 forwards through ``**kwargs``."""
    sig = inspect.signature(parent.__init__)
    params = [p.replace(default=V1_DEFAULT_T) if p.name == "T" else p
              for p in sig.parameters.values()]
    cls.__init__.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]


_v1_signature(MDMRemaskV1Env, MDMRemaskEnv)
_v1_signature(MDMRemaskV1VectorEnv, MDMRemaskVectorEnv)
