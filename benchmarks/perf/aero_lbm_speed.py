"""Lattice updates per second of the D2Q9 solver against this machine's memory bandwidth.

For each grid (the smoke, standard-eval and standard-verification resolutions) the solver runs
``--steps`` steps around a generated body (interpolated bounce-back, as ``DragFFD2D-v1``); the
reference is a numpy copy of the 9 x nx x ny population array (read + write), the least a step
must move, measured in the same run. The ratio solver / copy says how far the step is from the
bandwidth bound (a BGK step in numpy moves the populations several times, so expect well below
1). Best of ``--repeats``.

    .venv/bin/python benchmarks/perf/aero_lbm_speed.py [--steps 400] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from papergym.envs.aero import shapes
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
    for name, grid in GRIDS.items():
        nx, ny = grid.shape
        body = rasterize(points, grid)
        solver = LBM(body, tau=grid.tau, inflow=np.full(ny, U_LATTICE), bottom="moving", top="free_slip",
                     wall_speed=U_LATTICE, inlet="characteristic", dtype=np.float32,
                     wall_fraction=link_fractions(body, points, *grid.nodes()))
        lbm, copy = [], []
        src = solver.f.copy()
        dst = np.empty_like(src)
        for _ in range(args.repeats):
            start = time.perf_counter()
            for _ in range(args.steps):
                solver.step()
            lbm.append(time.perf_counter() - start)
            start = time.perf_counter()
            for _ in range(args.steps):
                np.copyto(dst, src)
            copy.append(time.perf_counter() - start)
        nodes = nx * ny * args.steps
        rate, bound = nodes / min(lbm), nodes / min(copy)
        print(f"{name:>22}: {nx} x {ny}, {rate / 1e6:6.2f} M lattice updates/s "
              f"({1e6 / rate:.3f} us per node-step), copy {bound / 1e6:7.1f} M nodes/s "
              f"({2 * 9 * 4 * bound / 1e9:.1f} GB/s), ratio {rate / bound:.3f}; "
              f"one call of {grid.steps} steps = {grid.steps * nx * ny / rate:.2f} s")


if __name__ == "__main__":
    main()
