"""Flow past one vehicle profile: the LBM set-up, the drag coefficient and the surrogate targets.

Domain [recon]: 4 L long and 1.5 L high (L = vehicle length in cells), body nose at 1 L from the
inlet; a road moving at the free-stream speed U (bounce-back with the wall-momentum term), a
free-slip top, a characteristic (non-reflecting) inlet at U and a fixed-pressure outlet.
Re = U L / nu with U = 0.1,
so tau = 1/2 + 3 U L / Re. The body is rasterized by cell centre in polygon.

Outputs, all time means over the last 20% of the steps (the first 80% are the stated transient):
C_d = 2 F_x / (rho_0 U^2 h_ref) with h_ref the base shape's frontal height in cells (a fixed
reference, so a reduction of C_d is a reduction of drag); the drift of F_x between the last two
10% windows (stationarity); the pressure coefficient C_p = (rho - 1)/3 / (U^2 / 2) at the K
boundary points (nearest fluid node); the drag build-up b(x) at 32 stations along the body
(b at the last station is C_d); the velocity field u / U sampled on a 32 x 12 grid over
[0.75 L, 3.75 L] x [0, 1.5 L].
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
from matplotlib.path import Path as PolygonPath
from scipy.spatial import cKDTree

from papergym.envs.aero.lbm import LBM, link_fractions

U_LATTICE = 0.1
DOMAIN_LENGTH, DOMAIN_HEIGHT, NOSE_AT = 4.0, 1.5, 1.0  # units of L
N_STATIONS, FIELD_SHAPE = 32, (32, 12)
RAMP_FRACTION, AVERAGE_FRACTION = 0.3, 0.2  # inflow ramp from rest; the averaged final share


@dataclass(frozen=True)
class Grid:
    """One LBM resolution: vehicle length ``length`` cells, ``steps`` steps at Reynolds ``reynolds``."""

    length: int = 24
    steps: int = 2000
    reynolds: float = 20.0
    dtype: str = "float32"
    boundary: str = "halfway"

    def __post_init__(self) -> None:
        if not isinstance(self.length, int) or self.length < 8:
            raise ValueError(f"grid length must be an integer >= 8 cells, got {self.length!r}")
        if not isinstance(self.steps, int) or self.steps < 100:
            raise ValueError(f"grid steps must be an integer >= 100, got {self.steps!r}")
        if self.tau < 0.55:
            raise ValueError(f"tau = {self.tau:.4f} is too close to 1/2 for BGK (>= 0.55 needed); raise "
                             "length or lower Re")
        if self.dtype not in ("float32", "float64"):
            raise ValueError(f"dtype must be float32 or float64, got {self.dtype!r}")
        if self.boundary not in ("halfway", "interpolated"):
            raise ValueError(f"boundary must be halfway or interpolated, got {self.boundary!r}")

    @property
    def tau(self) -> float:
        return 0.5 + 3.0 * U_LATTICE * self.length / self.reynolds

    @property
    def shape(self) -> tuple[int, int]:
        return int(round(DOMAIN_LENGTH * self.length)), int(round(DOMAIN_HEIGHT * self.length)) + 1

    def as_dict(self) -> dict:
        return asdict(self)

    def nodes(self) -> tuple[np.ndarray, np.ndarray]:
        """x and y of the lattice nodes in units of L (the nose at x = 0, the road at y = 0)."""
        nx, ny = self.shape
        return (np.arange(nx) + 0.5) / self.length - NOSE_AT, (np.arange(ny) - 0.5) / self.length


def rasterize(points: np.ndarray, grid: Grid) -> np.ndarray:
    """Solid mask (nx, ny): lattice cells whose centre lies inside the profile. Row 0 is the road."""
    nx, ny = grid.shape
    x, y = grid.nodes()
    xx, yy = np.meshgrid(x, y, indexing="ij")
    inside = PolygonPath(points).contains_points(np.stack([xx.ravel(), yy.ravel()], axis=1))
    mask = inside.reshape(nx, ny)
    mask[:, 0] = False
    return mask


def simulate(points: np.ndarray, h_ref: float, grid: Grid) -> dict[str, np.ndarray | float]:
    """Run the LBM around ``points`` (K x 2, units of L) and return C_d and the surrogate targets."""
    points = np.asarray(points, dtype=np.float64)
    nx, ny = grid.shape
    body = rasterize(points, grid)
    if not body.any():
        raise ValueError("the profile covers no lattice cell at this resolution")
    dtype = np.float32 if grid.dtype == "float32" else np.float64
    inflow = np.full(ny, U_LATTICE)
    q = link_fractions(body, points, *grid.nodes()) if grid.boundary == "interpolated" else None
    solver = LBM(body, tau=grid.tau, inflow=inflow, bottom="moving", top="free_slip",
                 wall_speed=U_LATTICE, inlet="characteristic", wall_fraction=q, dtype=dtype)
    result = solver.run(grid.steps, average_fraction=AVERAGE_FRACTION, ramp_fraction=RAMP_FRACTION)
    if not np.all(np.isfinite(result.force)):
        raise FloatingPointError(f"the LBM diverged (tau = {grid.tau:.3f}, L = {grid.length}); "
                                 "raise the resolution or lower the Reynolds number")
    dynamic = 0.5 * U_LATTICE**2
    h_cells = h_ref * grid.length
    cd = result.force[0] / (dynamic * h_cells)
    # drag build-up b(x): cumulative link forces in x, at 32 stations over the links' x range
    stations = np.linspace(result.link_x.min(), result.link_x.max(), N_STATIONS)
    order = np.argsort(result.link_x)
    cumulative = np.cumsum(result.link_fx[order])
    counts = np.searchsorted(result.link_x[order], stations, side="right")
    build_up = np.where(counts > 0, cumulative[np.maximum(counts - 1, 0)], 0.0) / (dynamic * h_cells)
    # C_p at the boundary points: the nearest fluid node's time-mean density
    xs, ys = grid.nodes()
    fluid = np.argwhere(solver.fluid)
    tree = cKDTree(np.stack([xs[fluid[:, 0]], ys[fluid[:, 1]]], axis=1))
    _, nearest = tree.query(points)
    node = fluid[nearest]
    cp = (result.rho[node[:, 0], node[:, 1]] - 1.0) / 3.0 / dynamic
    # u / U on a fixed 32 x 12 grid in units of L (nearest node), resolution independent
    gx = np.linspace(-0.25, DOMAIN_LENGTH - NOSE_AT - 0.25, FIELD_SHAPE[0])
    gy = np.linspace(0.0625, DOMAIN_HEIGHT - 0.0625, FIELD_SHAPE[1])
    ix = np.clip(np.round((gx + NOSE_AT) * grid.length - 0.5).astype(int), 0, nx - 1)
    iy = np.clip(np.round(gy * grid.length + 0.5).astype(int), 0, ny - 1)
    field = np.stack([result.ux[np.ix_(ix, iy)], result.uy[np.ix_(ix, iy)]]) / U_LATTICE
    return {"cd": float(cd), "drift": result.drift(), "cp": cp.astype(np.float32),
            "build_up": build_up.astype(np.float32), "field": field.astype(np.float32),
            "cl": float(result.force[1] / (dynamic * h_cells)),
            "mass_change": float(result.mass[-1] / result.mass[len(result.mass) // 2] - 1.0)}
