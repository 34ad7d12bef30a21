"""One step of the D2Q9 solver (:class:`papergym.envs.aero.lbm.LBM`) as one compiled loop (numba).

The numpy step moves the populations through a dozen whole-array temporaries and pays a few
microseconds per numpy call, which on the standard grids (80 x 31 and 128 x 49 nodes) is most
of a step. Here one compiled call does the moments, the BGK collision (one loop per direction,
from the state into a second buffer, so that the compiler vectorizes it), the streaming back
into the state (row copies) and the boundaries (halfway bounce-back on every link, moving walls,
interpolated bounce-back and the force on the body, free-slip rows, inlet, outlet), in the
numpy step's order.

The arithmetic is the numpy step's, operation for operation and in its precision: in float32,
the collision of i >= 1 and the inlet and outlet equilibria are evaluated in float64 (the
numpy step multiplies by the integer lattice vectors, which promotes them) and rounded once on
the store, the rest in float32; the force is summed pairwise as numpy sums. The two steps agree
bit for bit (tests/envs/test_aero_lbm_kernel.py). The numpy step stays the reference, and the
fallback where numba is not installed (``pip install papergym[fast]``) or a sponge is used.
"""

from __future__ import annotations

import numpy as np

try:
    import numba
except ImportError:  # the optional extra is not installed: LBM uses the numpy step
    numba = None

AVAILABLE = numba is not None

# the inlet and outlet as small integers for the compiled loop
NO_INFLOW, INLET_VELOCITY, INLET_CHARACTERISTIC = 0, 1, 2
OUTLET_PRESSURE, OUTLET_ZERO_GRADIENT = 0, 1
# D2Q9 as in lbm.py (C, MIRROR_Y), spelled out for the compiled loop
CX = np.array([0, 1, 0, -1, 0, 1, -1, -1, 1], dtype=np.int64)
CY = np.array([0, 0, 1, 0, -1, 1, 1, -1, -1], dtype=np.int64)
MIRROR_Y = np.array([0, 1, 4, 3, 2, 8, 7, 6, 5], dtype=np.int64)
SQRT_THIRD = float(np.sqrt(1.0 / 3.0))


def _jit(function):
    return numba.njit(cache=True, nogil=True)(function) if AVAILABLE else function


@_jit
def _block_sum(a, lo, n):
    """numpy's pairwise_sum on a block of n <= 128: 8 accumulators, then the remainder."""
    if n < 8:
        s = -0.0
        for k in range(lo, lo + n):
            s += a[k]
        return s
    r0, r1, r2, r3 = a[lo], a[lo + 1], a[lo + 2], a[lo + 3]
    r4, r5, r6, r7 = a[lo + 4], a[lo + 5], a[lo + 6], a[lo + 7]
    k = 8
    while k < n - n % 8:
        r0 += a[lo + k]
        r1 += a[lo + k + 1]
        r2 += a[lo + k + 2]
        r3 += a[lo + k + 3]
        r4 += a[lo + k + 4]
        r5 += a[lo + k + 5]
        r6 += a[lo + k + 6]
        r7 += a[lo + k + 7]
        k += 8
    s = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while k < n:
        s += a[lo + k]
        k += 1
    return s


@_jit
def pairwise_sum(a):
    """numpy's sum of a float64 vector (pairwise: halves rounded to 8 until blocks of <= 128),
    so the force is numpy's to the bit; the recursion unrolled on a stack (numba caches no
    recursive function)."""
    if a.size <= 128:
        return _block_sum(a, 0, a.size)
    start, size = np.empty(64, np.int64), np.empty(64, np.int64)
    stage, left = np.zeros(64, np.int64), np.zeros(64)
    top, start[0], size[0], stage[0] = 0, 0, a.size, 0
    done, value = False, 0.0
    while True:
        if done:  # a subtree's sum in value: hand it to its parent
            if top < 0:
                return value
            half = size[top] // 2 - (size[top] // 2) % 8
            if stage[top] == 1:  # the left half is summed: now the right one
                left[top], stage[top] = value, 2
                top += 1
                start[top], size[top], stage[top] = start[top - 1] + half, size[top - 1] - half, 0
                done = False
            else:
                value = left[top] + value
                top -= 1
        elif size[top] <= 128:
            value, done = _block_sum(a, start[top], size[top]), True
            top -= 1
        else:
            half = size[top] // 2 - (size[top] // 2) % 8
            stage[top] = 1
            top += 1
            start[top], size[top], stage[top] = start[top - 1], half, 0


@_jit
def _column_equilibrium(new, x, rho, ux, uy, fluid, w_t, c15):
    """new[:, x, y] = lbm.equilibrium(rho, ux, uy) on the fluid nodes of column x: (w_i rho) in
    the lattice's precision times the float64 bracket, rounded on the store."""
    for y in range(new.shape[2]):
        if not fluid[x, y]:
            continue
        u, v = ux[y], uy[y]
        usq = np.float64(c15 * (u * u + v * v))
        for i in range(9):
            cu = np.float64(CX[i]) * np.float64(u) + np.float64(CY[i]) * np.float64(v)
            new[i, x, y] = np.float64(w_t[i] * rho[y]) * (1.0 + 3.0 * cu + 4.5 * cu * cu - usq)


@_jit
def step(f, post, rho, ux, uy, solid, solid_index, fluid, consts, w_t, w64, omega64,
         bb_src, bb_dst, bb_node, ground_dir, ground_node, ground_delta,
         link_dir, link_node, interpolated, back, coef_a, coef_b, src_dir, src_node,
         link_fx, link_fy, slip_top, slip_bottom, inlet, inflow, outlet, in_rho, in_u):
    """One LBM step of the state f (9, nx, ny), in place; ``post`` receives the post-collision
    populations, rho, ux, uy the moments of the old state, link_fx, link_fy each body link's
    momentum exchange. ``consts`` = (omega, 1, 1.5, inflow scale) and ``w_t`` the weights, in
    the lattice's precision. Returns the body force (fx, fy)."""
    nx, ny = f.shape[1], f.shape[2]
    size = nx * ny
    omega, one, c15 = consts[0], consts[1], consts[2]
    zero = one - one
    state, collided, solid_flat = f.reshape(9, size), post.reshape(9, size), solid.reshape(size)
    rho_flat, ux_flat, uy_flat = rho.reshape(size), ux.reshape(size), uy.reshape(size)
    # moments (rho = 1, u = 0 in solids, as LBM.fields)
    for n in range(size):
        f0, f1, f2, f3, f4 = state[0, n], state[1, n], state[2, n], state[3, n], state[4, n]
        f5, f6, f7, f8 = state[5, n], state[6, n], state[7, n], state[8, n]
        is_solid = solid_flat[n]
        r = one if is_solid else f0 + f1 + f2 + f3 + f4 + f5 + f6 + f7 + f8
        rho_flat[n] = r
        ux_flat[n] = zero if is_solid else (f1 + f5 + f8 - f3 - f6 - f7) / r
        uy_flat[n] = zero if is_solid else (f2 + f5 + f6 - f4 - f7 - f8) / r
    # BGK collision into post, one direction at a time (loops the compiler vectorizes):
    # i = 0 in the lattice's precision (numpy: no integer factor, no promotion) ...
    source, target, w0 = state[0], collided[0], w_t[0]
    for n in range(size):
        u, v = ux_flat[n], uy_flat[n]
        usq = c15 * (u * u + v * v)
        target[n] = source[n] + ((one - usq) * rho_flat[n] * w0 - source[n]) * omega
    # ... and i >= 1 in float64 (numpy multiplies by the integer c_i), rounded on the store
    for i in range(1, 9):
        source, target = state[i], collided[i]
        cx, cy, w = np.float64(CX[i]), np.float64(CY[i]), w64[i]
        for n in range(size):
            u, v = ux_flat[n], uy_flat[n]
            usq = np.float64(c15 * (u * u + v * v))
            cu = cx * np.float64(u) + cy * np.float64(v)
            fi = source[n]
            target[n] = fi + ((1.0 + 3.0 * cu + 4.5 * cu * cu - usq) * np.float64(rho_flat[n]) * w
                              - fi) * omega64
    # streaming, pulled into the state: f_i(x) = f*_i(x - c_i), periodic wrap, by row copies
    for i in range(9):
        for x in range(nx):
            src = (x - CX[i]) % nx
            if CY[i] == 0:
                f[i, x, :] = post[i, src, :]
            elif CY[i] == 1:
                f[i, x, 1:] = post[i, src, :ny - 1]
                f[i, x, 0] = post[i, src, ny - 1]
            else:
                f[i, x, :ny - 1] = post[i, src, 1:]
                f[i, x, ny - 1] = post[i, src, 0]
    # halfway bounce-back on every fluid->solid link, then the moving walls' momentum term
    for k in range(bb_node.size):
        state[bb_dst[k], bb_node[k]] = collided[bb_src[k], bb_node[k]]
    for k in range(ground_node.size):
        state[ground_dir[k], ground_node[k]] -= ground_delta[k]
    # the body: interpolated bounce-back, and its force by momentum exchange
    for k in range(link_node.size):
        pop = collided[link_dir[k], link_node[k]]
        if interpolated:
            reflected = coef_a[k] * pop + coef_b[k] * collided[src_dir[k], src_node[k]]
            state[back[k], link_node[k]] = reflected
            total = np.float64(pop) + np.float64(reflected)
        else:
            total = 2.0 * np.float64(pop)
        link_fx[k] = np.float64(CX[link_dir[k]]) * total
        link_fy[k] = np.float64(CY[link_dir[k]]) * total
    fx = pairwise_sum(link_fx)
    fy = pairwise_sum(link_fy)
    # free-slip rows: populations leaving through the row come back mirrored
    for row, leaving, on in ((ny - 1, 1, slip_top), (0, -1, slip_bottom)):
        if not on:
            continue
        for i in range(1, 9):
            if CY[i] == leaving:
                for x in range(nx):
                    f[MIRROR_Y[i], x, row] = collided[i, ((x - CX[i]) % nx) * ny + row]
    if inlet != NO_INFLOW:
        scale = consts[3]
        for y in range(ny):
            in_rho[y] = rho[1, y] if fluid[1, y] else one
            in_u[y] = inflow[y] * scale
            if inlet == INLET_CHARACTERISTIC:
                in_u[y] = np.float64(in_u[y]) - SQRT_THIRD * np.float64(in_rho[y] - one)
        _column_equilibrium(f, 0, in_rho, in_u, in_u * zero, fluid, w_t, c15)
        if outlet == OUTLET_PRESSURE:
            in_rho[:] = one
            _column_equilibrium(f, nx - 1, in_rho, ux[nx - 2], uy[nx - 2], fluid, w_t, c15)
        else:
            for y in range(ny):
                if fluid[nx - 1, y]:
                    f[:, nx - 1, y] = f[:, nx - 2, y]
    for n in solid_index:
        for i in range(9):
            state[i, n] = zero
    return fx, fy
