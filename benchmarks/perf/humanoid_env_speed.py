"""Steps per second of the humanoid envs against a raw MuJoCo stepping loop of the same model.

For each body the env runs ``--steps`` policy steps with a = 0 (resetting when an episode
ends); the raw loop writes the same default-pose control and calls ``mujoco.mj_step(model,
data, nstep=10)`` the same number of times, resetting at the same step indices. The ratio
env / raw is the cost of the env's Python layer (observation history, reward, masks); the
issue's goal is >= 0.9. Both are measured in the same run, interleaved, best of ``--repeats``.
On a shared machine a row's ratio moves by up to ~0.1 between runs: compare several runs.

    .venv/bin/python benchmarks/perf/humanoid_env_speed.py [--steps 3000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

import mujoco
import numpy as np

from papergym.envs.humanoid.env import (
    FRAME_SKIP,
    XEmbodiedHumanoidEnv,
    XEmbodiedWalkerEnv,
    XEmbodiedWalkerEnvV2,
)

STAND = {"task": "stand"}
# (env, body, its settings): v0's stand task, and v2's default (slow walking under pushes)
BODIES = [(XEmbodiedWalkerEnv, "walker2d_v5", STAND),
          (XEmbodiedWalkerEnv, "short_heavy_arms", STAND),
          (XEmbodiedHumanoidEnv, "gym_humanoid", STAND),
          (XEmbodiedHumanoidEnv, "g1_like_29", STAND),
          (XEmbodiedHumanoidEnv, "full32", STAND),
          (XEmbodiedWalkerEnvV2, "walker2d_v5", {}),
          (XEmbodiedWalkerEnvV2, "w2v_h0", {})]


def env_rate(cls, name, steps, settings):
    env = cls(bodies=[name], max_steps=1000, **settings)
    env.reset(seed=0)
    zero = np.zeros(env.n_slots, np.float32)
    resets = []
    start = time.perf_counter()
    for t in range(steps):
        _, _, term, trunc, _ = env.step(zero)
        if term or trunc:
            resets.append(t)
            env.reset()
    return steps / (time.perf_counter() - start), resets, env.body


def raw_rate(body, steps, resets):
    model, data = body.model, mujoco.MjData(body.model)
    p = np.flatnonzero(body.present)
    reset_at = set(resets)
    start = time.perf_counter()
    data.ctrl[body.act_id[p]] = body.q0[p]
    for t in range(steps):
        data.ctrl[body.act_id[p]] = body.q0[p]
        mujoco.mj_step(model, data, nstep=FRAME_SKIP)
        if t in reset_at:
            mujoco.mj_resetData(model, data)
    return steps / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"{'env':<4} {'body':<18} {'slots':>5} {'env steps/s':>12} {'raw steps/s':>12} {'ratio':>6}")
    for cls, name, settings in BODIES:
        env_best = raw_best = 0.0
        for _ in range(args.repeats):
            rate, resets, body = env_rate(cls, name, args.steps, settings)
            env_best = max(env_best, rate)
            raw_best = max(raw_best, raw_rate(body, args.steps, resets))
        version = "v2" if cls is XEmbodiedWalkerEnvV2 else "v0"
        print(f"{version:<4} {name:<18} {body.n_actuated:>5} {env_best:>12,.0f} {raw_best:>12,.0f} "
              f"{env_best / raw_best:>6.2f}")


if __name__ == "__main__":
    main()
