"""Domains, projections and the closed-form oracles shared by the performative problems.

The hard class of the paper (Anagnostides et al. 2026): loss l(x; z) = 1/2 ||x - z||^2
(alpha = beta = 1) and D(x) = N(g(x), sigma^2 I) with an affine shift g(x) = M x + c. Then the
repeated-risk-minimization map is G(x) = Pi_X(g(x)), rho = ||M||_2, and
PR(x) = 1/2 ||x - g(x)||^2 + d sigma^2 / 2 [derived].

Everything here is pure numpy on float64; no randomness.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def project_simplex(v: np.ndarray) -> np.ndarray:
    """Euclidean projection onto the probability simplex (sort-based, Held et al. 1974).

    tau = (sum of the rho largest entries - 1) / rho for the largest rho with
    u_rho > (sum_{i <= rho} u_i - 1) / rho; the result is max(v - tau, 0).
    """
    v = np.asarray(v, dtype=np.float64)
    if v.size <= 32:  # a plain loop beats numpy's call overhead on short vectors
        total, tau = 0.0, 0.0
        for i, u in enumerate(sorted(v.tolist(), reverse=True), start=1):
            total += u
            candidate = (total - 1.0) / i
            if u > candidate:
                tau = candidate
        return np.maximum(v - tau, 0.0)
    u = np.sort(v)[::-1]
    cssv = np.cumsum(u) - 1.0
    ind = np.arange(1, v.size + 1)
    rho = np.nonzero(u - cssv / ind > 0)[0][-1]
    return np.maximum(v - cssv[rho] / (rho + 1.0), 0.0)


@dataclass(frozen=True)
class Box:
    """X = [0, 1]^d."""

    dim: int
    kind: str = "box"

    def project(self, z: np.ndarray) -> np.ndarray:
        return np.minimum(np.maximum(z, 0.0), 1.0)  # = clip, cheaper on short vectors

    def contains(self, x: np.ndarray, tol: float = 1e-12) -> bool:
        return bool(np.all(x >= -tol) and np.all(x <= 1.0 + tol))

    def vi_gap(self, x: np.ndarray, v: np.ndarray) -> float:
        """max_{y in X} <x - y, v>: coordinatewise, y_i = 0 if v_i >= 0 else 1 [derived]."""
        return float(np.sum(np.where(v >= 0, x * v, (1.0 - x) * (-v))))

    def center(self) -> np.ndarray:
        return np.full(self.dim, 0.5)

    @property
    def diameter(self) -> float:
        return float(np.sqrt(self.dim))


@dataclass(frozen=True)
class SimplexProduct:
    """X = Delta_m x Delta_n (a bimatrix game's mixed strategies, row block first)."""

    m: int
    n: int
    kind: str = "simplex_product"

    @property
    def dim(self) -> int:
        return self.m + self.n

    def split(self, z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return z[: self.m], z[self.m :]

    def project(self, z: np.ndarray) -> np.ndarray:
        a, b = self.split(np.asarray(z, dtype=np.float64))
        return np.concatenate([project_simplex(a), project_simplex(b)])

    def contains(self, x: np.ndarray, tol: float = 1e-12) -> bool:
        a, b = self.split(x)
        return bool(
            np.all(x >= -tol) and abs(a.sum() - 1.0) <= tol * self.m and abs(b.sum() - 1.0) <= tol * self.n
        )

    def vi_gap(self, x: np.ndarray, v: np.ndarray) -> float:
        """Per block <x, v> - min_j v_j [derived]."""
        total = 0.0
        for xb, vb in zip(self.split(x), self.split(v)):
            total += float(xb @ vb - vb.min())
        return total

    def center(self) -> np.ndarray:
        return np.concatenate([np.full(self.m, 1.0 / self.m), np.full(self.n, 1.0 / self.n)])

    @property
    def diameter(self) -> float:
        return 2.0


Domain = Box | SimplexProduct


def fixed_point_gap(x: np.ndarray, g_x: np.ndarray, domain: Domain) -> float:
    """||x - Pi_X(g(x))||_2, the exact fixed-point gap when sigma = 0."""
    return float(np.linalg.norm(x - domain.project(g_x)))
