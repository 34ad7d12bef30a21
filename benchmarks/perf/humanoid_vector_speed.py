"""Env steps per second of 8 humanoid training envs: one by one vs XEmbodiedVectorEnv.

Three ways to step the 8 metered envs of a training view (the generalists' rollout: 8 envs):

- ``one-by-one``: 8 ``view.make_env()`` envs, each stepped (and reset when its episode ends)
  by itself, as ``train_ppo`` did before the vector env;
- ``vector t=1``: ``view.make_vector_env(8)`` with ``XEmbodiedVectorEnv(threads=1)`` (the
  physics of the 8 envs inline, one after the other);
- ``vector t=2``: the same with ``threads=2`` (the physics in two chunks of 4, one of them on
  a pool thread; ``mj_step`` releases the GIL).

``--where process`` runs them in this process; ``--where sandbox`` runs them from a sandboxed
agent process (``papergym.isolation``), as trials do: there ``one-by-one`` costs 8 message
pairs per vector step, a vector env one. Actions are fixed random draws in [-0.3, 0.3]; each
repeat runs every way once, interleaved; the table gives the mean over repeats with a 95%
t-interval, and the load average before the run (the machine is shared).

    .venv/bin/python benchmarks/perf/humanoid_vector_speed.py [--steps 400] [--repeats 5]
        [--where process sandbox] [--env walker humanoid] [--phases]
"""

from __future__ import annotations

import argparse
import os
import time
from functools import partial

import numpy as np
from scipy import stats

from papergym import Agent, Budget
from papergym.envs.humanoid.env import XEmbodiedHumanoidEnvV1, XEmbodiedWalkerEnvV2
from papergym.envs.humanoid.vector import XEmbodiedVectorEnv
from papergym.problem import EnvView

N = 8
ENVS = {"walker": (XEmbodiedWalkerEnvV2, 13), "humanoid": (XEmbodiedHumanoidEnvV1, 32)}
WAYS = ("one-by-one", "vector t=1", "vector t=2")


def view_of(kind: str, threads: int, steps: int) -> EnvView:
    cls, _ = ENVS[kind]
    return EnvView(partial(cls, pool_seed=0), Budget(env_steps=N * steps), seed=0,
                   vectorize=partial(XEmbodiedVectorEnv, threads=threads))


def actions_of(kind: str, steps: int) -> np.ndarray:
    return np.random.default_rng(0).uniform(-0.3, 0.3, (steps, N, ENVS[kind][1])).astype(
        np.float32)


def run_way(view, way: str, actions: np.ndarray) -> float:
    """Seconds to take ``len(actions)`` vector steps of ``N`` envs the way named."""
    if way == "one-by-one":
        envs = [view.make_env() for _ in range(N)]
        for k, env in enumerate(envs):
            env.reset(seed=k)
        start = time.perf_counter()
        for a in actions:
            for k, env in enumerate(envs):
                _, _, term, trunc, _ = env.step(a[k])
                if term or trunc:
                    env.reset()
        return time.perf_counter() - start
    vec = view.make_vector_env(N)
    vec.reset(seed=list(range(N)))
    start = time.perf_counter()
    for a in actions:
        vec.step(a)
    return time.perf_counter() - start


class Stepper(Agent):
    """In the sandbox: steps the view's envs the way named by the seed, returns the seconds."""

    id, family, role, paper = "vector_stepper", "perf", "baseline", "-"

    def __init__(self, way: str, kind: str, steps: int) -> None:
        self.way, self.kind, self.steps = way, kind, steps

    def solve(self, view, budget, seed):
        return run_way(view, self.way, actions_of(self.kind, self.steps))


def timed(where: str, kind: str, way: str, steps: int) -> float:
    threads = 2 if way.endswith("2") else 1
    view = view_of(kind, threads, steps)
    try:
        if where == "process":
            return run_way(view, way, actions_of(kind, steps))
        from papergym.isolation import AgentProcess, Limits

        sandbox = AgentProcess(partial(Stepper, way, kind, steps), Limits(memory_mb=4096))
        sandbox.start()
        try:
            return float(sandbox.solve(view, view.budget, 0))
        finally:
            sandbox.close()
    finally:
        view.close()


def phases(kind: str, steps: int) -> dict[str, float]:
    """Microseconds per env step in each phase of a threads=1 vector step (in this process):
    ``act`` (charge + ``_act``), ``physics`` (``mj_step``), ``advance`` (``_advance``, autoreset,
    stacking). Only ``physics`` runs on the pool with threads > 1, so with a free core the
    best a threads=2 step can do is ``act + physics / 2 + advance``."""
    view = view_of(kind, 1, steps)
    vec = view.make_vector_env(N)
    inner = vec.unwrapped
    vec.reset(seed=list(range(N)))
    spent = {"act": 0.0, "physics": 0.0, "advance": 0.0}
    for a in actions_of(kind, steps):
        t0 = time.perf_counter()
        applied = []
        for env, raw, ak in zip(inner.envs, inner._raw, inner._actions(a)):
            env.charge()
            applied.append(raw._act(ak))
        t1 = time.perf_counter()
        inner._physics(inner._chunks[0])
        t2 = time.perf_counter()
        inner._collect([raw._advance(ak) for raw, ak in zip(inner._raw, applied)])
        t3 = time.perf_counter()
        for name, dt in (("act", t1 - t0), ("physics", t2 - t1), ("advance", t3 - t2)):
            spent[name] += dt
    view.close()
    return {k: 1e6 * v / (N * steps) for k, v in spent.items()}


def interval(x: list[float]) -> tuple[float, float]:
    a = np.asarray(x, float)
    if len(a) < 2:
        return float(a.mean()), 0.0
    return float(a.mean()), float(stats.t.ppf(0.975, len(a) - 1) * a.std(ddof=1) / np.sqrt(len(a)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=400, help="vector steps per repeat")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--where", nargs="+", default=["process", "sandbox"],
                        choices=["process", "sandbox"])
    parser.add_argument("--env", nargs="+", default=["walker"], choices=list(ENVS))
    parser.add_argument("--phases", action="store_true",
                        help="print the split of a threads=1 vector step into its phases")
    args = parser.parse_args()
    if args.phases:
        for kind in args.env:
            runs = [phases(kind, args.steps) for _ in range(args.repeats)]
            split = {k: interval([r[k] for r in runs]) for k in runs[0]}
            total = sum(m for m, _ in split.values())
            text = ", ".join(f"{k} {m:.0f} +- {h:.0f}" for k, (m, h) in split.items())
            best = total - split["physics"][0] / 2
            print(f"{kind}: us per env step: {text}; physics {split['physics'][0] / total:.0%} "
                  f"of {total:.0f}: threads=2 with a free core at best {total / best:.2f}x")
        return
    print(f"load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs; {N} envs x "
          f"{args.steps} vector steps, {args.repeats} repeats")
    print(f"{'where':<8} {'env':<9} {'way':<11} {'env steps/s':>12} {'95% CI':>8} "
          f"{'us/env step':>11} {'x one-by-one':>12}")
    for where in args.where:
        for kind in args.env:
            timed(where, kind, "vector t=1", 20)  # warm: bodies built, imports done
            rates: dict[str, list[float]] = {w: [] for w in WAYS}
            for _ in range(args.repeats):
                for way in WAYS:
                    rates[way].append(N * args.steps / timed(where, kind, way, args.steps))
            base = np.mean(rates["one-by-one"])
            for way in WAYS:
                mean, half = interval(rates[way])
                print(f"{where:<8} {kind:<9} {way:<11} {mean:>12,.0f} {half:>8,.0f} "
                      f"{1e6 / mean:>11.0f} {mean / base:>12.2f}")


if __name__ == "__main__":
    main()
