"""Simulated ticks per second of AgentMemory-v0 at N = 1,000 and 4,000 agents.

For each workload the raw simulator (``Simulator.step`` with LRU scores computed from its own
state) and the env (observation dict, action check, ScaleSim's policy) play the same generated
trace; the ratio env / raw is the cost of the env layer and the policy. Trace generation is
timed separately (the evaluator caches traces in the prepare phase). Both loops run in the same
process, best of ``--repeats``; the standard tier's budget is about 1,000 ticks per trace.

    .venv/bin/python benchmarks/perf/llmserve_ticks.py [--ticks 300] [--repeats 2]
"""

from __future__ import annotations

import argparse
import time

from papergym.agents.llmserve.scalesim import ScaleSimPolicy
from papergym.envs.llmserve import oracle
from papergym.envs.llmserve.env import AgentMemoryEnv, build
from papergym.envs.llmserve.traces import WORKLOADS, generate


def raw_rate(trace, kwargs) -> float:
    sim = build(**kwargs, seed=0, trace=trace)
    lru = oracle.lru_scorer()
    start = time.perf_counter()
    while not sim.done:
        sim.step(lru(sim))
    return trace.n_ticks / (time.perf_counter() - start)


def env_rate(trace, kwargs) -> float:
    env = AgentMemoryEnv(**kwargs)
    policy = ScaleSimPolicy(4, 2, True, False, "index")
    obs, _ = env._start(0, trace)
    start, done = time.perf_counter(), False
    while not done:
        obs, _, done, _, _ = env.step(policy(obs))
    return trace.n_ticks / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ticks", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    for n in (1000, 4000):
        for workload in WORKLOADS:
            kwargs = dict(workload=workload, N=n, n_ticks=args.ticks, pressure=0.3,
                          estimate_noise=0.0, kv_host_tier=True)
            start = time.perf_counter()
            trace = generate(workload, n, args.ticks, 0)
            gen = time.perf_counter() - start
            raw = max(raw_rate(trace, kwargs) for _ in range(args.repeats))
            env = max(env_rate(trace, kwargs) for _ in range(args.repeats))
            print(f"N={n:5d} {workload:11s} trace {1e3 * gen / args.ticks:6.2f} ms/tick  "
                  f"raw LRU {raw:7.0f} ticks/s  env+ScaleSim {env:7.0f} ticks/s  "
                  f"ratio {env / raw:.2f}")


if __name__ == "__main__":
    main()
