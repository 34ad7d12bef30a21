"""A vectorized numpy D2Q9 lattice-Boltzmann solver (BGK) for 2-D flow past a body.

Populations ``f[i, x, y]`` on an ``nx x ny`` lattice, lattice units (dx = dt = 1, c_s^2 = 1/3).
One step: collide (BGK, f* = f - (f - f^eq)/tau, nu = (tau - 1/2)/3), stream (pull along c_i),
then the boundaries, all as whole-array operations:

- body and walls: halfway bounce-back, f_ibar(x_f, t+1) = f_i*(x_f, t) on every fluid->solid link;
  a wall moving at u_w (the road) adds the momentum term -6 w_i rho_0 (c_i . u_w);
- optionally, on the body: linearly interpolated bounce-back (Bouzidi, Firdaouss & Lallemand
  2001) from the fraction q in (0, 1] of each link that lies in the fluid,
  q < 1/2:  f_ibar(x_f, t+1) = 2q f_i*(x_f) + (1 - 2q) f_i*(x_f - c_i),
  q >= 1/2: f_ibar(x_f, t+1) = f_i*(x_f) / (2q) + (1 - 1/(2q)) f_ibar*(x_f),
  which puts the wall where the geometry has it instead of half way between two nodes (the
  staircase error of a curved body drops from first to second order); a link whose second
  node x_f - c_i is not fluid falls back to the halfway rule. q = 1/2 is the halfway rule;
- inlet (x = 0): equilibrium at the prescribed velocity profile, the density taken from the first
  interior column; or ("characteristic") the incoming Riemann invariant u + c_s (rho - 1) fixed,
  which lets acoustic waves leave instead of ringing between inlet and outlet;
- outlet (x = nx-1): equilibrium at rho = 1 with the velocity copied from the upstream column (a
  fixed-pressure outlet; a zero-gradient outlet is kept only as an option for the test that shows
  its mass drift);
- top: no-slip wall, free-slip (specular) or periodic.

Force by momentum exchange on a stationary body (Mei, Yu, Shyy & Luo 2002): F = sum over
fluid->solid links (x_f, i) of c_i [f_i*(x_f, t) + f_ibar(x_f, t+1)], which is 2 c_i f_i*(x_f) with
halfway bounce-back. ``run`` returns the time average over the last ``average_fraction`` of the steps
(after the stated transient), the means of the last two 10% windows (the stationarity check),
the streamwise build-up of the drag, and the time-mean density and velocity fields.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from papergym.envs.aero import lbm_kernel

C = np.array([(0, 0), (1, 0), (0, 1), (-1, 0), (0, -1), (1, 1), (-1, 1), (-1, -1), (1, -1)], dtype=np.int64)
W = np.array([4 / 9] + [1 / 9] * 4 + [1 / 36] * 4)
OPPOSITE = np.array([0, 3, 4, 1, 2, 7, 8, 5, 6])
# specular reflection at a horizontal wall: (cx, cy) -> (cx, -cy)
MIRROR_Y = np.array([0, 1, 4, 3, 2, 8, 7, 6, 5])


def equilibrium(rho: np.ndarray, ux: np.ndarray, uy: np.ndarray) -> np.ndarray:
    """f^eq_i = w_i rho [1 + 3 c_i.u + 4.5 (c_i.u)^2 - 1.5 u^2], stacked over i (axis 0)."""
    dtype = np.result_type(rho, ux, uy)
    cu = C[:, 0].reshape(-1, *([1] * ux.ndim)) * ux + C[:, 1].reshape(-1, *([1] * uy.ndim)) * uy
    usq = ux * ux + uy * uy
    w = W.astype(dtype).reshape(-1, *([1] * ux.ndim))
    return (w * rho * (1.0 + 3.0 * cu + 4.5 * cu * cu - 1.5 * usq)).astype(dtype)


def moments(f: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Density and velocity: rho = sum f_i, rho u = sum c_i f_i."""
    rho = f.sum(axis=0)
    ux = (f[1] + f[5] + f[8] - f[3] - f[6] - f[7]) / rho
    uy = (f[2] + f[5] + f[6] - f[4] - f[7] - f[8]) / rho
    return rho, ux, uy


def link_fractions(solid: np.ndarray, polygon: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """q[i, x, y]: the fraction of the link from fluid node (x, y) along c_i that lies before the
    first crossing of the closed ``polygon`` (its vertices in the nodes' coordinates: node (x, y)
    sits at (xs[x], ys[y]), equal spacing in x and y), for every link into ``solid``; NaN elsewhere.
    A link that meets no edge (the polygon passes through its solid end node) gets q = 1."""
    solid = np.asarray(solid, dtype=bool)
    nx, ny = solid.shape
    q = np.full((9, nx, ny), np.nan)
    a = np.asarray(polygon, dtype=np.float64)
    edge = np.roll(a, -1, axis=0) - a
    spacing = np.array([xs[1] - xs[0], ys[1] - ys[0]])
    for i in range(1, 9):
        ahead = np.zeros_like(solid)
        x0, x1 = max(0, -C[i, 0]), nx - max(0, C[i, 0])
        y0, y1 = max(0, -C[i, 1]), ny - max(0, C[i, 1])
        ahead[x0:x1, y0:y1] = solid[x0 + C[i, 0]:x1 + C[i, 0], y0 + C[i, 1]:y1 + C[i, 1]]
        fx, fy = np.nonzero(ahead & ~solid)
        if not fx.size:
            continue
        p = np.stack([xs[fx], ys[fy]], axis=1)            # (n, 2) fluid ends
        d = C[i] * spacing                                # the link vector
        ap = a[None, :, :] - p[:, None, :]                # (n, E, 2)
        denom = d[0] * edge[:, 1] - d[1] * edge[:, 0]     # cross(d, e), (E,)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (ap[..., 0] * edge[:, 1] - ap[..., 1] * edge[:, 0]) / denom
            s = (ap[..., 0] * d[1] - ap[..., 1] * d[0]) / denom
        hit = (denom != 0) & (s >= 0) & (s <= 1) & (t > 0) & (t <= 1)
        q[i, fx, fy] = np.where(hit, t, np.inf).min(axis=1).clip(max=1.0)
    return q


@dataclass
class FlowResult:
    """Time means over the averaging window (steps ``start..steps``)."""

    force: np.ndarray          # (2,) mean force on the body
    force_window_means: np.ndarray  # (2,) mean F_x over the last two 10% windows
    link_fx: np.ndarray        # (n_links,) mean F_x of each body link
    link_x: np.ndarray         # (n_links,) x of each link's fluid node
    rho: np.ndarray            # (nx, ny) time-mean density
    ux: np.ndarray
    uy: np.ndarray
    mass: np.ndarray           # total fluid mass at each recorded step (every 10 steps)
    start: int                 # first averaged step

    def drift(self) -> float:
        """Relative change of the mean F_x between the last two 10% windows."""
        a, b = self.force_window_means
        return float(abs(b - a) / max(abs(b), 1e-30))


class LBM:
    """A D2Q9 BGK channel solver.

    ``solid``: (nx, ny) bool body mask (stationary). ``bottom``/``top``: "wall" (no-slip),
    "moving" (a wall at ``wall_speed`` along x), "free_slip" or "periodic"; the walls are the
    rows y = 0 and y = ny-1 (halfway bounce-back puts the wall half a cell inside). ``inflow``:
    the inlet velocity per row (ny,), or ``None`` for a periodic x-direction. ``outlet``:
    "pressure" (equilibrium at rho = 1, u from upstream) or "zero_gradient" (copy the upstream
    populations; drifts, kept for the test that shows it). ``wall_fraction``: (9, nx, ny), the
    fraction q of the link from fluid node x along c_i that lies before the body's surface, read
    on the body links only; ``None`` (halfway bounce-back everywhere) or from
    :func:`link_fractions`. ``backend``: "numpy" (this module's step, the reference), "numba"
    (the same arithmetic compiled, :mod:`papergym.envs.aero.lbm_kernel`, equal to the bit;
    5-7x faster on the standard grids) or "auto" (numba where installed, ``papergym[fast]``,
    and no sponge is used).
    """

    def __init__(self, solid: np.ndarray, tau: float, inflow: np.ndarray | None = None,
                 bottom: str = "wall", top: str = "wall", wall_speed: float = 0.0,
                 outlet: str = "pressure", inlet: str = "velocity", sponge: int = 0,
                 wall_fraction: np.ndarray | None = None, dtype: type = np.float64,
                 backend: str = "auto") -> None:
        solid = np.asarray(solid, dtype=bool)
        if solid.ndim != 2:
            raise ValueError(f"solid must be a 2-D mask, got shape {solid.shape}")
        if not tau > 0.5:
            raise ValueError(f"tau must exceed 1/2 (nu = (tau - 1/2)/3 > 0), got {tau!r}")
        for name, value in (("bottom", bottom), ("top", top)):
            if value not in ("wall", "moving", "free_slip", "periodic"):
                raise ValueError(f"{name} must be wall, moving, free_slip or periodic, got {value!r}")
        if inlet not in ("velocity", "characteristic"):
            raise ValueError(f"inlet must be velocity or characteristic, got {inlet!r}")
        self.inlet = inlet
        if outlet not in ("pressure", "zero_gradient"):
            raise ValueError(f"outlet must be pressure or zero_gradient, got {outlet!r}")
        self.nx, self.ny = solid.shape
        if not isinstance(sponge, int) or not 0 <= sponge < self.nx // 2:
            raise ValueError(f"sponge must be an integer in [0, nx/2), got {sponge!r}")
        # sponge: over the last columns the density relaxes towards 1 at a strength rising
        # quadratically to 0.1, which absorbs the acoustic waves that the velocity inlet and the
        # pressure outlet would otherwise reflect into a standing mode
        self.sponge = sponge
        ramp = (np.arange(1, sponge + 1) / max(sponge, 1)) ** 2
        self._sigma = (0.1 * ramp).astype(dtype)[:, None] if sponge else None
        self.inflow_scale = 1.0
        self.tau, self.dtype = float(tau), dtype
        self.body = solid.copy()
        self.bottom, self.top, self.wall_speed, self.outlet = bottom, top, float(wall_speed), outlet
        # walls are solid rows; free-slip and periodic rows stay fluid
        wall = np.zeros_like(solid)
        self.ground = np.zeros_like(solid)
        if bottom in ("wall", "moving"):
            wall[:, 0] = True
            if bottom == "moving":
                self.ground[:, 0] = True
        if top in ("wall", "moving"):
            wall[:, -1] = True
            if top == "moving":
                self.ground[:, -1] = True
        self.solid = solid | wall
        self.fluid = ~self.solid
        self.inflow = None if inflow is None else np.asarray(inflow, dtype=dtype).reshape(self.ny)
        # fluid->solid links per direction: fluid x with x + c_i solid
        self.links = []
        self.body_links = []
        self.ground_links = []
        for i in range(1, 9):
            ahead = np.roll(self.solid, shift=(-C[i, 0], -C[i, 1]), axis=(0, 1))
            link = self.fluid & ahead
            if self.inflow is not None:
                # links that would wrap around in x are not links
                if C[i, 0] == 1:
                    link[-1, :] = False
                if C[i, 0] == -1:
                    link[0, :] = False
            if self.top != "periodic" and C[i, 1] == 1:
                link[:, -1] = False
            if self.bottom != "periodic" and C[i, 1] == -1:
                link[:, 0] = False
            body_ahead = np.roll(self.body, shift=(-C[i, 0], -C[i, 1]), axis=(0, 1)) & link
            ground_ahead = np.roll(self.ground, shift=(-C[i, 0], -C[i, 1]), axis=(0, 1)) & link
            self.links.append(link)
            self.body_links.append(body_ahead)
            self.ground_links.append(ground_ahead)
        # link lists for the force: (direction, x, y) of every body link
        self.link_dir = np.concatenate([np.full(int(m.sum()), i + 1) for i, m in enumerate(self.body_links)])
        idx = [np.nonzero(m) for m in self.body_links]
        self.link_xs = np.concatenate([ix for ix, _ in idx]) if idx else np.zeros(0, int)
        self.link_ys = np.concatenate([iy for _, iy in idx]) if idx else np.zeros(0, int)
        self._prepare_indices()
        self._prepare_interpolation(wall_fraction)
        self.f = self.initial()
        self.backend = self._choose_backend(backend)
        if self.backend == "numba":
            self._prepare_kernel()

    def initial(self, rho: np.ndarray | None = None, ux: np.ndarray | None = None,
                uy: np.ndarray | None = None) -> np.ndarray:
        """Equilibrium at rest (or at the inflow profile) in the fluid, zero in solids."""
        shape = (self.nx, self.ny)
        rho = np.ones(shape, self.dtype) if rho is None else np.asarray(rho, self.dtype)
        if ux is None:
            ux = np.zeros(shape, self.dtype)
            if self.inflow is not None:
                ux = np.broadcast_to(self.inflow[None, :], shape).astype(self.dtype)
        uy = np.zeros(shape, self.dtype) if uy is None else np.asarray(uy, self.dtype)
        f = equilibrium(rho, np.where(self.fluid, ux, 0), np.where(self.fluid, uy, 0))
        f[:, self.solid] = 0
        return f

    def mass(self) -> float:
        return float(self.f[:, self.fluid].sum(dtype=np.float64))

    def _prepare_indices(self) -> None:
        """Flat indices of the links and rows the step writes, computed once."""
        flat = lambda mask: np.flatnonzero(mask.ravel())  # noqa: E731
        self._solid_idx = flat(self.solid)
        self._link_idx = [flat(m) for m in self.links]
        self._ground_idx = [flat(m) for m in self.ground_links]
        self._link_flat = np.ravel_multi_index((self.link_xs, self.link_ys), (self.nx, self.ny))
        self._omega = self.dtype(1.0 / self.tau)
        self._w = W.astype(self.dtype).reshape(-1, 1, 1)
        self._w_flat = [self.dtype(w) for w in W]
        self._spare = np.empty((9, self.nx, self.ny), self.dtype)

        def blocks(c: int, n: int) -> list[tuple[slice, slice]]:
            # dst[x] = src[x - c] with periodic wrap, as one or two slice pairs
            if c == 0:
                return [(slice(None), slice(None))]
            if c > 0:
                return [(slice(c, None), slice(None, n - c)), (slice(None, c), slice(n - c, None))]
            return [(slice(None, n + c), slice(-c, None)), (slice(n + c, None), slice(None, -c))]

        self._blocks = [[((dx, dy), (sx, sy)) for dx, sx in blocks(int(C[i, 0]), self.nx)
                         for dy, sy in blocks(int(C[i, 1]), self.ny)] for i in range(9)]

    def _prepare_interpolation(self, wall_fraction: np.ndarray | None) -> None:
        """Coefficients of the interpolated bounce-back on every body link:
        f_ibar(x_f, t+1) = a f_i*(x_f) + b f_s*(x_s), with (s, x_s) = (i, x_f - c_i) or (ibar, x_f)."""
        n = self.link_dir.size
        self.link_q = np.full(n, 0.5)
        self._interp = None
        if wall_fraction is None or not n:
            return
        wall_fraction = np.asarray(wall_fraction, dtype=np.float64)
        if wall_fraction.shape != (9, self.nx, self.ny):
            raise ValueError(f"wall_fraction must have shape (9, {self.nx}, {self.ny}), "
                             f"got {wall_fraction.shape}")
        q = wall_fraction[self.link_dir, self.link_xs, self.link_ys]
        if not np.all((q > 0) & (q <= 1)):
            raise ValueError("wall_fraction must lie in (0, 1] on every body link (got min "
                             f"{np.nanmin(q):.3g}, max {np.nanmax(q):.3g}, {int(np.isnan(q).sum())} NaN)")
        cx, cy = C[self.link_dir, 0], C[self.link_dir, 1]
        back_x, back_y = self.link_xs - cx, self.link_ys - cy
        inside = (back_x >= 0) & (back_x < self.nx) & (back_y >= 0) & (back_y < self.ny)
        back_fluid = np.zeros(n, bool)
        back_fluid[inside] = self.fluid[back_x[inside], back_y[inside]]
        near = (q < 0.5) & back_fluid
        far = q >= 0.5
        a = np.where(near, 2 * q, np.where(far, 0.5 / q, 1.0))
        b = np.where(near, 1 - 2 * q, np.where(far, 1 - 0.5 / q, 0.0))
        src_dir = np.where(near, self.link_dir, OPPOSITE[self.link_dir])
        src_node = np.where(near, np.ravel_multi_index((np.where(near, back_x, 0), np.where(near, back_y, 0)),
                                                       (self.nx, self.ny)), self._link_flat)
        self.link_q = np.where(near | far, q, 0.5)
        self._interp = (OPPOSITE[self.link_dir], a.astype(self.dtype), b.astype(self.dtype),
                        src_dir, src_node)

    def _choose_backend(self, backend: str) -> str:
        if backend not in ("auto", "numba", "numpy"):
            raise ValueError(f"backend must be auto, numba or numpy, got {backend!r}")
        if backend == "numpy" or (backend == "auto" and not lbm_kernel.AVAILABLE):
            return "numpy"
        if self.sponge:  # the compiled step has no sponge
            if backend == "numba":
                raise ValueError("backend='numba' does not support a sponge; use backend='numpy'")
            return "numpy"
        if not lbm_kernel.AVAILABLE:
            raise ValueError("backend='numba' needs numba: pip install 'papergym[fast]'")
        return "numba"

    def _prepare_kernel(self) -> None:
        """The compiled step's arguments that do not change between steps."""
        dt = self.dtype
        directions = range(1, 9)
        k_bb = [(i, OPPOSITE[i], idx) for i, idx in zip(directions, self._link_idx)]
        ground = [(OPPOSITE[i], idx, 6.0 * W[i] * C[i, 0] * self.wall_speed)
                  for i, idx in zip(directions, self._ground_idx) if self.wall_speed and idx.size]
        n = self.link_dir.size
        if self._interp is None:
            back, coef_a, coef_b, src_dir, src_node = (np.zeros(n, np.int64), np.zeros(n, dt),
                                                       np.zeros(n, dt), np.zeros(n, np.int64),
                                                       np.zeros(n, np.int64))
        else:
            back, coef_a, coef_b, src_dir, src_node = self._interp
        inlet = (lbm_kernel.NO_INFLOW if self.inflow is None else
                 lbm_kernel.INLET_CHARACTERISTIC if self.inlet == "characteristic" else
                 lbm_kernel.INLET_VELOCITY)
        cat = lambda parts, dtype: np.concatenate([np.asarray(p, dtype).ravel() for p in parts]  # noqa: E731
                                                  + [np.zeros(0, dtype)])
        shape = (self.nx, self.ny)
        self._kernel_args = dict(
            solid=self.solid, solid_index=self._solid_idx.astype(np.int64), fluid=self.fluid,
            w_t=W.astype(dt),
            w64=W.astype(dt).astype(np.float64), omega64=float(self._omega),
            bb_src=cat([np.full(idx.size, i) for i, _, idx in k_bb], np.int64),
            bb_dst=cat([np.full(idx.size, j) for _, j, idx in k_bb], np.int64),
            bb_node=cat([idx for _, _, idx in k_bb], np.int64),
            ground_dir=cat([np.full(idx.size, j) for j, idx, _ in ground], np.int64),
            ground_node=cat([idx for _, idx, _ in ground], np.int64),
            ground_delta=cat([np.full(idx.size, dt(delta)) for _, idx, delta in ground], dt),
            link_dir=self.link_dir.astype(np.int64), link_node=self._link_flat.astype(np.int64),
            interpolated=self._interp is not None, back=np.asarray(back, np.int64),
            coef_a=np.asarray(coef_a, dt), coef_b=np.asarray(coef_b, dt),
            src_dir=np.asarray(src_dir, np.int64), src_node=np.asarray(src_node, np.int64),
            slip_top=self.top == "free_slip", slip_bottom=self.bottom == "free_slip",
            inlet=inlet, inflow=np.zeros(self.ny, dt) if self.inflow is None else self.inflow,
            outlet=(lbm_kernel.OUTLET_PRESSURE if self.outlet == "pressure"
                    else lbm_kernel.OUTLET_ZERO_GRADIENT),
            in_rho=np.zeros(self.ny, dt), in_u=np.zeros(self.ny, dt))
        self._kernel_moments = tuple(np.zeros(shape, dt) for _ in range(3))

    def _step_compiled(self) -> np.ndarray:
        """The numpy step's arithmetic in one compiled call (envs/aero/lbm_kernel.py)."""
        if self.f.dtype != self.dtype or not self.f.flags.c_contiguous:  # f set from outside
            self.f = np.ascontiguousarray(self.f, dtype=self.dtype)
        rho, ux, uy = self._kernel_moments
        link_fx, link_fy = np.empty(self.link_dir.size), np.empty(self.link_dir.size)
        consts = np.array([self._omega, 1.0, 1.5, self.dtype(self.inflow_scale)], self.dtype)
        fx, fy = lbm_kernel.step(self.f, self._spare, rho, ux, uy, consts=consts, link_fx=link_fx,
                                 link_fy=link_fy, **self._kernel_args)
        # the moments are handed out (run() reads them after each step), so the next step
        # writes fresh arrays
        self._moments = self._kernel_moments
        self._kernel_moments = tuple(np.empty_like(m) for m in self._kernel_moments)
        self._link_fx = link_fx  # the state was advanced in place, post is in self._spare
        return np.array([fx, fy])

    def fields(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Density and velocity of the current state (rho = 1, u = 0 in solids)."""
        f = self.f
        rho = f.sum(axis=0)
        rho.ravel()[self._solid_idx] = 1.0
        ux = (f[1] + f[5] + f[8] - f[3] - f[6] - f[7]) / rho
        uy = (f[2] + f[5] + f[6] - f[4] - f[7] - f[8]) / rho
        ux.ravel()[self._solid_idx] = 0.0
        uy.ravel()[self._solid_idx] = 0.0
        return rho, ux, uy

    def step(self) -> np.ndarray:
        """Advance one step; return the body force of this step (momentum exchange)."""
        if self.backend == "numba":
            return self._step_compiled()
        f = self.f
        rho, ux, uy = self.fields()
        self._moments = (rho, ux, uy)
        # BGK collision, in place, direction by direction: f_i* = f_i + (f^eq_i - f_i)/tau
        post, new = f, self._spare
        usq = 1.5 * (ux * ux + uy * uy)
        for i in range(9):
            cx, cy = C[i]
            cu = (cx * ux if cx else 0.0) + (cy * uy if cy else 0.0) if i else None
            feq = (1.0 - usq) if cu is None else (1.0 + 3.0 * cu + 4.5 * cu * cu - usq)
            feq *= rho
            feq *= self._w_flat[i]
            fi = post[i]
            fi += (feq - fi) * self._omega
        if self.sponge:
            n = self.sponge
            ones = np.ones((n, self.ny), self.dtype)
            post[:, -n:] -= self._sigma * (post[:, -n:] - equilibrium(ones, ux[-n:], uy[-n:]))
        # streaming (pull, periodic wrap) by block copies
        new[0] = post[0]
        for i in range(1, 9):
            for dst, src in self._blocks[i]:
                new[i][dst] = post[i][src]
        post_flat, new_flat = post.reshape(9, -1), new.reshape(9, -1)
        # halfway bounce-back on every fluid->solid link, moving walls with their momentum term
        for k, i in enumerate(range(1, 9)):
            j, idx = OPPOSITE[i], self._link_idx[k]
            new_flat[j, idx] = post_flat[i, idx]
            if self.wall_speed and self._ground_idx[k].size:
                new_flat[j, self._ground_idx[k]] -= self.dtype(6.0 * W[i] * C[i, 0] * self.wall_speed)
        fx = fy = 0.0
        if self.link_dir.size:
            pops = post_flat[self.link_dir, self._link_flat]
            if self._interp is None:
                pops = 2.0 * pops.astype(np.float64)
            else:
                back, a, b, src_dir, src_node = self._interp
                reflected = a * pops + b * post_flat[src_dir, src_node]
                new_flat[back, self._link_flat] = reflected
                pops = pops.astype(np.float64) + reflected
            self._link_fx = C[self.link_dir, 0] * pops
            fx = float(self._link_fx.sum())
            fy = float((C[self.link_dir, 1] * pops).sum())
        # free-slip rows: populations leaving through the row come back mirrored
        for side, row, leaving in (("top", -1, 1), ("bottom", 0, -1)):
            if getattr(self, side) != "free_slip":
                continue
            for i in range(1, 9):
                if C[i, 1] == leaving:
                    new[MIRROR_Y[i]][:, row] = np.roll(post[i][:, row], C[i, 0])
        if self.inflow is not None:
            rows = self.fluid[0]
            zeros = np.zeros(self.ny, self.dtype)
            # the inlet density floats (taken from the first interior column), so the channel's
            # pressure gradient can build up; the velocity is the prescribed one
            rho_in = np.where(self.fluid[1], rho[1], 1.0).astype(self.dtype)
            inflow = (self.inflow * self.dtype(self.inflow_scale)).astype(self.dtype)
            if self.inlet == "characteristic":
                # fix the incoming Riemann invariant u + c_s (rho - 1) instead of u: a wave
                # reflected by the body or the outlet leaves through the inlet
                inflow = (inflow - np.sqrt(1.0 / 3.0) * (rho_in - 1.0)).astype(self.dtype)
            new[:, 0, :] = np.where(rows, equilibrium(rho_in, inflow, zeros), new[:, 0, :])
            if self.outlet == "pressure":
                ones = np.ones(self.ny, self.dtype)
                new[:, -1, :] = np.where(self.fluid[-1], equilibrium(ones, ux[-2], uy[-2]), new[:, -1, :])
            else:
                new[:, -1, :] = np.where(self.fluid[-1], new[:, -2, :], new[:, -1, :])
        new_flat[:, self._solid_idx] = 0
        self.f, self._spare = new, post
        return np.array([fx, fy])

    def run(self, steps: int, average_fraction: float = 0.2, mass_every: int = 10,
            ramp_fraction: float = 0.0) -> FlowResult:
        """Run ``steps`` steps; average the force and the fields over the last fraction. With
        ``ramp_fraction`` > 0 the inflow rises as sin^2 over that share of the steps (a start from
        rest that excites no acoustic mode); it must end before the averaging window."""
        if steps < 20:
            raise ValueError(f"steps must be >= 20, got {steps}")
        if not 0.0 <= ramp_fraction < 1.0 - average_fraction:
            raise ValueError(f"ramp_fraction must lie in [0, 1 - average_fraction), got {ramp_fraction!r}")
        ramp = int(ramp_fraction * steps)
        if ramp:
            self.f = self.initial(ux=np.zeros((self.nx, self.ny), self.dtype))
        start = steps - max(int(round(average_fraction * steps)), 2)
        window = max(steps // 10, 1)
        forces = np.zeros((steps, 2))
        n_links = self.link_dir.size
        link_fx = np.zeros(n_links)
        rho_sum = np.zeros((self.nx, self.ny))
        ux_sum, uy_sum = np.zeros_like(rho_sum), np.zeros_like(rho_sum)
        mass = []
        for t in range(steps):
            self.inflow_scale = np.sin(0.5 * np.pi * t / ramp) ** 2 if t < ramp else 1.0
            forces[t] = self.step()
            if t >= start:
                if n_links:
                    link_fx += self._link_fx
                rho, ux, uy = self._moments
                rho_sum += rho
                ux_sum += ux
                uy_sum += uy
            if t % mass_every == 0:
                mass.append(self.mass())
        count = steps - start
        fluid = self.fluid
        return FlowResult(
            force=forces[start:].mean(axis=0),
            force_window_means=np.array([forces[-2 * window:-window, 0].mean(), forces[-window:, 0].mean()]),
            link_fx=link_fx / count, link_x=self.link_xs.astype(float),
            rho=np.where(fluid, rho_sum / count, 1.0), ux=np.where(fluid, ux_sum / count, 0.0),
            uy=np.where(fluid, uy_sum / count, 0.0), mass=np.array(mass), start=start)
