"""What PPO learning looks like on XEmbodiedWalker-v2 (or -v1): return against a = 0 per
held-out body.

Trains the MLP generalist of the family (``generalist_mlp``: the shared PPO core, 8 envs x 256
steps, 5 epochs x 4 minibatches with the KL-adaptive lr, initial action std 0.2) for
``--steps`` environment steps on the training pool of seed 0 (the pool size, held-out bodies,
episode length and pushes of the version's standard tier), and, with ``--per-body``, once more
on each held-out body alone (a specialist with the same learner). ``--agent`` trains another
generalist of the family with the same protocol (e.g. ``generalist_gcn``), ``--config`` overrides
its config (e.g. ``'{"epochs": 10}'``) and ``--seeds`` trains one pool policy per seed
(its pool of that seed, as a benchmark trial's), each with its own rows.
Each policy is then run with a = 0 on the same ``--episodes`` held-out episodes per body. The
printed Markdown table (the README's) gives mean return with a 95% t interval, the paired
difference to a = 0 with its interval, and the share of episodes that survive to the time
limit. One math thread per training; ``--workers`` trainings run at once, each in its own
process; CPU seconds per training are printed to stderr.

    .venv/bin/python benchmarks/perf/humanoid_learning_table.py --steps 100000 --per-body --workers 2
    .venv/bin/python benchmarks/perf/humanoid_learning_table.py --version 1 --per-body
    .venv/bin/python benchmarks/perf/humanoid_learning_table.py --steps 98304 --agent xhugwbc_lite \
        --seeds 0 1 --config '{"epochs": 10}' --workers 2
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from functools import partial

import numpy as np
import torch

import papergym
from papergym.agent import REGISTRY
from papergym.envs.humanoid.env import XEmbodiedWalkerEnvV1, XEmbodiedWalkerEnvV2
from papergym.envs.humanoid.task import paired_interval, run_body_episode, zero_policy
from papergym.envs.humanoid.vector import XEmbodiedVectorEnv
from papergym.problem import Budget, EnvView

ENVS = {1: XEmbodiedWalkerEnvV1, 2: XEmbodiedWalkerEnvV2}


def train(bodies, steps: int, seed: int, version: int, pool_size: int, episode: dict,
          agent: str = "generalist_mlp", config: dict | None = None):
    torch.set_num_threads(1)
    env = ENVS[version]
    budget = Budget(env_steps=steps)
    view = EnvView(partial(env, bodies=bodies, pool_size=pool_size, pool_seed=seed, **episode),
                   budget, seed, vectorize=partial(XEmbodiedVectorEnv, threads=1))
    start = time.process_time()
    policy = REGISTRY.get(agent, family="humanoid")(config or {}).solve(view, budget, seed)
    print(f"trained on {bodies} for {steps} steps: {time.process_time() - start:.0f} CPU-s",
          file=sys.stderr, flush=True)
    return policy


def train_job(job: tuple, **kwargs):
    """``train`` on one (bodies, seed) job: a picklable callable for the process pool."""
    bodies, seed = job
    return train(bodies, seed=seed, **kwargs)


def row(label: str, body: str, policy, episodes: int, version: int, episode: dict) -> str:
    env = ENVS[version](bodies=[body], **episode)
    seeds = [20_000 + k for k in range(episodes)]
    agent = [run_body_episode(env, policy, s) for s in seeds]
    zero = [run_body_episode(env, zero_policy(env.n_slots), s) for s in seeds]
    r_agent, r_zero = [a["return"] for a in agent], [z["return"] for z in zero]
    _, lo_a, hi_a = paired_interval(r_agent, np.zeros(episodes))
    diff, lo, hi = paired_interval(r_agent, r_zero)
    surv = np.mean([a["survival"] for a in agent])
    surv_zero = np.mean([z["survival"] for z in zero])
    return (f"| {body} | {label} | {np.mean(r_agent):.0f} [{lo_a:.0f}, {hi_a:.0f}] | "
            f"{np.mean(r_zero):.0f} | {diff:+.0f} [{lo:+.0f}, {hi:+.0f}] | {surv:.2f} | "
            f"{surv_zero:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--episodes", type=int, default=8)
    parser.add_argument("--per-body", nargs="*", default=None,
                        help="also train one policy on each held-out body alone (or on the "
                             "bodies named here)")
    parser.add_argument("--version", type=int, default=2, choices=sorted(ENVS))
    parser.add_argument("--heldout", nargs="*", default=None,
                        help="held-out bodies (default: the version's standard tier)")
    parser.add_argument("--no-pool", action="store_true", help="skip the generalist")
    parser.add_argument("--workers", type=int, default=1, help="trainings at once")
    parser.add_argument("--push-dv", type=float, default=None,
                        help="push size in m/s (default: the standard tier's)")
    parser.add_argument("--agent", default="generalist_mlp", help="the generalist to train")
    parser.add_argument("--config", type=json.loads, default={},
                        help='its config overrides, e.g. \'{"epochs": 10}\'')
    parser.add_argument("--seeds", type=int, nargs="+", default=[0],
                        help="one pool policy per training seed")
    args = parser.parse_args()
    # the version's standard tier: pool, held-out bodies, episode length and pushes
    standard = papergym.spec(f"papergym/XEmbodiedWalker-v{args.version}").tier_kwargs("standard")
    episode = {k: standard[k] for k in ("max_steps", "push_dv") if k in standard}
    if args.push_dv is not None:
        episode["push_dv"] = args.push_dv
    torch.set_num_threads(1)
    heldout = args.heldout or standard["heldout"]
    own = [b for b in heldout if args.per_body is not None and (not args.per_body
                                                                 or b in args.per_body)]
    jobs = [(bodies, seed) for seed in args.seeds
            for bodies in ([] if args.no_pool else ["train"]) + [[b] for b in own]]
    train_one = partial(train_job, steps=args.steps, version=args.version,
                        pool_size=standard["pool_size"], episode=episode, agent=args.agent,
                        config=args.config)
    with ProcessPoolExecutor(args.workers) as pool:
        policies = dict(zip([(str(b), s) for b, s in jobs],
                            pool.map(train_one, jobs)))
    rows = []
    for body in heldout:
        for seed in args.seeds:
            tail = "" if args.seeds == [0] else f", seed {seed}"
            if not args.no_pool:
                rows.append(row(f"pool of {standard['pool_size']} (zero-shot){tail}", body,
                                policies["train", seed], args.episodes, args.version, episode))
            if body in own:
                rows.append(row(f"the body itself{tail}", body, policies[str([body]), seed],
                                args.episodes, args.version, episode))
            print(rows[-1], file=sys.stderr, flush=True)
    learner = "MLP" if args.agent == "generalist_mlp" else args.agent
    if args.config:
        learner += f" {args.config}"
    print(f"PPO {learner}, {args.steps:,} steps, XEmbodiedWalker-v{args.version} ({episode}, "
          f"{args.episodes} episodes per body):\n")
    print("| held-out body | trained on | return [95% CI] | a = 0 | difference [95% CI] | "
          "survival | a = 0 survival |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
