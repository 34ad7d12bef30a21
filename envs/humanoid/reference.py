"""The normalization references of the score S: the zero-action policy and a per-body specialist.

S_i = (R_agent,i - R_zero,i) / (R_spec,i - R_zero,i) needs, for every held-out body, the return
of a = 0 (computed by the problem on the trial's own evaluation episodes) and the return of a
specialist trained on that body alone (the paper's per-robot HugWBC specialists). The problem
trains that reference itself, with stable-baselines3 PPO and the RL-Zoo Walker2d
hyperparameters given in the benchmark spec, on a fixed seed; the resulting mean return is a
:mod:`papergym.cache` entry keyed by this package's code and every setting, built once in the
runner's prepare phase, so that every trial of a benchmark is normalized by the same numbers.
The ``specialist_ppo`` agent runs the same routine as a leaderboard entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

# RL Baselines3 Zoo, hyperparams/ppo.yml, Walker2d-v3 (tuned there with Optuna).
ZOO_WALKER2D_PPO: dict[str, Any] = {
    "n_steps": 512, "batch_size": 32, "gamma": 0.99, "learning_rate": 5.05041e-05,
    "ent_coef": 0.000585045, "clip_range": 0.1, "n_epochs": 20, "gae_lambda": 0.95,
    "max_grad_norm": 1.0, "vf_coef": 0.871923, "normalize": True,
}
# v1: Stable-Baselines3's (= CleanRL's ppo_continuous_action) MuJoCo defaults, with the
# exploration noise of joint-target actions lowered to std 0.2 (about 0.25 rad on a hip): at
# SB3's std 1.0 every rollout is a random flail and nothing is learned in 10^5 steps.
V1_SPECIALIST_PPO: dict[str, Any] = {
    "n_steps": 2048, "batch_size": 64, "gamma": 0.99, "learning_rate": 3e-4, "ent_coef": 0.0,
    "clip_range": 0.2, "n_epochs": 10, "gae_lambda": 0.95, "max_grad_norm": 0.5,
    "vf_coef": 0.5, "normalize": True, "log_std_init": -1.6,
}
REFERENCE_SEED = 0
REFERENCE_EVAL_SEED = 999  # the reference is measured on eval_seeds(999, n), never a trial's
REFERENCE_VALID_SEED = 998  # the plateau rule selects checkpoints on these episodes


class SpecialistPolicy:
    """An SB3 policy with frozen observation normalization, as ``obs -> action``."""

    def __init__(self, model: Any, obs_mean: np.ndarray | None, obs_var: np.ndarray | None,
                 clip: float = 10.0) -> None:
        self.model, self.obs_mean, self.obs_var, self.clip = model, obs_mean, obs_var, clip

    def __call__(self, observation: np.ndarray) -> np.ndarray:
        obs = np.asarray(observation, dtype=np.float32)
        if self.obs_mean is not None:
            obs = np.clip((obs - self.obs_mean) / np.sqrt(self.obs_var + 1e-8),
                          -self.clip, self.clip).astype(np.float32)
        action, _ = self.model.predict(obs, deterministic=True)
        return np.asarray(action, dtype=np.float32)


def _ppo(make_env: Callable[[], Any], steps: int, seed: int, hyper: dict[str, Any] | None,
         defaults: dict[str, Any]) -> tuple[Any, Any, bool]:
    """An SB3 PPO (MlpPolicy) on one body and its (possibly normalizing) vector env."""
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    hp = {**defaults, **(hyper or {})}
    normalize = bool(hp.pop("normalize", True))
    policy_kwargs = {"log_std_init": float(hp.pop("log_std_init"))} if "log_std_init" in hp else None
    hp["n_steps"] = int(min(hp["n_steps"], max(steps, 64)))
    hp["batch_size"] = int(min(hp["batch_size"], hp["n_steps"]))
    torch.manual_seed(seed)
    venv = DummyVecEnv([make_env])
    venv.seed(seed)
    if normalize:
        venv = VecNormalize(venv, norm_obs=True, norm_reward=True, gamma=hp["gamma"])
    model = PPO("MlpPolicy", venv, seed=seed, verbose=0, device="cpu",
                policy_kwargs=policy_kwargs, **hp)
    return model, venv, normalize


def _frozen(model: Any, venv: Any, normalize: bool) -> SpecialistPolicy:
    """The current deterministic policy with its observation statistics, detached from training."""
    mean = var = None
    if normalize:
        mean, var = venv.obs_rms.mean.astype(np.float32), venv.obs_rms.var.astype(np.float32)
    policy = model.policy_class(model.observation_space, model.action_space, model.lr_schedule,
                                **model.policy_kwargs)
    policy.load_state_dict(model.policy.state_dict())
    return SpecialistPolicy(policy.eval(), mean, var)


def train_specialist(make_env: Callable[[], Any], steps: int, seed: int,
                     hyper: dict[str, Any] | None = None,
                     defaults: dict[str, Any] = ZOO_WALKER2D_PPO) -> SpecialistPolicy:
    """SB3 PPO (MlpPolicy) on one body; ``steps`` environment steps in total."""
    model, venv, normalize = _ppo(make_env, steps, seed, hyper, defaults)
    # Never cross the problem's budget: PPO collects whole rollouts of n_steps.
    total = (steps // model.n_steps) * model.n_steps
    if total > 0:
        model.learn(total_timesteps=total)
    return _frozen(model, venv, normalize)


@dataclass
class PlateauRun:
    """What :func:`train_to_plateau` did: the selected policy, its steps and the curve."""

    policy: SpecialistPolicy
    steps: int  # environment steps the plateau rule trained (where it stopped, or the cap)
    selected_at: int  # steps of the selected checkpoint
    curve: list[tuple[int, float]] = field(default_factory=list)  # (steps, validation return)
    matched: SpecialistPolicy | None = None  # the policy after exactly ``matched_steps`` steps
    matched_steps: int = 0


def train_to_plateau(make_env: Callable[[], Any], max_steps: int, seed: int,
                     validate: Callable[[SpecialistPolicy], float], chunk: int = 50_000,
                     patience: int = 2, min_gain: float = 0.02,
                     hyper: dict[str, Any] | None = None, matched_steps: int = 0,
                     min_steps: int = 0) -> PlateauRun:
    """Train SB3 PPO in chunks until the validation return stops improving.

    After every ``chunk`` steps the deterministic policy is scored by ``validate`` (episodes the
    reported reference is never measured on); the best checkpoint is kept. Training stops when
    ``patience`` chunks in a row failed to beat the best by ``min_gain`` x |best| (a plateau) once
    at least ``min_steps`` are trained, or at ``max_steps``; the returned policy is the best
    checkpoint. (``min_steps``: PPO's validation return has flat stretches and dips before it
    climbs; with small chunks and no floor the rule stopped at 49,152 steps on w2v_h0 with a
    checkpoint from 16,384 steps barely above a = 0, while the same run reached 415 at 98,304.)

    ``matched_steps`` > 0 (a multiple of the chunk, at most ``max_steps``) also keeps the policy
    as it is after exactly that many steps, with no checkpoint selection (a generalist's budget:
    the same run stopped where the generalist's training stops). If the plateau rule stops
    earlier, the run trains on to ``matched_steps`` without validating: the plateau policy and
    ``steps`` are the rule's, whatever comes after.
    """
    model, venv, normalize = _ppo(make_env, chunk, seed, hyper, V1_SPECIALIST_PPO)
    chunk = max(chunk // model.n_steps, 1) * model.n_steps
    if matched_steps and (matched_steps % chunk or matched_steps > max_steps):
        raise ValueError(
            f"matched_steps={matched_steps} must be a multiple of the specialist chunk "
            f"({chunk} after rounding to whole PPO rollouts of {model.n_steps}) and at most "
            f"specialist_steps={max_steps}: set the problem's train_steps to such a multiple")
    best: SpecialistPolicy | None = None
    matched: SpecialistPolicy | None = None
    best_value, best_at, stale, trained, curve = -np.inf, 0, 0, 0, []
    stopped_at: int | None = None
    while trained + chunk <= max_steps:
        if stopped_at is not None and trained >= matched_steps:
            break
        model.learn(total_timesteps=chunk, reset_num_timesteps=False)
        trained += chunk
        policy = _frozen(model, venv, normalize)
        if trained == matched_steps:
            matched = policy
        if stopped_at is not None:
            continue  # past the plateau: training on for the matched policy only
        value = float(validate(policy))
        curve.append((trained, value))
        gained = best is None or value > best_value + min_gain * abs(best_value)
        if best is None or value > best_value:
            best, best_value, best_at = policy, value, trained
        stale = 0 if gained else stale + 1
        if stale >= patience and trained >= min_steps:
            stopped_at = trained
    if best is None:  # max_steps below one chunk: nothing trained, the initial policy
        best = _frozen(model, venv, normalize)
    steps = trained if stopped_at is None else stopped_at
    return PlateauRun(best, steps, best_at, curve, matched, matched_steps if matched else 0)
