"""The D2Q9 solver on Schafer & Turek's 2D-1 cylinder (Re 20), reference C_d in [5.57, 5.59].

Runs (about 3 CPU-minutes in all):
- D = 10 cells at U_max = 0.075 with the halfway rule and with interpolated bounce-back (the unit
  test's case);
- interpolated bounce-back at U_max = 0.0375 (Mach 0.065) for D = 10 and D = 20 cells (each
  ``--diameters`` value), averaged over the last half of the steps (the channel's acoustic mode
  decays slowly at tau close to 1/2).
Then two extrapolations: Richardson in the resolution (second order: C(inf) = C(2D) + (C(2D) -
C(D)) / 3) from the two finest runs, and the compressibility error, which scales as U_max^2,
estimated from the two D = 10 interpolated runs and removed. A value inside the band after both
says the solver converges to the reference; the unextrapolated D = 20 value is the one to quote
for a single run.

    .venv/bin/python benchmarks/perf/aero_cylinder_validation.py [--diameters 10 20]
"""

from __future__ import annotations

import argparse
import time

from papergym.envs.aero.validation import REFERENCE_CD, schaefer_turek

MID = sum(REFERENCE_CD) / 2


def report(label: str, cd: float, extra: str = "") -> None:
    inside = REFERENCE_CD[0] <= cd <= REFERENCE_CD[1]
    print(f"{label}: C_d = {cd:.4f} ({100 * (cd / MID - 1):+.2f}% of {MID}; "
          f"{'inside' if inside else 'outside'} [{REFERENCE_CD[0]}, {REFERENCE_CD[1]}]){extra}", flush=True)


def run(diameter: int, u_max: float, interpolated: bool) -> float:
    steps, ramp, average = (5000, 0.0, 0.2) if u_max >= 0.075 else (800 * diameter, 0.3, 0.5)
    start = time.perf_counter()
    cd, result = schaefer_turek(diameter, steps, u_max, interpolated, ramp, average)
    rule = "interpolated" if interpolated else "halfway"
    report(f"D = {diameter:3d} cells, U_max = {u_max:.4f}, {rule:>12}", cd,
           f", drift {100 * result.drift():.2f}%, {steps} steps, {time.perf_counter() - start:.0f} s")
    return cd


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--diameters", type=int, nargs="+", default=[10, 20])
    args = parser.parse_args()
    run(10, 0.075, False)
    fast = run(10, 0.075, True)
    low = {d: run(d, 0.0375, True) for d in sorted(set(args.diameters) | {10})}
    mach = (fast - low[10]) / (0.075**2 - 0.0375**2)  # C_d = C_0 + k U_max^2 at D = 10
    fine = sorted(low)
    if len(fine) >= 2 and fine[-1] == 2 * fine[-2]:
        richardson = low[fine[-1]] + (low[fine[-1]] - low[fine[-2]]) / 3
        report(f"Richardson D -> inf from D = {fine[-2]}, {fine[-1]} (U_max = 0.0375)", richardson)
        report("  and the compressibility error (k U_max^2, k from D = 10) removed",
               richardson - mach * 0.0375**2, f"; k = {mach:.1f}")


if __name__ == "__main__":
    main()
