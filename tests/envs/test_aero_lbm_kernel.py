"""The compiled D2Q9 step (numba) against the numpy step, its reference: equal to 1e-10 (in fact
bit for bit) on the cylinder validation case and on the aero env's boundary set."""

from __future__ import annotations

import numpy as np
import pytest

from papergym.envs.aero import shapes
from papergym.envs.aero.flow import U_LATTICE, Grid, rasterize
from papergym.envs.aero.lbm import LBM, link_fractions
from papergym.envs.aero.validation import schaefer_turek

pytest.importorskip("numba")


def assert_same_run(a, b):
    for field in ("force", "force_window_means", "link_fx", "rho", "ux", "uy", "mass"):
        np.testing.assert_allclose(getattr(b, field), getattr(a, field), rtol=0, atol=1e-10,
                                   err_msg=field)


def test_compiled_step_equals_numpy_on_the_cylinder_validation_case():
    """Schafer & Turek 2D-1 at D = 10 cells (walls, velocity inlet, pressure outlet,
    interpolated bounce-back on the cylinder), 400 steps from a sin^2 start."""
    cd_numpy, numpy_run = schaefer_turek(10, 400, 0.1, ramp=0.25, backend="numpy")
    cd_numba, numba_run = schaefer_turek(10, 400, 0.1, ramp=0.25, backend="numba")
    assert abs(cd_numba - cd_numpy) <= 1e-10 and 1.0 < cd_numpy < 20.0
    assert_same_run(numpy_run, numba_run)


@pytest.mark.parametrize("options", [
    # DragFFD2D's: moving road, free-slip top, characteristic inlet, interpolated body
    dict(bottom="moving", top="free_slip", inlet="characteristic", interpolated=True),
    # the other branches: no-slip walls, zero-gradient outlet, halfway bounce-back
    dict(bottom="wall", top="wall", outlet="zero_gradient", interpolated=False),
])
def test_compiled_step_equals_numpy_on_a_body(options):
    grid = Grid(10, 400, 40.0)
    points = shapes.make_shape(0, np.random.default_rng(0))
    body = rasterize(points, grid)
    options = dict(options)
    q = link_fractions(body, points, *grid.nodes()) if options.pop("interpolated") else None
    runs = []
    for backend in ("numpy", "numba"):
        solver = LBM(body, tau=grid.tau, inflow=np.full(grid.shape[1], U_LATTICE),
                     wall_speed=U_LATTICE, wall_fraction=q, dtype=np.float32, backend=backend,
                     **options)
        runs.append((solver.run(300), solver.f))
    assert_same_run(runs[0][0], runs[1][0])
    np.testing.assert_allclose(runs[1][1], runs[0][1], rtol=0, atol=1e-10)
    assert np.abs(runs[0][0].force).max() > 0  # a body that feels the flow


def test_backend_choice():
    body = np.zeros((30, 12), bool)
    body[10:14, 4:8] = True
    assert LBM(body, tau=0.8, inflow=np.full(12, 0.05)).backend == "numba"
    assert LBM(body, tau=0.8, inflow=np.full(12, 0.05), backend="numpy").backend == "numpy"
    # the compiled step has no sponge: auto falls back, an explicit request is refused
    assert LBM(body, tau=0.8, inflow=np.full(12, 0.05), sponge=4).backend == "numpy"
    with pytest.raises(ValueError, match="sponge"):
        LBM(body, tau=0.8, inflow=np.full(12, 0.05), sponge=4, backend="numba")
    with pytest.raises(ValueError, match="backend must be"):
        LBM(body, tau=0.8, backend="cuda")
