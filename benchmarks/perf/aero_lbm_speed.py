"""Lattice updates per second of the D2Q9 solver against this machine's memory bandwidth.

For each grid (the smoke, standard-eval and standard-verification resolutions) the solver runs
``--steps`` steps around a generated body (interpolated bounce-back, as ``DragFFD2D-v1``); the
reference is a numpy copy of the 9 x nx x ny population array (read + write), the least a step
must move, measured in the same run. The ratio solver / copy says how far the step is from the
bandwidth bound (a BGK step in numpy moves the populations several times, so expect well below
1). Both steps are timed when numba is installed: the numpy one (the reference) and the
compiled one (envs/aero/lbm_kernel.py), which must agree bit for bit; the issue's target for
the compiled step is >= 50 M lattice updates/s on one core. Best of ``--repeats``, in the
process's CPU time (other jobs on a shared machine do not inflate it).

    .venv/bin/python benchmarks/perf/aero_lbm_speed.py [--steps 400] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from papergym.envs.aero import lbm_kernel, shapes
from papergym.envs.aero.flow import U_LATTICE, Grid, rasterize
from papergym.envs.aero.lbm import LBM, link_fractions

GRIDS = {"smoke": Grid(10, 400, 40.0), "standard eval": Grid(20, 1700, 100.0),
         "standard verification": Grid(32, 2720, 100.0)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=400)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    points = shapes.make_shape(0, np.random.default_rng(0))
    backends = ["numpy"] + (["numba"] if lbm_kernel.AVAILABLE else [])
    if not lbm_kernel.AVAILABLE:
        print("numba is not installed (pip install 'papergym[fast]'): the numpy step only")
    for name, grid in GRIDS.items():
        nx, ny = grid.shape
        body = rasterize(points, grid)
        solvers = {b: LBM(body, tau=grid.tau, inflow=np.full(ny, U_LATTICE), bottom="moving",
                          top="free_slip", wall_speed=U_LATTICE, inlet="characteristic",
                          dtype=np.float32, wall_fraction=link_fractions(body, points, *grid.nodes()),
                          backend=b)
                   for b in backends}
        for solver in solvers.values():
            solver.step()  # compiles the kernel (or loads it from numba's cache) before timing
        times = {b: [] for b in backends}
        copy = []
        src = solvers["numpy"].f.copy()
        dst = np.empty_like(src)
        for _ in range(args.repeats):
            for backend, solver in solvers.items():
                start = time.process_time()
                for _ in range(args.steps):
                    solver.step()
                times[backend].append(time.process_time() - start)
            start = time.process_time()
            for _ in range(args.steps):
                np.copyto(dst, src)
            copy.append(time.process_time() - start)
        nodes = nx * ny * args.steps
        bound = nodes / min(copy)
        print(f"{name}: {nx} x {ny}, copy {bound / 1e6:.1f} M nodes/s "
              f"({2 * 9 * 4 * bound / 1e9:.1f} GB/s); one call = {grid.steps} steps")
        for backend in backends:
            rate = nodes / min(times[backend])
            print(f"  {backend:>5}: {rate / 1e6:7.2f} M lattice updates/s "
                  f"({1e6 / rate:.4f} us per node-step), ratio to copy {rate / bound:.3f}, "
                  f"one call {grid.steps * nx * ny / rate:.3f} s")
        if len(backends) == 2:
            print(f"  numba / numpy: {min(times['numpy']) / min(times['numba']):.1f}x; "
                  f"the two states after the run differ by "
                  f"{np.abs(solvers['numpy'].f - solvers['numba'].f).max():.1e}")

if __name__ == "__main__":
    main()
