"""Generated 2-D vehicle side profiles and the free-form deformation (FFD) of them.

Shapes [recon]: four body types (fastback, notchback, squareback, pickup), each a closed profile
through type-specific key points with random height, windshield and backlight slopes, boat-tail
and ground clearance (no wheels: a clearance gap under a flat floor), rounded by three rounds of
Chaikin corner cutting and resampled to K = 128 points by arc length. Lengths are in units of the
vehicle length L (x from 0 to 1 at the base shape; y up from the road).

FFD (Sederberg & Parry 1986): a 5 x 3 lattice of control points P_ij over the base shape's bounding
box; a point with local coordinates (s, t) moves to X' = sum_ij B_i^4(s) B_j^2(t) (P_ij + dP_ij)
(Bernstein polynomials, which sum to one, so dP = 0 is the identity). Movable: the top row (5
points) and the middle point of the rear column, two coordinates each, so z in R^12 (units of L).
X' is linear in z: X' = X + A z. The functions below take numpy arrays or torch tensors alike.
"""

from __future__ import annotations

from math import comb
from typing import Any

import numpy as np

BODY_TYPES = ("fastback", "notchback", "squareback", "pickup")
K = 128
MOVABLE = ((0, 2), (1, 2), (2, 2), (3, 2), (4, 2), (4, 1))  # (i, j) of the movable control points
N_Z = 2 * len(MOVABLE)


def _chaikin(points: np.ndarray, rounds: int = 3) -> np.ndarray:
    for _ in range(rounds):
        nxt = np.roll(points, -1, axis=0)
        points = np.stack([0.75 * points + 0.25 * nxt, 0.25 * points + 0.75 * nxt], axis=1).reshape(-1, 2)
    return points


def resample(points: np.ndarray, k: int = K) -> np.ndarray:
    """``k`` points equally spaced by arc length along the closed polygon, from its first vertex."""
    closed = np.vstack([points, points[:1]])
    seg = np.hypot(*np.diff(closed, axis=0).T)
    arc = np.concatenate([[0.0], np.cumsum(seg)])
    targets = np.linspace(0.0, arc[-1], k, endpoint=False)
    return np.stack([np.interp(targets, arc, closed[:, 0]), np.interp(targets, arc, closed[:, 1])], axis=1)


def key_points(body_type: int, rng: np.random.Generator) -> np.ndarray:
    """The counter-clockwise key points of one random body of type ``body_type`` (0..3)."""
    u = rng.uniform
    c = u(0.05, 0.07)                  # ground clearance
    h = u(0.27, 0.34)                  # body height, floor to roof
    top = c + h
    hood = c + u(0.50, 0.58) * h       # hood / belt line
    xw = u(0.24, 0.30)                 # windshield base
    xr0 = xw + (top - hood) / np.tan(np.radians(u(28.0, 38.0)))  # roof start (windshield slope)
    tail = u(0.0, 0.03)                # boat-tail: the rear bottom corner moves forward
    rear = []
    if body_type == 0:                 # fastback: one long backlight to a low tail
        xr1 = xr0 + u(0.12, 0.2)
        rear = [(xr1, top), (0.97, c + u(0.52, 0.62) * h), (1.0, c + u(0.40, 0.48) * h)]
    elif body_type == 1:               # notchback: backlight to a trunk deck
        xr1 = xr0 + u(0.18, 0.26)
        deck = c + u(0.60, 0.68) * h
        rear = [(xr1, top), (xr1 + (top - deck) / np.tan(np.radians(u(25.0, 35.0))), deck),
                (0.99, deck - 0.02 * h), (1.0, c + u(0.3, 0.4) * h)]
    elif body_type == 2:               # squareback: long roof, near-vertical rear
        rear = [(u(0.9, 0.94), top), (1.0, top - u(0.05, 0.1) * h), (1.0, c + u(0.2, 0.3) * h)]
    elif body_type == 3:               # pickup: cab, then an open bed at belt height
        xr1 = xr0 + u(0.1, 0.14)
        bed = c + u(0.55, 0.62) * h
        rear = [(xr1, top), (xr1 + 0.02, bed), (1.0, bed), (1.0, c + u(0.2, 0.3) * h)]
    else:
        raise ValueError(f"body_type must be in 0..{len(BODY_TYPES) - 1}, got {body_type!r}")
    front = [(0.0, c + 0.25 * h), (0.015, hood - 0.05 * h), (0.06, hood), (xw, hood + 0.02 * h), (xr0, top)]
    bottom = [(1.0 - tail - 0.02, c), (0.03, c)]
    # floor front -> nose -> hood -> roof -> rear -> floor rear (clockwise); reversed to ccw
    pts = np.array([bottom[1], *front, *rear, bottom[0]])
    return pts[::-1] if polygon_area(pts) < 0 else pts


def make_shape(body_type: int, rng: np.random.Generator) -> np.ndarray:
    """A random base shape: (K, 2) boundary points, counter-clockwise, x from 0 to 1."""
    points = resample(_chaikin(key_points(body_type, rng)))
    x0, x1 = points[:, 0].min(), points[:, 0].max()
    points[:, 0] = (points[:, 0] - x0) / (x1 - x0)
    return points


# ----------------------------------------------------------------------------- geometry


def polygon_area(points: Any) -> Any:
    """Signed shoelace area (positive counter-clockwise); numpy or torch, batched over leading dims."""
    x, y = points[..., 0], points[..., 1]
    lib = _lib(points)
    return 0.5 * (x * lib.roll(y, -1, -1) - lib.roll(x, -1, -1) * y).sum(-1)


def frontal_height(points: Any) -> Any:
    y = points[..., 1]
    return y.max(-1).values - y.min(-1).values if _lib(points).__name__ == "torch" else y.max(-1) - y.min(-1)


def clearance(points: Any) -> Any:
    y = points[..., 1]
    return y.min(-1).values if _lib(points).__name__ == "torch" else y.min(-1)


def _lib(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return np
    import torch

    return torch


def is_simple(points: np.ndarray) -> bool:
    """No two non-adjacent edges of the closed polygon intersect (orientation tests, vectorized)."""
    a, b = points, np.roll(points, -1, axis=0)
    n = len(points)

    def orient(p, q, r):
        return ((q[..., 0] - p[..., 0]) * (r[..., 1] - p[..., 1])
                - (q[..., 1] - p[..., 1]) * (r[..., 0] - p[..., 0]))

    A, B = a[:, None], b[:, None]
    Cc, D = a[None, :], b[None, :]
    d1, d2 = orient(A, B, Cc), orient(A, B, D)
    d3, d4 = orient(Cc, D, A), orient(Cc, D, B)
    cross = (d1 * d2 < 0) & (d3 * d4 < 0)
    i, j = np.triu_indices(n, k=2)
    keep = ~((i == 0) & (j == n - 1))
    return not bool(cross[i[keep], j[keep]].any())


# ----------------------------------------------------------------------------- FFD


def bernstein(n: int, i: int, s: Any) -> Any:
    return comb(n, i) * s**i * (1 - s) ** (n - i)


def ffd_basis(base: np.ndarray) -> np.ndarray:
    """A with X'(z) = X + A z: (K, 2, 12), from the base shape's bounding-box lattice."""
    lo, hi = base.min(axis=0), base.max(axis=0)
    s, t = ((base - lo) / (hi - lo)).T
    basis = np.zeros((len(base), 2, N_Z))
    for k, (i, j) in enumerate(MOVABLE):
        weight = bernstein(4, i, s) * bernstein(2, j, t)
        basis[:, 0, 2 * k] = weight
        basis[:, 1, 2 * k + 1] = weight
    return basis


def deform(base: Any, basis: Any, z: Any) -> Any:
    """X' = X + A z (numpy or torch; z may carry a leading batch dimension)."""
    return base + (basis * z[..., None, None, :]).sum(-1)


def constraint_slacks(points: Any, base: np.ndarray, max_height: float = 1.01, area_tol: float = 0.03,
                      clearance_drop: float = 0.005) -> dict[str, Any]:
    """Slacks of the engineering constraints (>= 0 is feasible): frontal height <= 1.01 h0,
    |area / area0 - 1| <= 3%, clearance >= c0 - 0.005 L."""
    h0, a0, c0 = frontal_height(base), polygon_area(base), clearance(base)
    return {"height": max_height * h0 - frontal_height(points),
            "area": area_tol - abs(polygon_area(points) / a0 - 1.0),
            "clearance": clearance(points) - (c0 - clearance_drop)}


def violations(points: np.ndarray, base: np.ndarray) -> list[str]:
    """The constraints a design breaks, each as ``name (slack)``; empty when it is feasible."""
    out = [f"{k} (slack {float(v):.3g})" for k, v in constraint_slacks(points, base).items() if float(v) < 0]
    return out if is_simple(points) else [*out, "simple (the profile intersects itself)"]


def feasible(points: np.ndarray, base: np.ndarray) -> bool:
    slacks = constraint_slacks(points, base)
    return all(float(v) >= 0 for v in slacks.values()) and is_simple(points)
