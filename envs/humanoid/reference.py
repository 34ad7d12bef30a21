"""The normalization references of the score S: the zero-action policy and a per-body specialist.

S_i = (R_agent,i - R_zero,i) / (R_spec,i - R_zero,i) needs, for every held-out body, the return
of a = 0 (computed by the problem on the trial's own evaluation episodes) and the return of a
specialist trained on that body alone (the paper's per-robot HugWBC specialists). The problem
trains that reference itself, with stable-baselines3 PPO and the RL-Zoo Walker2d
hyperparameters given in the benchmark spec, on a fixed seed, and caches the resulting mean
return on disk (``$PAPERGYM_CACHE`` or ``~/.cache/papergym``), keyed by the problem's code hash
and every setting, so that every trial of a benchmark is normalized by the same numbers.
The ``specialist_ppo`` agent runs the same routine as a leaderboard entry.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
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


def cache_dir() -> Path:
    root = Path(os.environ.get("PAPERGYM_CACHE", Path.home() / ".cache" / "papergym"))
    path = root / "humanoid"
    path.mkdir(parents=True, exist_ok=True)
    return path


def cached(key: dict[str, Any], compute: Callable[[], float]) -> float:
    """A reference number computed once per key (problem code hash + settings)."""
    digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()
    path = cache_dir() / f"ref_{digest[:24]}.json"
    if path.exists():
        return float(json.loads(path.read_text())["value"])
    value = float(compute())
    tmp = path.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps({"key": key, "value": value}, default=str))
    tmp.replace(path)
    return value


def code_hash() -> str:
    """Hash of this package's source: a change to the problem invalidates its references."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]
