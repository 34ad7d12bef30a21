"""The solver's validation case: Schafer & Turek's 2D-1 benchmark (flow past a cylinder in a
channel, Re 20), reference drag coefficient C_d in [5.57, 5.59].

Channel 2.2 x 0.41 with no-slip walls, cylinder of diameter D = 0.1 centred at (0.2, 0.2), a
parabolic inflow of peak U_max (mean 2 U_max / 3), Re = (2 U_max / 3) D / nu, C_d = 2 F_x /
(rho (2 U_max / 3)^2 D). On the lattice: D cells, the walls at y = 0 and y = 4.1 D (halfway
bounce-back, exact for a straight wall between two node rows), the cylinder by interpolated
bounce-back (or the halfway rule on its staircase), a velocity inlet and a fixed-pressure outlet.
Used by tests/envs/test_aero_lbm.py and benchmarks/perf/aero_cylinder_validation.py.

Reference: M. Schafer & S. Turek, "Benchmark computations of laminar flow around a cylinder",
Notes on Numerical Fluid Mechanics 52 (1996).
"""

from __future__ import annotations

import numpy as np

from papergym.envs.aero.lbm import LBM, FlowResult, link_fractions

REFERENCE_CD = (5.57, 5.59)


def schaefer_turek(diameter: int, steps: int, u_max: float, interpolated: bool = True, ramp: float = 0.0,
                   average: float = 0.2, dtype: type = np.float32, backend: str = "auto",
                   ) -> tuple[float, FlowResult]:
    """C_d of case 2D-1 at ``diameter`` cells, and the run's result (drift, fields); ``backend``
    picks the LBM step (numpy, numba, or auto: numba where installed)."""
    height, length = int(round(4.1 * diameter)), int(round(22 * diameter))
    xs, ys = np.arange(length) + 0.5, np.arange(height + 2) - 0.5
    profile = np.where((ys > 0) & (ys < height), 4 * u_max * ys * (height - ys) / height**2, 0.0)
    xx, yy = np.meshgrid(xs, ys, indexing="ij")
    centre = np.array([2.0 * diameter, 2.0 * diameter])
    body = (xx - centre[0]) ** 2 + (yy - centre[1]) ** 2 <= (diameter / 2) ** 2
    theta = np.linspace(0, 2 * np.pi, 720, endpoint=False)
    circle = centre + diameter / 2 * np.stack([np.cos(theta), np.sin(theta)], axis=1)
    q = link_fractions(body, circle, xs, ys) if interpolated else None
    u_mean = 2 * u_max / 3
    tau = 0.5 + 3 * u_mean * diameter / 20.0
    solver = LBM(body, tau=tau, inflow=profile, wall_fraction=q, dtype=dtype, backend=backend)
    result = solver.run(steps, ramp_fraction=ramp, average_fraction=average)
    return float(2 * result.force[0] / (u_mean**2 * diameter)), result
