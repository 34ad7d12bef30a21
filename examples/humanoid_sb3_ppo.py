"""Train Stable-Baselines3 PPO on ``papergym/XEmbodiedWalker-v2`` and watch it learn to balance.

One planar biped (gymnasium's walker2d mapped onto the 13 joint slots) walks slowly
(v* ~ U[0, 0.5] m/s) under random pushes of up to 1 m/s. Holding the default pose (a = 0)
falls within about 3 s. PPO with SB3's MuJoCo defaults, observation and reward normalization,
and an initial action std of 0.2 (actions are joint targets: SB3's default std of 1.0 would
swing every joint through most of its range) learns to stay up. The script prints the mean
return, episode length and survival of the trained policy next to a = 0 on the same 8 held-out
episodes, at every ``--eval-every`` steps. On one core, 10^5 steps take about 2.5 minutes
(measured: return 246 against 131 for a = 0, episodes 236 steps against 140).

    pip install -e . -c constraints.txt      # stable-baselines3 is a core dependency
    python examples/humanoid_sb3_ppo.py --timesteps 100000
"""

from __future__ import annotations

import argparse

import numpy as np
import torch

import papergym

ENV_KWARGS = {"bodies": ["walker2d_v5"], "max_steps": 400}


def evaluate(policy, episodes: int) -> tuple[float, float, float]:
    """Mean return, episode length and survival of ``policy(obs) -> action`` on fixed seeds."""
    env = papergym.make("papergym/XEmbodiedWalker-v2", **ENV_KWARGS)
    returns, lengths, survived = [], [], []
    for k in range(episodes):
        obs, _ = env.reset(seed=10_000 + k)
        total, steps, done, fell = 0.0, 0, False, False
        while not done:
            obs, reward, fell, truncated, _ = env.step(policy(obs))
            total, steps, done = total + reward, steps + 1, fell or truncated
        returns.append(total)
        lengths.append(steps)
        survived.append(not fell)
    return float(np.mean(returns)), float(np.mean(lengths)), float(np.mean(survived))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timesteps", type=int, default=100_000)
    parser.add_argument("--eval-every", type=int, default=25_000)
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import DummyVecEnv, VecNormalize

    torch.set_num_threads(1)
    venv = VecNormalize(DummyVecEnv([lambda: papergym.make("papergym/XEmbodiedWalker-v2",
                                                            **ENV_KWARGS)]))
    venv.seed(args.seed)
    model = PPO("MlpPolicy", venv, seed=args.seed, device="cpu", verbose=0,
                policy_kwargs={"log_std_init": -1.6})

    def trained(obs: np.ndarray) -> np.ndarray:
        action, _ = model.predict(venv.normalize_obs(obs[None]), deterministic=True)
        return action[0]

    zero = evaluate(lambda obs: np.zeros(13, np.float32), args.episodes)
    print(f"{'steps':>8} {'return':>8} {'length':>7} {'survival':>8}   (a = 0: return "
          f"{zero[0]:.1f}, length {zero[1]:.0f}, survival {zero[2]:.2f})")
    done = 0
    while done < args.timesteps:
        chunk = min(args.eval_every, args.timesteps - done)
        model.learn(chunk, reset_num_timesteps=False)
        done += chunk
        venv.training = False  # freeze the statistics while evaluating
        ret, length, surv = evaluate(trained, args.episodes)
        venv.training = True
        print(f"{done:>8} {ret:>8.1f} {length:>7.0f} {surv:>8.2f}", flush=True)


if __name__ == "__main__":
    main()
