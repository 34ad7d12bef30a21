"""Milliseconds per environment step of the humanoid learners, split into env and learner.

On the v2 training pool (16 variants of seed 0, slow walking under pushes, 400-step episodes)
each generalist trains with the shared PPO core for ``--steps`` environment steps (its
default config: 8 envs x 256 steps, 5 epochs x 4 minibatches; ``--config`` overrides it,
e.g. CleanRL's update ``'{"epochs": 10, "minibatches": 64, "lr": 3e-4, "desired_kl": null,
"anneal_lr": true}'``) on the task's vector env (one physics thread here), after a few
warm-up steps (one-off imports are not charged per step). Printed per agent: the whole
``solve`` in ms per env step, what the env alone costs on the same pool with a = 0, the
difference (the learner: inference during the rollout, GAE and the gradient epochs) and,
last, solve / env (the issue's target: <= 2, <= 3 for the Transformers). The env is also
timed as the agents step it (the metered vector env, whose info dicts add ~10%), printed
for reference; the ratio uses the env alone. For the Transformer
generalists the same run is repeated with the encoder computing every slot
(``GraphTransformer.prune = False``), the reference the pruned encoder is measured against.
The env itself is compared with a raw ``mujoco.mj_step`` loop of the same body in
``humanoid_env_speed.py`` (the issue's target: env / raw >= 0.9). Single thread, one process;
times are the process's CPU time, so other jobs on a shared machine do not inflate them.

    .venv/bin/python benchmarks/perf/humanoid_learner_speed.py [--steps 4096] [--agents ...]
"""

from __future__ import annotations

import argparse
import json
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


def vector_env_ms(steps: int, n_envs: int = 8) -> float:
    """The same, stepped as the agents step it: the task's metered vector env of ``n_envs``."""
    budget = Budget(env_steps=steps + n_envs)
    view = EnvView(partial(XEmbodiedWalkerEnvV2, **ENV), budget, 0, options=("randomization",),
                   vectorize=partial(XEmbodiedVectorEnv, threads=1))
    envs = view.make_vector_env(n_envs)
    envs.reset(seed=list(range(n_envs)))
    zero = np.zeros((n_envs, envs.envs[0].unwrapped.n_slots), np.float32)
    start = time.process_time()
    for _ in range(steps // n_envs):
        envs.step(zero)
    elapsed = time.process_time() - start
    envs.close()
    return 1e3 * elapsed / (steps // n_envs * n_envs)


def solve_ms(agent_id: str, steps: int, config: dict) -> float:
    warm_up(agent_id)
    budget = Budget(env_steps=steps)
    view = EnvView(partial(XEmbodiedWalkerEnvV2, **ENV), budget, 0,
                   options=("randomization", "morph_obs"),
                   vectorize=partial(XEmbodiedVectorEnv, threads=1))  # as the task's, one thread
    agent = REGISTRY.get(agent_id, family="humanoid")(config)
    start = time.process_time()
    agent.solve(view, budget, 0)
    return 1e3 * (time.process_time() - start) / budget.used["env_steps"]


def warm_up(agent_id: str) -> None:
    """A few steps of the same training first, so that one-off costs (torch's optimizers import
    torch._dynamo on first use, ~2.5 CPU-s; the agent's modules) are not charged per step."""
    budget = Budget(env_steps=64)
    view = EnvView(partial(XEmbodiedWalkerEnvV2, **ENV), budget, 0,
                   options=("randomization", "morph_obs"),
                   vectorize=partial(XEmbodiedVectorEnv, threads=1))
    REGISTRY.get(agent_id, family="humanoid")({"n_envs": 2, "n_steps": 16}).solve(view, budget, 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4096)
    parser.add_argument("--agents", nargs="+", default=["generalist_mlp", "xhugwbc_lite"])
    parser.add_argument("--config", type=json.loads, default={},
                        help='config overrides for every agent, e.g. \'{"minibatches": 64}\'')
    parser.add_argument("--no-full", action="store_true",
                        help="skip the Transformers' unpruned-encoder reference")
    args = parser.parse_args()
    torch.set_num_threads(1)
    env = env_ms(args.steps)
    print(f"env alone (a = 0, pool of 16): {env:.3f} ms/step; as the agents step it (metered "
          f"vector env of 8, one thread): {vector_env_ms(args.steps):.3f} ms/step; "
          f"config overrides: {args.config}")
    print(f"{'agent':<22} {'encoder':>8} {'solve ms/step':>14} {'learner ms/step':>16} "
          f"{'pruned/full':>11} {'solve/env':>9}")
    for agent_id in args.agents:
        pruned = solve_ms(agent_id, args.steps, args.config)
        label = "pruned" if agent_id in TRANSFORMERS else "-"
        print(f"{agent_id:<22} {label:>8} {pruned:>14.3f} {pruned - env:>16.3f} {'':>11} "
              f"{pruned / env:>9.2f}", flush=True)
        if agent_id in TRANSFORMERS and not args.no_full:  # the same training, every slot
            GraphTransformer.prune = False
            try:
                full = solve_ms(agent_id, args.steps, args.config)
            finally:
                GraphTransformer.prune = True
            print(f"{agent_id:<22} {'full':>8} {full:>14.3f} {full - env:>16.3f} "
                  f"{pruned / full:>11.2f} {full / env:>9.2f}", flush=True)
    print(f"env alone again: {env_ms(args.steps):.3f} ms/step, vector env "
          f"{vector_env_ms(args.steps):.3f} (the machine's drift over the run)")


if __name__ == "__main__":
    main()
