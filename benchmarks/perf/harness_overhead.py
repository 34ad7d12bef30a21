"""Harness overhead per trial: the runner on a no-op agent against a bare loop doing the same work.

The bare loop runs the contract's five lines (make_task, budget, train_view, solve, evaluate)
in one process. The harness adds trial keys, a forked worker per trial, the timeout watch,
provenance and a SQLite write. Both run the same trials in the same process, so the printed
ratio compares like with like on this machine.

    python benchmarks/perf/harness_overhead.py [--trials 200] [--workers 1]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from _noop import NOOP_ID, NoOpAgent  # a sibling module: this folder is sys.path[0]

import papergym
from papergym.benchmarks.runner import run_benchmark
from papergym.benchmarks.spec import BenchmarkSpec


def bare_loop(trials: int) -> float:
    start = time.perf_counter()
    for seed in range(trials):
        task = papergym.make_task(NOOP_ID, tier="smoke")
        budget = task.budget
        task.evaluate(NoOpAgent().solve(task.train_view(seed, budget), budget, seed), seed)
    return time.perf_counter() - start


def harness(trials: int, workers: int) -> float:
    spec = BenchmarkSpec.model_validate({
        "name": "perf_noop", "family": "perf", "paper": {"key": "-", "title": "no-op"},
        "problems": [{"name": "noop", "problem": NOOP_ID,
                      "metric": {"name": "value", "direction": "max"},
                      "tiers": {"smoke": {"seeds": trials}}, "agents": ["noop"]}],
    })
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        summary = run_benchmark(spec, "smoke", store=Path(tmp) / "perf.sqlite", workers=workers)
        elapsed = time.perf_counter() - start
    assert summary.ran == trials and summary.failed == 0
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    bare_loop(10)  # warm imports
    bare = bare_loop(args.trials)
    full = harness(args.trials, args.workers)
    print(f"trials: {args.trials}, workers: {args.workers}")
    print(f"bare loop:  {1e3 * bare / args.trials:8.3f} ms per trial")
    print(f"harness:    {1e3 * full / args.trials:8.3f} ms per trial")
    print(f"overhead:   {1e3 * (full - bare) / args.trials:8.3f} ms per trial "
          f"(ratio harness / bare = {full / bare:.1f}x)")


if __name__ == "__main__":
    main()
