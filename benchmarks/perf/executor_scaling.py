"""Executor scaling: one grid of CPU-bound trials with 1 and 2 workers, local and Ray.

Prints the wall time of each run, the speedup of 2 workers over 1 (goal >= 1.8x on 2 cores
for CPU-bound trials) and the per-trial overhead of Ray against the local executor. All
figures come from this run, on this machine.

    python benchmarks/perf/executor_scaling.py [--trials 16] [--work 0.5]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from papergym.benchmarks.runner import import_targets, run_benchmark
from papergym.benchmarks.spec import BenchmarkSpec

BUSY_PROBLEM = str(Path(__file__).with_name("_busy_problem.py").resolve())


def calibrate(seconds: float) -> int:
    import_targets([BUSY_PROBLEM])
    from papergym.registry import make_task

    probe = make_task("papergym/PerfBusy-v0", iterations=500)
    start = time.perf_counter()
    probe.evaluate(None, 0)
    return max(50, int(500 * seconds / (time.perf_counter() - start)))


def spec(trials: int, iterations: int) -> BenchmarkSpec:
    return BenchmarkSpec.model_validate({
        "name": "perf_busy", "family": "perf", "paper": {"key": "-", "title": "busy"},
        "imports": [BUSY_PROBLEM],  # so Ray workers register the problem too
        "problems": [{"name": "busy", "problem": "papergym/PerfBusy-v0",
                      "metric": {"name": "eigenvalue", "direction": "max"},
                      "tiers": {"smoke": {"seeds": trials, "kwargs": {"iterations": iterations}}},
                      "agents": ["idle"]}],
    })


def timed_run(bench: BenchmarkSpec, executor: str, workers: int) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        summary = run_benchmark(bench, "smoke", store=Path(tmp) / "s.sqlite", workers=workers,
                                executor=executor)
        elapsed = time.perf_counter() - start
    assert summary.failed == 0, summary.failures
    return elapsed


def _bare_trial(args: tuple[int, int]) -> float:
    from papergym.registry import make_task

    seed, iterations = args
    return make_task("papergym/PerfBusy-v0", iterations=iterations).evaluate(None, seed).metrics[
        "eigenvalue"]


def bare_pool(trials: int, iterations: int, workers: int) -> float:
    """The machine's own ceiling: the same work in a plain multiprocessing pool."""
    import multiprocessing as mp

    from threadpoolctl import threadpool_limits

    with threadpool_limits(1), mp.get_context("fork").Pool(workers) as pool:
        start = time.perf_counter()
        pool.map(_bare_trial, [(seed, iterations) for seed in range(trials)])
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=16)
    parser.add_argument("--work", type=float, default=0.5, help="CPU seconds per trial")
    args = parser.parse_args()
    iterations = calibrate(args.work)
    bench = spec(args.trials, iterations)
    results = {}
    for workers in (1, 2):
        results["pool", workers] = bare_pool(args.trials, iterations, workers)
        print(f"pool  workers={workers}: {results['pool', workers]:6.2f} s (plain multiprocessing)")
    for executor in ("local", "ray"):
        for workers in (1, 2):
            if executor == "ray":
                import ray

                ray.shutdown()
                ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
                timed_run(spec(2, 50), "ray", workers)  # warm the worker pool
            results[executor, workers] = timed_run(bench, executor, workers)
            print(f"{executor:5s} workers={workers}: {results[executor, workers]:6.2f} s "
                  f"for {args.trials} trials of ~{args.work:g} s")
    for executor in ("pool", "local", "ray"):
        speedup = results[executor, 1] / results[executor, 2]
        print(f"{executor}: speedup 2 vs 1 workers = {speedup:.2f}x (goal >= 1.8x; the plain "
              f"pool is this machine's ceiling)")
    overhead = (results["ray", 1] - results["local", 1]) / args.trials
    print(f"ray per-trial overhead vs local (1 worker): {1e3 * overhead:+.1f} ms")


if __name__ == "__main__":
    main()
