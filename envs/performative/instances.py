"""Seeded instance families of PerformativeAffine-v0 (one instance per instance seed).

- contractive: X = [0,1]^d, M = rho Q (Q Haar-orthogonal), c = x_s - M x_s; unique PS x_s.
- nonexpansive: X = [0,1]^d, M = Q (``map="rotation"``) or -I (``map="negation"``) around
  x_s; PS = x_s + ker(I - Q) inside X. Version 1 draws x_s ~ U[0.2, 0.8]^d (version 0 had
  x_s = 1/2, the center of X, which is where the ellipsoid method starts).
- polymatrix: X = [0,1]^d, M = I + lam A, c = lam b from a binary-action polymatrix game;
  PS = its Nash equilibria, rho <= 1 + lam.
- bimatrix: X = Delta_m x Delta_n, g(x, y) = (x + lam R y, y + lam C^T x); PS = NE of (R, C).

[recon] polymatrix: blocks P^{ij} in R^{2x2}, entries U[-1, 1] (rows: i plays 1/0, columns:
j plays 1/0); A_ij = (P11 - P21) - (P12 - P22), b_i = sum_j (P12 - P22), both divided by
max(||A||_1, ||A||_inf) so rho <= 1 + lam. Players maximize, so g(x) = x + lam (A x + b).
[recon] bimatrix ``cyclic``: rock-paper-scissors-style cyclic tournaments (matching pennies for
m = 2) plus a U[-0.1, 0.1] perturbation, zero-sum (C = -R), so the only NE is fully mixed.
[classic] bimatrix ``savani``: the hard games of Savani and von Stengel (2006), d x d with d
even, on which every Lemke-Howson path is exponentially long (``hard.py``).
The starting point x_0 (``x0="random"``) is drawn from the same seed: uniform in X for
contractive/polymatrix, uniform in the ball ||x - x_s|| <= 1/2 for nonexpansive (version 1:
the ball intersected with X, by rejection), a uniform
(Dirichlet(1)) pair of mixed strategies for bimatrix.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from papergym.envs.performative.core import Box, Domain, SimplexProduct
from papergym.envs.performative.hard import savani_von_stengel_game

FAMILIES = ("contractive", "nonexpansive", "polymatrix", "bimatrix")
GAMES = ("general", "zerosum", "cyclic", "savani")
MAPS = ("rotation", "negation")


@dataclass(frozen=True, eq=False)
class AffineInstance:
    """One instance: domain X, shift g(x) = M x + c, and what is known in closed form."""

    family: str
    seed: int
    domain: Domain
    M: np.ndarray
    c: np.ndarray
    x0_random: np.ndarray
    known_ps: np.ndarray | None = None  # a performatively stable point known by construction
    payoffs: dict[str, np.ndarray] = field(default_factory=dict)  # A, b, P | R, C
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def dim(self) -> int:
        return self.domain.dim

    @functools.cached_property
    def rho(self) -> float:
        """Lip(g) = ||M||_2 (= the paper's rho for alpha = beta = 1)."""
        return float(np.linalg.norm(self.M, 2))

    def g(self, x: np.ndarray) -> np.ndarray:
        return self.M @ x + self.c

    def G(self, x: np.ndarray) -> np.ndarray:
        """The RRM map Pi_X(g(x))."""
        return self.domain.project(self.g(x))

    def gap(self, x: np.ndarray) -> float:
        r = x - self.G(x)
        return math.sqrt(float(r @ r))

    def gaps(self, X: np.ndarray) -> np.ndarray:
        """Fixed-point gaps of the rows of X (vectorized on boxes)."""
        if self.domain.kind == "box":
            G = self.domain.project(X @ self.M.T + self.c)
        else:
            G = np.array([self.G(x) for x in X])
        return np.sqrt(np.sum((X - G) ** 2, axis=1))

    def vi_gap(self, x: np.ndarray) -> float:
        return self.domain.vi_gap(x, x - self.g(x))

    def pr(self, x: np.ndarray, sigma: float = 0.0) -> float:
        """Performative risk 1/2 ||x - g(x)||^2 + d sigma^2 / 2 [derived]."""
        r = x - self.g(x)
        return float(0.5 * r @ r + 0.5 * self.dim * sigma**2)

    def x0(self, mode: str) -> np.ndarray:
        if mode == "random":
            return self.x0_random.copy()
        if mode == "center":
            return self.domain.center()
        raise ValueError(f"x0 must be 'random' or 'center', got {mode!r}")

    def player_payoffs(self, x: np.ndarray) -> np.ndarray:
        """Each player's expected payoff at the profile x (the game view's rewards)."""
        if self.family == "bimatrix":
            m = self.params["m"]
            p, q = x[:m], x[m:]
            return np.array([p @ self.payoffs["R"] @ q, p @ self.payoffs["C"] @ q])
        if self.family == "polymatrix":
            mixed = np.stack([x, 1.0 - x], axis=1)  # (d, 2): [P(action 1), P(action 0)]
            return np.einsum("ia,ijab,jb->i", mixed, self.payoffs["P"], mixed)
        raise ValueError(f"{self.family} instances are not games")

    def payoff_gradients(self, x: np.ndarray) -> np.ndarray:
        """Each player's payoff gradient in its own strategy: (R y, C^T x) | A x + b."""
        if self.family == "bimatrix":
            m = self.params["m"]
            return np.concatenate([self.payoffs["R"] @ x[m:], self.payoffs["C"].T @ x[:m]])
        if self.family == "polymatrix":
            return self.payoffs["A"] @ x + self.payoffs["b"]
        raise ValueError(f"{self.family} instances are not games")

    def exploitability(self, x: np.ndarray) -> float:
        """The largest gain of a unilateral deviation (0 exactly at a Nash equilibrium)."""
        grad = self.payoff_gradients(x)
        if self.family == "bimatrix":
            m = self.params["m"]
            gains = [grad[:m].max() - x[:m] @ grad[:m], grad[m:].max() - x[m:] @ grad[m:]]
            return float(max(gains))
        gains = (1.0 - x) * np.maximum(grad, 0.0) + x * np.maximum(-grad, 0.0)
        return float(gains.max())

    def key(self) -> tuple:
        return (self.family, self.seed, tuple(sorted((k, str(v)) for k, v in self.params.items())))


def haar_orthogonal(d: int, rng: np.random.Generator) -> np.ndarray:
    """Haar-distributed orthogonal matrix (QR of a Gaussian with the sign fix of Mezzadri 2007)."""
    z = rng.standard_normal((d, d))
    q, r = np.linalg.qr(z)
    return q * np.sign(np.diag(r))


def _uniform_ball(center: np.ndarray, radius: float, rng: np.random.Generator) -> np.ndarray:
    d = center.size
    direction = rng.standard_normal(d)
    direction /= np.linalg.norm(direction)
    return center + radius * rng.random() ** (1.0 / d) * direction


def polymatrix_game(d: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(A, b, P) of a random binary-action polymatrix game, scaled so ||A||_1, ||A||_inf <= 1.

    P[i, j] is player i's 2x2 payoff block against j (rows: i plays 1/0), after scaling.
    """
    blocks = rng.uniform(-1.0, 1.0, size=(d, d, 2, 2))
    p11, p12, p21, p22 = blocks[..., 0, 0], blocks[..., 0, 1], blocks[..., 1, 0], blocks[..., 1, 1]
    off_diag = ~np.eye(d, dtype=bool)
    A = np.where(off_diag, (p11 - p21) - (p12 - p22), 0.0)
    b = np.where(off_diag, p12 - p22, 0.0).sum(axis=1)
    scale = max(np.abs(A).sum(axis=0).max(), np.abs(A).sum(axis=1).max())
    blocks = np.where(off_diag[..., None, None], blocks, 0.0)
    return A / scale, b / scale, blocks / scale


def cyclic_game(m: int, rng: np.random.Generator) -> np.ndarray:
    """Row payoff of a cyclic tournament (i beats the next (m-1)/2), matching pennies at m = 2."""
    if m == 2:
        base = np.array([[1.0, -1.0], [-1.0, 1.0]])
    elif m % 2 == 1:
        base = np.zeros((m, m))
        for i in range(m):
            for k in range(1, (m - 1) // 2 + 1):
                base[i, (i + k) % m] = 1.0
                base[(i + k) % m, i] = -1.0
    else:
        raise ValueError(f"cyclic games need m = 2 or odd m, got {m}")
    return 0.5 * (base + 1.0) + rng.uniform(-0.1, 0.1, size=(m, m))


def bimatrix_game(m: int, n: int, game: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    if game == "general":
        return rng.random((m, n)), rng.random((m, n))
    if game == "zerosum":
        R = rng.random((m, n))
        return R, -R
    if game == "cyclic":
        if m != n:
            raise ValueError(f"cyclic games are square, got m={m}, n={n}")
        R = cyclic_game(m, rng)
        return R, -R
    if game == "savani":
        if m != n:
            raise ValueError(f"Savani-von Stengel games are square, got m={m}, n={n}")
        return savani_von_stengel_game(m, rng)
    raise ValueError(f"game must be one of {GAMES}, got {game!r}")


def make_instance(
    family: str,
    seed: int,
    d: int = 2,
    rho: float = 0.5,
    lam: float = 0.2,
    m: int = 2,
    n: int = 2,
    game: str = "general",
    map: str = "rotation",
    version: int = 0,
) -> AffineInstance:
    """The instance of ``family`` drawn from ``seed`` (a numpy Generator seeded once).

    ``version`` is the problem version (PerformativeAffine-v0 / -v1) whose draw is wanted.
    """
    if version not in (0, 1):
        raise ValueError(f"version must be 0 or 1, got {version!r}")
    rng = np.random.default_rng([int(seed), FAMILIES.index(family) if family in FAMILIES else 99])
    if family == "contractive":
        if not 0.0 <= rho < 1.0:
            raise ValueError(f"contractive instances need 0 <= rho < 1, got {rho}")
        x_s = rng.uniform(0.2, 0.8, size=d)
        M = rho * haar_orthogonal(d, rng)
        c = x_s - M @ x_s
        x0 = rng.random(d)
        return AffineInstance(family, seed, Box(d), M, c, x0, known_ps=x_s,
                              params={"d": d, "rho": rho})
    if family == "nonexpansive":
        if map not in MAPS:
            raise ValueError(f"map must be one of {MAPS}, got {map!r}")
        x_s = np.full(d, 0.5) if version == 0 else rng.uniform(0.2, 0.8, size=d)
        M = haar_orthogonal(d, rng) if map == "rotation" else -np.eye(d)
        c = x_s - M @ x_s
        x0 = _uniform_ball(x_s, 0.5, rng)
        for _ in range(100 if version >= 1 else 0):  # v1: inside X, by rejection
            if np.all((x0 >= 0.0) & (x0 <= 1.0)):
                break
            x0 = _uniform_ball(x_s, 0.5, rng)
        x0 = np.clip(x0, 0.0, 1.0) if version >= 1 else x0
        return AffineInstance(family, seed, Box(d), M, c, x0, known_ps=x_s,
                              params={"d": d, "map": map})
    if family == "polymatrix":
        A, b, P = polymatrix_game(d, rng)
        x0 = rng.random(d)
        return AffineInstance(family, seed, Box(d), np.eye(d) + lam * A, lam * b, x0,
                              payoffs={"A": A, "b": b, "P": P}, params={"d": d, "lam": lam})
    if family == "bimatrix":
        R, C = bimatrix_game(m, n, game, rng)
        M = np.block([[np.eye(m), lam * R], [lam * C.T, np.eye(n)]])
        x0 = np.concatenate([rng.dirichlet(np.ones(m)), rng.dirichlet(np.ones(n))])
        return AffineInstance(family, seed, SimplexProduct(m, n), M, np.zeros(m + n), x0,
                              payoffs={"R": R, "C": C},
                              params={"m": m, "n": n, "game": game, "lam": lam})
    raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
