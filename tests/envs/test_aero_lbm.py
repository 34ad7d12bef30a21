"""The D2Q9 solver against exact identities, conservation laws and known flows."""

from __future__ import annotations

import numpy as np
import pytest

from papergym.envs.aero import shapes
from papergym.envs.aero.flow import Grid, simulate
from papergym.envs.aero.lbm import LBM, OPPOSITE, C, W, equilibrium, link_fractions, moments
from papergym.envs.aero.validation import schaefer_turek


def test_lattice_weights_and_isotropy_are_exact():
    assert W.sum() == pytest.approx(1.0, abs=1e-15)
    np.testing.assert_allclose(W @ C, 0.0, atol=1e-15)
    second = np.einsum("i,ia,ib->ab", W, C, C)
    np.testing.assert_allclose(second, np.eye(2) / 3, atol=1e-15)
    np.testing.assert_array_equal(C[OPPOSITE], -C)


def test_equilibrium_moments_are_density_and_momentum():
    rng = np.random.default_rng(0)
    rho = 1 + 0.05 * rng.standard_normal((7, 5))
    ux, uy = 0.08 * rng.standard_normal((2, 7, 5))
    rho2, ux2, uy2 = moments(equilibrium(rho, ux, uy))
    np.testing.assert_allclose(rho2, rho, atol=1e-13)
    np.testing.assert_allclose(ux2, ux, atol=1e-13)
    np.testing.assert_allclose(uy2, uy, atol=1e-13)


def test_mass_is_conserved_to_round_off_in_periodic_and_closed_boxes():
    rng = np.random.default_rng(1)
    periodic = LBM(np.zeros((24, 16), bool), tau=0.7, top="periodic", bottom="periodic")
    velocity = 0.02 * rng.standard_normal((2, 24, 16))
    periodic.f = equilibrium(1 + 0.01 * rng.standard_normal((24, 16)), *velocity)
    box = np.zeros((24, 16), bool)
    box[0, :] = box[-1, :] = True
    closed = LBM(box, tau=0.6, top="wall", bottom="wall")
    fluid = closed.fluid
    closed.f = equilibrium(np.where(fluid, 1 + 0.01 * rng.standard_normal((24, 16)), 1.0),
                           np.where(fluid, 0.02, 0.0), np.zeros((24, 16))) * fluid
    for solver in (periodic, closed):
        m0 = solver.mass()
        for _ in range(1000):
            solver.step()
        assert abs(solver.mass() - m0) / m0 <= 1e-12


def test_quiescent_fluid_exerts_no_force_on_a_body():
    body = np.zeros((30, 20), bool)
    body[10:16, 6:12] = True
    solver = LBM(body, tau=0.8, top="wall", bottom="wall")
    forces = np.array([solver.step() for _ in range(200)])
    assert np.abs(forces).max() <= 1e-12


def test_moving_ground_keeps_a_uniform_stream_uniform():
    u = 0.1
    solver = LBM(np.zeros((30, 12), bool), tau=0.6, inflow=np.full(12, u), bottom="moving", top="free_slip",
                 wall_speed=u, inlet="characteristic")
    for _ in range(2000):
        solver.step()
    _, ux, uy = solver.fields()
    assert np.abs(ux[:, 1:] - u).max() <= 1e-6 and np.abs(uy[:, 1:]).max() <= 1e-6


def test_poiseuille_profile_is_preserved_at_mid_length():
    height, u_max = 20, 0.05
    y = np.arange(height + 2) - 0.5  # halfway bounce-back: the walls sit at y = 0 and y = height
    profile = np.where((y > 0) & (y < height), 4 * u_max * y * (height - y) / height**2, 0.0)
    solver = LBM(np.zeros((60, height + 2), bool), tau=0.8, inflow=profile)
    result = solver.run(3000)
    mid = result.ux[30, 1:-1]
    assert np.linalg.norm(mid - profile[1:-1]) / np.linalg.norm(profile[1:-1]) <= 0.02


def test_link_fractions_match_the_analytic_circle_crossing():
    # oracle: the link x_f + t c_i meets the circle |x - m| = r at the smaller root of a quadratic
    centre, radius = np.array([10.3, 9.7]), 4.2
    xs, ys = np.arange(21) + 0.5, np.arange(20) - 0.5
    xx, yy = np.meshgrid(xs, ys, indexing="ij")
    solid = (xx - centre[0]) ** 2 + (yy - centre[1]) ** 2 <= radius**2
    theta = np.linspace(0, 2 * np.pi, 4000, endpoint=False)
    circle = centre + radius * np.stack([np.cos(theta), np.sin(theta)], axis=1)
    q = link_fractions(solid, circle, xs, ys)
    links = 0
    for i in range(1, 9):
        for x, y in zip(*np.nonzero(~solid)):
            nx_, ny_ = x + C[i, 0], y + C[i, 1]
            if not (0 <= nx_ < 21 and 0 <= ny_ < 20 and solid[nx_, ny_]):
                assert np.isnan(q[i, x, y])
                continue
            p, d = np.array([xs[x], ys[y]]) - centre, C[i].astype(float)
            a, b, c = d @ d, 2 * p @ d, p @ p - radius**2
            t = (-b - np.sqrt(b * b - 4 * a * c)) / (2 * a)
            assert q[i, x, y] == pytest.approx(t, abs=2e-3)
            links += 1
    assert links > 50


def test_interpolated_bounce_back_at_q_one_half_is_the_halfway_rule():
    rng = np.random.default_rng(5)
    body = np.zeros((30, 16), bool)
    body[10:17, 5:11] = True
    inflow = np.full(16, 0.05)
    a = LBM(body, tau=0.7, inflow=inflow, top="free_slip", bottom="free_slip")
    q = np.full((9, 30, 16), 0.5)
    b = LBM(body, tau=0.7, inflow=inflow, top="free_slip", bottom="free_slip", wall_fraction=q)
    a.f = a.f + 1e-3 * rng.random(a.f.shape) * a.fluid
    b.f = a.f.copy()
    fa = [a.step() for _ in range(100)]
    fb = [b.step() for _ in range(100)]
    np.testing.assert_allclose(b.f, a.f, atol=1e-13)
    np.testing.assert_allclose(fb, fa, atol=1e-12)


@pytest.mark.parametrize("wall", [20.3, 19.8])  # q = 0.8 and q = 0.3: both branches of the rule
def test_interpolated_wall_between_nodes_holds_the_poiseuille_profile(wall):
    # a channel whose top wall (a body) lies between two node rows: the analytic profile for that
    # height is kept at mid-length by interpolated bounce-back and lost by the halfway rule, which
    # puts the wall half a cell from the last fluid row
    nx, ny, u_max = 60, 24, 0.05
    xs, ys = np.arange(nx) + 0.5, np.arange(ny) - 0.5
    body = np.broadcast_to(ys > wall, (nx, ny)).copy()
    profile = np.where((ys > 0) & (ys < wall), 4 * u_max * ys * (wall - ys) / wall**2, 0.0)
    slab = np.array([[-10, wall], [nx + 10, wall], [nx + 10, ny + 5], [-10, ny + 5]], float)
    errors = {}
    for name, q in (("halfway", None), ("interpolated", link_fractions(body, slab, xs, ys))):
        solver = LBM(body, tau=0.8, inflow=profile, wall_fraction=q)
        mid = solver.run(3000).ux[30]
        fluid = solver.fluid[30]
        errors[name] = np.linalg.norm(mid[fluid] - profile[fluid]) / np.linalg.norm(profile[fluid])
    assert errors["interpolated"] <= 0.01 and errors["halfway"] >= 1.5 * errors["interpolated"], errors


def test_schaefer_turek_cylinder_drag_at_ten_cells_and_stationary():
    # reference C_d in [5.57, 5.59]. At D = 10 cells and U_max = 0.075 interpolated bounce-back
    # gives 5.85 (+4.8%; the halfway rule gives 6.02, +7.8%); the spec's tolerance at D = 10 is 8%.
    # benchmarks/perf/aero_cylinder_validation.py runs D = 20 at a lower Mach number: 5.58.
    cd, result = schaefer_turek(10, 5000, u_max=0.075)
    assert abs(cd / 5.58 - 1) <= 0.055, cd
    assert result.drift() < 0.005


def test_vehicle_flow_is_stationary_and_conserves_mass_at_the_standard_eval_grid():
    points = shapes.make_shape(0, np.random.default_rng(3))
    out = simulate(points, float(shapes.frontal_height(points)), Grid(length=20, steps=1700, reynolds=100.0))
    assert out["drift"] < 0.02            # mean C_d of the last two 10% windows within 2%
    assert abs(out["mass_change"]) < 2e-3  # the fixed-pressure outlet: no mass build-up
    assert 1.0 < out["cd"] < 10.0


def test_build_up_profile_ends_at_the_drag_coefficient():
    points = shapes.make_shape(2, np.random.default_rng(4))
    out = simulate(points, float(shapes.frontal_height(points)), Grid(length=10, steps=300, dtype="float64"))
    assert out["build_up"][-1] == pytest.approx(out["cd"], abs=1e-5)  # stored in float32
    assert out["cp"].shape == (shapes.K,) and out["field"].shape == (2, 32, 12)


def test_bad_solver_arguments_are_named():
    with pytest.raises(ValueError, match="tau"):
        LBM(np.zeros((8, 8), bool), tau=0.5)
    with pytest.raises(ValueError, match="outlet"):
        LBM(np.zeros((8, 8), bool), tau=0.6, inflow=np.zeros(8), outlet="open")
    with pytest.raises(ValueError, match="too close"):
        Grid(length=8, steps=200, reynolds=1000.0)
