"""Train Stable-Baselines3 PPO on the Dict-action envs ``QAOA2Partition-v1`` and ``DragFFD2D-v1``.

Their actions mix discrete and continuous parts (QAOA2Partition: a cluster assignment per qubit
and the angles of each cluster's QAOA; DragFFD2D: the FFD displacement ``z`` and a ``verify``
flag), which no SB3 policy emits. ``papergym.wrappers.FlattenDictAction`` maps one ``Box``
(or, with ``--to multidiscrete``, one ``MultiDiscrete``) onto the Dict; gymnasium's
``FlattenObservation`` flattens the Dict observation. The env still checks and meters every
action. The script trains PPO for ``--timesteps`` steps and prints its mean return next to
uniformly random actions on the same held-out episode seeds.

    pip install -e . -c constraints.txt      # stable-baselines3 is a core dependency
    python examples/sb3_dict_actions.py --env papergym/QAOA2Partition-v1 --timesteps 20000
    python examples/sb3_dict_actions.py --env papergym/DragFFD2D-v1 --to multidiscrete
"""

from __future__ import annotations

import argparse

import gymnasium as gym
import numpy as np
from gymnasium.wrappers import FlattenObservation
from stable_baselines3 import PPO

import papergym
from papergym.wrappers import FlattenDictAction

ENVS = ("papergym/QAOA2Partition-v1", "papergym/DragFFD2D-v1")
EVAL_SEEDS = range(10_000, 10_004)  # episode seeds the training never resets to


def make_env(env_id: str, to: str = "box", tier: str = "smoke") -> gym.Env:
    """The env with one flat action (``to``: box | multidiscrete) and one flat observation."""
    return FlattenObservation(FlattenDictAction(papergym.make(env_id, tier=tier), to=to))


def mean_return(env: gym.Env, act) -> float:  # noqa: ANN001 - act(obs) -> flat action
    totals = []
    for seed in EVAL_SEEDS:
        obs, _ = env.reset(seed=seed)
        total, done = 0.0, False
        while not done:
            obs, reward, terminated, truncated, _ = env.step(act(obs))
            total, done = total + float(reward), terminated or truncated
        totals.append(total)
    return float(np.mean(totals))


def train(env_id: str, timesteps: int, to: str = "box", seed: int = 0) -> PPO:
    """PPO (SB3 defaults, short rollouts so that small budgets still update) on ``env_id``."""
    env = make_env(env_id, to)
    model = PPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=4, seed=seed, device="cpu",
                verbose=0)
    return model.learn(total_timesteps=timesteps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", choices=ENVS, default=ENVS[0])
    parser.add_argument("--to", choices=("box", "multidiscrete"), default="box")
    parser.add_argument("--timesteps", type=int, default=5_000)
    args = parser.parse_args()
    model = train(args.env, args.timesteps, args.to)
    env = make_env(args.env, args.to)
    env.action_space.seed(0)
    trained = mean_return(env, lambda obs: model.predict(obs, deterministic=True)[0])
    random = mean_return(env, lambda obs: env.action_space.sample())
    print(f"{args.env} after {args.timesteps} PPO steps: mean return {trained:.4g} "
          f"(uniformly random actions: {random:.4g}) over {len(EVAL_SEEDS)} held-out episodes")


if __name__ == "__main__":
    main()
