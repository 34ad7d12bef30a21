"""Steps per second of the humanoid envs against a raw MuJoCo stepping loop of the same physics.

For each body the env runs ``--steps`` policy steps with a = 0 (resetting when an episode
ends). The raw loop does the same physics without the env: for every one of those steps it
loads the exact MuJoCo state the env's step started its physics from (``mj_setState`` of
``mjSTATE_INTEGRATION``: time, qpos, qvel, controls, solver warm start, recorded in an untimed
pass of the same seeded episodes) and calls ``mujoco.mj_step(model, data, nstep=10)``. A
physics step costs what its state makes it cost (contacts, solver iterations), so the raw loop
replays the env's own states rather than a trajectory of its own. The ratio env / raw is the
cost of the env's Python layer (action check, control law, pushes, observation history,
reward, info); the issue's goal is >= 0.9.

Each repeat is a pair: the env run and the raw replay back to back (their order alternating
from one repeat to the next), and its ratio is taken within the pair, so a change of machine
speed between repeats cancels. A row gives the median rate of each and the median of the
pair ratios with their range. On a shared machine the median moves by a few hundredths
between runs; the best-of rates the script used to compare moved by up to ~0.15.

    .venv/bin/python benchmarks/perf/humanoid_env_speed.py [--steps 3000] [--repeats 7]
"""

from __future__ import annotations

import argparse
import statistics
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


STATE = mujoco.mjtState.mjSTATE_INTEGRATION


def make_env(cls, name, settings):
    env = cls(bodies=[name], max_steps=1000, **settings)
    env.reset(seed=0)
    return env, np.zeros(env.n_slots, np.float32)


def record_states(cls, name, steps, settings):
    """The state each env step's physics starts from (its step is ``_act``, the physics,
    ``_advance``; the same seeds give the same episodes as :func:`env_rate`), and the body."""
    env, zero = make_env(cls, name, settings)
    model = env.body.model
    states = np.empty((steps, mujoco.mj_stateSize(model, STATE)))
    for t in range(steps):
        a = env._act(zero)
        mujoco.mj_getState(model, env.data, states[t], STATE)
        mujoco.mj_step(model, env.data, nstep=FRAME_SKIP)
        _, _, term, trunc, _ = env._advance(a)
        if term or trunc:
            env.reset()
    return states, env.body


def env_rate(cls, name, steps, settings):
    env, zero = make_env(cls, name, settings)
    start = time.perf_counter()
    for _ in range(steps):
        _, _, term, trunc, _ = env.step(zero)
        if term or trunc:
            env.reset()
    return steps / (time.perf_counter() - start)


def raw_rate(body, states):
    model, data = body.model, mujoco.MjData(body.model)
    start = time.perf_counter()
    for state in states:
        mujoco.mj_setState(model, data, state, STATE)
        mujoco.mj_step(model, data, nstep=FRAME_SKIP)
    return len(states) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    print(f"{'env':<4} {'body':<18} {'slots':>5} {'env steps/s':>12} {'raw steps/s':>12} "
          f"{'ratio':>6}  {'range':<11}")
    for cls, name, settings in BODIES:
        states, body = record_states(cls, name, args.steps, settings)
        envs, raws, ratios = [], [], []
        for repeat in range(args.repeats):
            env_first = repeat % 2 == 0
            if env_first:
                env = env_rate(cls, name, args.steps, settings)
            raw = raw_rate(body, states)
            if not env_first:
                env = env_rate(cls, name, args.steps, settings)
            envs.append(env)
            raws.append(raw)
            ratios.append(env / raw)
        version = "v2" if cls is XEmbodiedWalkerEnvV2 else "v0"
        print(f"{version:<4} {name:<18} {body.n_actuated:>5} {statistics.median(envs):>12,.0f} "
              f"{statistics.median(raws):>12,.0f} {statistics.median(ratios):>6.2f}  "
              f"[{min(ratios):.2f}, {max(ratios):.2f}]")


if __name__ == "__main__":
    main()
