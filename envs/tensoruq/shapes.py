"""Generated solids for ``TensorUQInertia``: surface point clouds and the inertia tensor of the
solid uniform body (plus a hidden inclusion), all in numpy float64.

Every shape is built with longest extent 1 in its body frame; the inertia per unit mass about
the centre of mass is I = tr(M) I₃ − M with M = E[r rᵀ] the second moment about the centre of
mass. M is analytic for every family: box, ellipsoid, cylinder, cone, torus, and the composite
families (L-shape, chair, table, cross) are unions of disjoint boxes, whose M follows by the
parallel-axis theorem. Surfaces are sampled area-weighted (composites: each box face in
proportion to its area, rejecting points inside or on another box, which removes shared faces).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FAMILIES = ("box", "ellipsoid", "cylinder", "cone", "torus", "lshape", "chair", "table", "cross")
OOD_FAMILIES = ("torus", "cross")
IN_FAMILIES = tuple(f for f in FAMILIES if f not in OOD_FAMILIES)


@dataclass
class Solid:
    """A solid in its body frame: ``M`` (3 x 3, about its centre of mass at the origin), a surface
    sampler and an inside test (both in the body frame)."""

    family: str
    M: np.ndarray
    surface: object  # (rng, n) -> [n, 3]
    inside: object  # [n, 3] -> bool[n]
    extent: np.ndarray  # half-extents of the bounding box

    def inertia(self) -> np.ndarray:
        return np.trace(self.M) * np.eye(3) - self.M


def _box_M(sides: np.ndarray) -> np.ndarray:
    return np.diag(sides ** 2 / 12.0)


def box_union(family: str, boxes: list[tuple[np.ndarray, np.ndarray]]) -> Solid:
    """Disjoint boxes (centre, full side lengths): M by the parallel-axis theorem."""
    centres = np.array([c for c, _ in boxes], dtype=float)
    sides = np.array([s for _, s in boxes], dtype=float)
    vol = np.prod(sides, axis=1)
    mass = vol / vol.sum()
    com = mass @ centres
    centres = centres - com
    M = sum(m * (_box_M(s) + np.outer(c, c)) for m, c, s in zip(mass, centres, sides))
    face_area = np.array([2 * (s[1] * s[2]) for s in sides] + [2 * (s[0] * s[2]) for s in sides]
                         + [2 * (s[0] * s[1]) for s in sides])

    def inside(x: np.ndarray, strict: bool = False) -> np.ndarray:
        out = np.zeros(len(x), dtype=bool)
        for c, s in zip(centres, sides):
            d = np.abs(x - c) - s / 2
            out |= np.all(d < 0, axis=1) if strict else np.all(d <= 1e-9, axis=1)
        return out

    def surface(rng: np.random.Generator, n: int) -> np.ndarray:
        got: list[np.ndarray] = []
        count = 0
        while count < n:
            m = 2 * (n - count) + 8
            face = rng.choice(len(face_area), size=m, p=face_area / face_area.sum())
            axis, box = face // len(sides), face % len(sides)
            u = rng.uniform(-0.5, 0.5, size=(m, 3)) * sides[box]
            u[np.arange(m), axis] = np.where(rng.uniform(size=m) < 0.5, -0.5, 0.5) * sides[box, axis]
            x = centres[box] + u
            keep = np.ones(m, dtype=bool)
            for b in range(len(sides)):  # on or inside another box: interior of the union
                d = np.abs(x - centres[b]) - sides[b] / 2
                keep &= ~((box != b) & np.all(d <= 1e-12, axis=1))
            got.append(x[keep])
            count += int(keep.sum())
        return np.concatenate(got)[:n]

    lo = np.min(centres - sides / 2, axis=0)
    hi = np.max(centres + sides / 2, axis=0)
    return Solid(family, M, surface, lambda x: inside(x, strict=True), np.maximum(-lo, hi))


def _normalise_boxes(boxes: list[tuple[np.ndarray, np.ndarray]]) -> list[tuple[np.ndarray, np.ndarray]]:
    lo = np.min([c - s / 2 for c, s in boxes], axis=0)
    hi = np.max([c + s / 2 for c, s in boxes], axis=0)
    scale = np.max(hi - lo)
    return [(np.asarray(c, float) / scale, np.asarray(s, float) / scale) for c, s in boxes]


def make_solid(family: str, rng: np.random.Generator) -> Solid:
    """A random solid of ``family`` with longest extent 1 (aspect ratios in [0.2, 1])."""
    a = np.sort(rng.uniform(0.2, 1.0, size=3))[::-1]
    a[0] = 1.0
    a = rng.permutation(a)
    if family == "box":
        return box_union("box", [(np.zeros(3), a)])
    if family == "ellipsoid":
        semi = a / 2

        def surface(rng: np.random.Generator, n: int) -> np.ndarray:
            got, count = [], 0
            wmax = np.prod(semi) * np.sqrt(np.sum(1 / semi ** 2))
            while count < n:  # area element ∝ abc·sqrt(Σ n_i² / a_i²) on the unit sphere
                z = rng.normal(size=(4 * n, 3))
                z /= np.linalg.norm(z, axis=1, keepdims=True)
                w = np.prod(semi) * np.sqrt(np.sum(z ** 2 / semi ** 2, axis=1))
                keep = rng.uniform(size=len(z)) * wmax < w
                got.append(z[keep] * semi)
                count += int(keep.sum())
            return np.concatenate(got)[:n]

        return Solid(family, np.diag(semi ** 2 / 5), surface,
                     lambda x: np.sum((x / semi) ** 2, axis=1) < 1, semi)
    if family in ("cylinder", "cone"):
        r, h = rng.uniform(0.1, 0.5), rng.uniform(0.2, 1.0)  # radius, height
        scale = max(2 * r, h)
        r, h = r / scale, h / scale
        if family == "cylinder":
            M = np.diag([r * r / 4, r * r / 4, h * h / 12])
            lateral, cap = 2 * np.pi * r * h, np.pi * r * r

            def surface(rng: np.random.Generator, n: int) -> np.ndarray:
                part = rng.choice(3, size=n, p=np.array([lateral, cap, cap]) / (lateral + 2 * cap))
                phi = rng.uniform(0, 2 * np.pi, size=n)
                rho = np.where(part == 0, r, r * np.sqrt(rng.uniform(size=n)))
                side = rng.uniform(-h / 2, h / 2, size=n)
                z = np.where(part == 0, side, np.where(part == 1, -h / 2, h / 2))
                return np.stack([rho * np.cos(phi), rho * np.sin(phi), z], axis=1)

            def inside(x: np.ndarray) -> np.ndarray:
                return (x[:, 0] ** 2 + x[:, 1] ** 2 < r * r) & (np.abs(x[:, 2]) < h / 2)

            return Solid(family, M, surface, inside, np.array([r, r, h / 2]))
        # cone: apex up, base at z0 = −h/4 below the centre of mass (which is h/4 above the base)
        M = np.diag([3 * r * r / 20, 3 * r * r / 20, 3 * h * h / 80])
        slant = np.sqrt(r * r + h * h)
        lateral, base = np.pi * r * slant, np.pi * r * r

        def surface(rng: np.random.Generator, n: int) -> np.ndarray:
            part = rng.uniform(size=n) < lateral / (lateral + base)
            phi = rng.uniform(0, 2 * np.pi, size=n)
            t = np.sqrt(rng.uniform(size=n))  # distance from the apex ∝ sqrt(u): area-uniform
            rho = np.where(part, r * t, r * np.sqrt(rng.uniform(size=n)))
            z = np.where(part, 3 * h / 4 - h * t, -h / 4)
            return np.stack([rho * np.cos(phi), rho * np.sin(phi), z], axis=1)

        def inside(x: np.ndarray) -> np.ndarray:
            height = 3 * h / 4 - x[:, 2]
            return (height > 0) & (height < h) & (np.hypot(x[:, 0], x[:, 1]) < r * height / h)

        return Solid(family, M, surface, inside, np.array([r, r, 3 * h / 4]))
    if family == "torus":
        minor_frac = rng.uniform(0.15, 0.45)  # tube radius / major radius
        big = 0.5 / (1 + minor_frac)
        tube = big * minor_frac
        M = np.diag([big ** 2 / 2 + 3 * tube ** 2 / 8] * 2 + [tube ** 2 / 4])

        def surface(rng: np.random.Generator, n: int) -> np.ndarray:
            got, count = [], 0
            while count < n:  # area element ∝ (R + a cos v)
                v = rng.uniform(0, 2 * np.pi, size=2 * n)
                keep = rng.uniform(size=2 * n) * (big + tube) < big + tube * np.cos(v)
                v = v[keep]
                u = rng.uniform(0, 2 * np.pi, size=len(v))
                rho = big + tube * np.cos(v)
                got.append(np.stack([rho * np.cos(u), rho * np.sin(u), tube * np.sin(v)], axis=1))
                count += len(v)
            return np.concatenate(got)[:n]

        def inside(x: np.ndarray) -> np.ndarray:
            return (np.hypot(x[:, 0], x[:, 1]) - big) ** 2 + x[:, 2] ** 2 < tube * tube

        return Solid(family, M, surface, inside, np.array([big + tube, big + tube, tube]))
    if family == "lshape":
        w, t, d = rng.uniform(0.4, 1.0), rng.uniform(0.15, 0.4), rng.uniform(0.2, 1.0)
        boxes = [(np.array([0.5, t / 2, 0]), np.array([1.0, t, d])),
                 (np.array([t / 2, t + (w - t) / 2, 0]), np.array([t, w - t, d]))]
        return box_union(family, _normalise_boxes(boxes))
    if family in ("chair", "table"):
        wx, wy = rng.uniform(0.5, 1.0), rng.uniform(0.5, 1.0)
        top_t, leg = rng.uniform(0.05, 0.15), rng.uniform(0.05, 0.15)
        height = rng.uniform(0.4, 1.0)
        boxes = [(np.array([0, 0, height + top_t / 2]), np.array([wx, wy, top_t]))]
        for sx in (-1, 1):
            for sy in (-1, 1):
                boxes.append((np.array([sx * (wx - leg) / 2, sy * (wy - leg) / 2, height / 2]),
                              np.array([leg, leg, height])))
        if family == "chair":
            back = rng.uniform(0.3, 0.8)
            boxes.append((np.array([0, (wy - top_t) / 2, height + top_t + back / 2]),
                          np.array([wx, top_t, back])))
        return box_union(family, _normalise_boxes(boxes))
    if family == "cross":
        c = rng.uniform(0.15, 0.35)
        arms = rng.uniform(0.2, 1.0, size=3)
        boxes = [(np.zeros(3), np.array([c, c, c]))]
        for ax in range(3):
            for sign in (-1, 1):
                centre, sides = np.zeros(3), np.full(3, c)
                centre[ax] = sign * (c / 2 + arms[ax] / 2)
                sides[ax] = arms[ax]
                boxes.append((centre, sides))
        return box_union(family, _normalise_boxes(boxes))
    raise ValueError(f"unknown shape family {family!r}; known: {', '.join(FAMILIES)}")


def random_rotation(rng: np.random.Generator) -> np.ndarray:
    """A uniform rotation (QR of a Gaussian matrix with the sign fix, det +1)."""
    A = rng.normal(size=(3, 3))
    Q, R = np.linalg.qr(A)
    Q = Q * np.sign(np.diag(R))
    if np.linalg.det(Q) < 0:
        Q[:, 0] = -Q[:, 0]
    return Q


def inclusion_moment(solid: Solid, weight: float, rng: np.random.Generator) -> np.ndarray:
    """Second moment about the new centre of mass after a point inclusion of mass fraction
    ``weight`` at a uniform interior point p (rejection from the bounding box):
    M' = (1 − w) M + w p pᵀ − c cᵀ, c = w p."""
    if weight <= 0:
        return solid.M
    while True:
        x = rng.uniform(-1, 1, size=(64, 3)) * solid.extent
        ok = solid.inside(x)
        if ok.any():
            p = x[np.argmax(ok)]
            break
    c = weight * p
    return (1 - weight) * solid.M + weight * np.outer(p, p) - np.outer(c, c)
