"""FedRounds-v0 step time versus the number of clients (Flower-style partial participation).

Flower samples a fraction of the clients each round (``fraction_fit``); here S = N/10 (at
least 2) of N clients take part, on the smoke tier's data (logreg_synth, K = 5, B = 16),
driven by ParFreFL (one dense vector each way). The time of one round = the participants'
local work (K oracle calls each), the env's encoding/decoding/bit accounting of every
message, the server update and the problem-side metrics, measured after reset (instance
generation is per episode, not per step).

A second sweep keeps S = 10 fixed while N grows, which isolates what idle clients cost (an
observation each, nothing else; ideally flat).

Times are process CPU time (``time.process_time``, one BLAS thread), best of the repeats,
so that other processes on a shared machine do not distort the ratios.
Prints, per N: ms per step, the ratio to the smallest N, and that ratio divided by N/N_0
("vs linear"; <= 1 means the step time grows no faster than linearly).
Run: ``.venv/bin/python benchmarks/perf/fedlearn_scaling.py [--rounds 20]``.
"""

from __future__ import annotations

import argparse
import time

from threadpoolctl import threadpool_limits

import papergym
from papergym.agents.fedlearn.parfrefl import ParFreFL
from papergym.envs.fedlearn.env import FedRoundsEnv

SMOKE = {k: v for k, v in papergym.spec("papergym/FedRounds-v0").tier_kwargs("smoke").items()
         if k not in ("tuning_seeds", "bit_budget_rounds")}


def step_time(num_clients: int, participants: int, rounds: int, repeats: int) -> float:
    """Best-of-`repeats` mean CPU seconds per round (env step + the participants' policies)."""
    kwargs = {**SMOKE, "num_clients": num_clients, "participants": participants,
              "rounds": rounds}
    task = papergym.make_task("papergym/FedRounds-v0", tier="smoke", **kwargs)
    algorithm = ParFreFL().solve(task.train_view(0, task.budget), task.budget, 0)
    best = float("inf")
    for repeat in range(repeats):
        env = FedRoundsEnv(server=algorithm.make_server(), **kwargs)
        observations, _ = env.reset(seed=repeat)
        clients = {a: algorithm.make_client(i, env.oracle(a), env.setting)
                   for i, a in enumerate(env.possible_agents)}
        start = time.process_time()
        while env.agents:
            actions = {a: clients[a](o) for a, o in observations.items() if o["participating"]}
            observations, *_ = env.step(actions)
        best = min(best, (time.process_time() - start) / rounds)
    return best


def sweep(title: str, sizes: list[int], participants_of, rounds: int, repeats: int) -> None:
    print(f"\n{title}")
    print(f"{'N':>6} {'S':>5} {'ms/step':>9} {'ratio':>7} {'N/N0':>6} {'vs linear':>10}")
    base = None
    for n in sizes:
        s = participants_of(n)
        t = step_time(n, s, rounds, repeats)
        base = base or (n, t)
        ratio, growth = t / base[1], n / base[0]
        print(f"{n:>6} {s:>5} {1e3 * t:>9.2f} {ratio:>7.2f} {growth:>6.1f} {ratio / growth:>10.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 50, 100, 200, 400])
    args = parser.parse_args()
    with threadpool_limits(1):
        sweep("Flower-style partial participation, S = N/10",
              args.sizes, lambda n: max(2, n // 10), args.rounds, args.repeats)
        sweep("fixed S = 10 (cost of idle clients)",
              args.sizes, lambda n: min(10, n), args.rounds, args.repeats)


if __name__ == "__main__":
    main()
