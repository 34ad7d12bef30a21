"""Does a = 0 fall? Per body: survival time and return of the zero action, with and without
pushes, for the bodies of a problem version (the v1 template pool, the v2 walker2d variants, named
held-out bodies).

A benchmark in which a = 0 holds its pose on most bodies cannot tell a learner from doing
nothing: this script measures, for ``--episodes`` seeded episodes per body (the env's default
pushes: a horizontal kick ~ U[-1, 1] m/s every 1-3 s), the mean episode length in seconds, the
share of episodes that fall and the mean return, and the time to fall without pushes. The
summary line gives the share of bodies on which a = 0 falls in every pushed episode within
``--fall-s`` seconds on average. One process, one thread, no learning (seconds of CPU).

    .venv/bin/python benchmarks/perf/humanoid_passive_fall.py --version 1 --pool 16
    .venv/bin/python benchmarks/perf/humanoid_passive_fall.py --version 2 --pool 64
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from papergym.envs.humanoid import WALKER_HELDOUT, WALKER_HELDOUT_V2
from papergym.envs.humanoid import bodies as B
from papergym.envs.humanoid.env import XEmbodiedWalkerEnvV1, XEmbodiedWalkerEnvV2
from papergym.envs.humanoid.task import run_body_episode, zero_policy


def zero_stats(env_class, body: B.Embodiment, episodes: int, max_steps: int,
               seed0: int = 20_000) -> dict[str, float]:
    """a = 0 on one body: pushed episodes (the env's defaults) and one episode without pushes."""
    out = {}
    for label, kw in (("push", {}), ("still", {"push_interval_s": 0.0})):
        env = env_class(bodies=["walker2d_v5"], max_steps=max_steps, **kw)
        env.bodies = [body]  # measure this body (generated ones have no name to ask for)
        env._datas.clear()
        n = episodes if label == "push" else 1
        rows = [run_body_episode(env, zero_policy(env.n_slots), seed0 + k) for k in range(n)]
        dt = 0.02
        out[f"{label}_len_s"] = float(np.mean([r["episode_length"] for r in rows])) * dt
        out[f"{label}_fell"] = float(np.mean([1.0 - r["survival"] for r in rows]))
        out[f"{label}_return"] = float(np.mean([r["return"] for r in rows]))
        env.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", type=int, default=2, choices=(1, 2),
                        help="XEmbodiedWalker-vN and its bodies (v1 template, v2 walker2d variants)")
    parser.add_argument("--pool", type=int, default=16, help="generated bodies (seed 0)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--max-steps", type=int, default=400)
    parser.add_argument("--fall-s", type=float, default=4.0)
    parser.add_argument("--heldout", nargs="*", default=None)
    args = parser.parse_args()
    env_class = XEmbodiedWalkerEnvV1 if args.version == 1 else XEmbodiedWalkerEnvV2
    recipe = env_class.recipe_version
    start = time.process_time()
    pool = list(B.pool("planar", args.seed, args.pool, "physics", recipe))
    default = WALKER_HELDOUT if args.version == 1 else WALKER_HELDOUT_V2
    heldout = list(default) if args.heldout is None else args.heldout
    named = [B.named("planar", n) for n in heldout]
    print("| body | DoF | mass kg | h* m | pushed: s up | falls | return | no push: s up | falls |")
    print("|---|---|---|---|---|---|---|---|---|")
    falls = []
    for body in pool + named:
        s = zero_stats(env_class, body, args.episodes, args.max_steps)
        if any(body is b for b in pool):
            falls.append(s["push_fell"] == 1.0 and s["push_len_s"] <= args.fall_s)
        print(f"| {body.name} | {body.n_actuated} | {body.total_mass:.1f} | "
              f"{body.nominal_height:.2f} | {s['push_len_s']:.2f} | {s['push_fell']:.2f} | "
              f"{s['push_return']:.0f} | {s['still_len_s']:.2f} | {s['still_fell']:.0f} |",
              flush=True)
    print(f"\nrecipe {recipe}: a = 0 falls in every pushed episode within {args.fall_s} s (mean) "
          f"on {sum(falls)}/{len(falls)} generated bodies; {time.process_time() - start:.0f} CPU-s")


if __name__ == "__main__":
    main()
