"""Seconds per iteration of stochastic score matching against d, and of exact score matching.

SSM: one minibatch gradient (batch 32, uniform phases) at d in {100, 200, 400, 800}; exact score
matching: one solve on 2,000 samples at d in {10, 20, 30, 40}. Times are process CPU time
(``time.process_time``, one BLAS thread), best of the repeats, so that other processes on a shared
machine do not distort the ratios. Prints, per d, the time, its ratio to the smallest d, that ratio
divided by (d/d_0)^2 ("vs d^2"; about 1 when the cost grows as d^2), and the least-squares log-log
slope (TGScaling-v0 fits the same slope on wall-clock time inside a trial).
Run: ``.venv/bin/python benchmarks/perf/torus_ssm_scaling.py [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from threadpoolctl import threadpool_limits

from papergym.agents.torus.exact_sm import exact_sm
from papergym.agents.torus.ssm import Adam, penalty_grad, ssm_loss_grad
from papergym.envs.torus.fit import loglog_slope


def ssm_seconds(d: int, batch: int, iterations: int, repeats: int) -> float:
    rng = np.random.default_rng(d)
    x = rng.uniform(0, 2 * np.pi, (iterations, batch, d))
    best = np.inf
    for _ in range(repeats):
        phi, opt = np.full((d, d, 2), 1e-3), Adam((d, d, 2), 1e-2)
        start = time.process_time()
        for xb in x:
            _, grad = ssm_loss_grad(phi, xb)
            phi = opt.step(phi, grad + penalty_grad(phi, 0.01, 0.0), 1e-2)
        best = min(best, (time.process_time() - start) / iterations)
    return best


def exact_seconds(d: int, n: int, repeats: int) -> float:
    x = np.random.default_rng(d).uniform(0, 2 * np.pi, (n, d))
    best = np.inf
    for _ in range(repeats):
        start = time.process_time()
        exact_sm(x)
        best = min(best, time.process_time() - start)
    return best


def report(name: str, dims: list[int], seconds: list[float]) -> None:
    print(f"{name}: d, seconds, ratio to d={dims[0]}, ratio / (d/d0)^2")
    for d, s in zip(dims, seconds):
        ratio = s / seconds[0]
        print(f"  {d:5d}  {s:.5f}  {ratio:8.2f}  {ratio / (d / dims[0]) ** 2:6.2f}")
    print(f"  log-log slope {loglog_slope(dims, seconds):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=5)
    args = parser.parse_args()
    with threadpool_limits(1):
        dims = [100, 200, 400, 800]
        report("SSM per iteration (batch 32)", dims,
               [ssm_seconds(d, 32, args.iterations, args.repeats) for d in dims])
        exact_dims = [10, 20, 30, 40]
        report("exact SM per solve (n = 2,000)", exact_dims,
               [exact_seconds(d, 2000, args.repeats) for d in exact_dims])


if __name__ == "__main__":
    main()
