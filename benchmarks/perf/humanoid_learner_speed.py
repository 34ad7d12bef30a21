"""Milliseconds per environment step of the humanoid learners, split into env and learner.

On the v2 training pool (16 variants of seed 0, slow walking under pushes, 400-step episodes)
each generalist trains with the shared PPO core for ``--steps`` environment steps (its
default config: 8 envs x 256 steps, 10 epochs x 64 minibatches) on the task's vector env
(one physics thread here). Printed per agent: the whole
``solve`` in ms per env step, and what the env alone costs on the same pool with a = 0; the
difference is the learner (inference during the rollout, GAE and the gradient epochs). For
the Transformer generalists the same run is repeated with the encoder computing every slot
(``GraphTransformer.prune = False``), the reference the pruned encoder is measured against.
The env itself is compared with a raw ``mujoco.mj_step`` loop of the same body in
``humanoid_env_speed.py`` (the issue's target: env / raw >= 0.9). Single thread, one process;
times are the process's CPU time, so other jobs on a shared machine do not inflate them.

    .venv/bin/python benchmarks/perf/humanoid_learner_speed.py [--steps 4096] [--agents ...]
"""

from __future__ import annotations

import argparse
import time
from functools import partial

import numpy as np
import torch

from papergym.agent import REGISTRY
from papergym.agents.humanoid.xhugwbc_lite import GraphTransformer
from papergym.envs.humanoid.env import XEmbodiedWalkerEnvV2
from papergym.envs.humanoid.vector import XEmbodiedVectorEnv
from papergym.problem import Budget, EnvView

ENV = {"bodies": "train", "pool_size": 16, "pool_seed": 0, "max_steps": 400}
TRANSFORMERS = ("xhugwbc_lite", "generalist_metamorph", "generalist_ft")


def env_ms(steps: int) -> float:
    env = XEmbodiedWalkerEnvV2(**ENV)
    env.reset(seed=0)
    zero = np.zeros(env.n_slots, np.float32)
    start = time.process_time()
    for _ in range(steps):
        _, _, term, trunc, _ = env.step(zero)
        if term or trunc:
            env.reset()
    return 1e3 * (time.process_time() - start) / steps


def solve_ms(agent_id: str, steps: int, config: dict) -> float:
    budget = Budget(env_steps=steps)
    view = EnvView(partial(XEmbodiedWalkerEnvV2, **ENV), budget, 0,
                   options=("randomization", "morph_obs"),
                   vectorize=partial(XEmbodiedVectorEnv, threads=1))  # as the task's, one thread
    agent = REGISTRY.get(agent_id, family="humanoid")(config)
    start = time.process_time()
    agent.solve(view, budget, 0)
    return 1e3 * (time.process_time() - start) / budget.used["env_steps"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4096)
    parser.add_argument("--agents", nargs="+", default=["generalist_mlp", "xhugwbc_lite"])
    args = parser.parse_args()
    torch.set_num_threads(1)
    env = env_ms(args.steps)
    print(f"env alone (a = 0, pool of 16): {env:.3f} ms/step")
    print(f"{'agent':<22} {'encoder':>8} {'solve ms/step':>14} {'learner ms/step':>16} {'ratio':>6}")
    for agent_id in args.agents:
        pruned = solve_ms(agent_id, args.steps, {})
        label = "pruned" if agent_id in TRANSFORMERS else "-"
        print(f"{agent_id:<22} {label:>8} {pruned:>14.3f} {pruned - env:>16.3f}")
        if agent_id in TRANSFORMERS:  # the same training, every slot computed
            GraphTransformer.prune = False
            try:
                full = solve_ms(agent_id, args.steps, {})
            finally:
                GraphTransformer.prune = True
            print(f"{agent_id:<22} {'full':>8} {full:>14.3f} {full - env:>16.3f} "
                  f"{pruned / full:>6.2f}")


if __name__ == "__main__":
    main()
