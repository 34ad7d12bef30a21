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
from typing import Any

import numpy as np

# RL Baselines3 Zoo, hyperparams/ppo.yml, Walker2d-v3 (tuned there with Optuna).
ZOO_WALKER2D_PPO: dict[str, Any] = {
    "n_steps": 512, "batch_size": 32, "gamma": 0.99, "learning_rate": 5.05041e-05,
    "ent_coef": 0.000585045, "clip_range": 0.1, "n_epochs": 20, "gae_lambda": 0.95,
    "max_grad_norm": 1.0, "vf_coef": 0.871923, "normalize": True,
}
REFERENCE_SEED = 0
REFERENCE_EVAL_SEED = 999  # the reference is measured on eval_seeds(999, n), never a trial's


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


def train_specialist(make_env: Callable[[], Any], steps: int, seed: int,
                     hyper: dict[str, Any] | None = None) -> SpecialistPolicy:
    """SB3 PPO (MlpPolicy) on one body; ``steps`` environment steps in total."""
    import torch
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    hp = {**ZOO_WALKER2D_PPO, **(hyper or {})}
    normalize = bool(hp.pop("normalize", True))
    hp["n_steps"] = int(min(hp["n_steps"], max(steps, 64)))
    hp["batch_size"] = int(min(hp["batch_size"], hp["n_steps"]))
    torch.manual_seed(seed)
    venv = DummyVecEnv([make_env])
    venv.seed(seed)
    if normalize:
        venv = VecNormalize(venv, norm_obs=True, norm_reward=True, gamma=hp["gamma"])
    model = PPO("MlpPolicy", venv, seed=seed, verbose=0, device="cpu", **hp)
    # Never cross the problem's budget: PPO collects whole rollouts of n_steps.
    total = (steps // hp["n_steps"]) * hp["n_steps"]
    if total > 0:
        model.learn(total_timesteps=total)
    mean = var = None
    if normalize:
        mean, var = venv.obs_rms.mean.astype(np.float32), venv.obs_rms.var.astype(np.float32)
    return SpecialistPolicy(model, mean, var)
