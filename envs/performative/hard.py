"""Hard bimatrix games (Savani and von Stengel 2006) and the Lemke-Howson algorithm.

The paper's PPAD-hardness (Anagnostides et al. 2026) runs through Nash equilibria of games, so
the game view needs instances on which path-following search provably takes exponentially
many steps. Savani and von Stengel ("Hard-to-solve bimatrix games", Econometrica 74(2), 2006)
build d x d games (d even) from two *dual cyclic polytopes*: every Lemke-Howson path, from
every dropped label, has length exponential in d.

Construction [classic, re-derived here]:

1. A cyclic polytope in R^d is the convex hull of 2d points on the moment curve; any curve
   t -> (p_1(t), ..., p_d(t)) with p a polynomial basis of degree <= d without constant term
   gives the same combinatorics, so we use Chebyshev polynomials T_1..T_d at sorted points
   t_0 < ... < t_{2d-1} in (-1, 1) (random, seeded: every draw is the same hard game up to
   its numbers). Centred at the points' mean, its polar {z : c_k^T z <= 1} is the dual cyclic
   polytope; facet k belongs to point k, and its vertices are the d-sets of facets obeying
   Gale's evenness condition.
2. The d facets {0..d-1} meet at a vertex v0 (a contiguous block is a Gale-even set). The
   affine change of coordinates x = 1 - C_K z (C_K = those facets' normals) maps v0 to 0 and
   those facets to x >= 0, and every other facet j to a column of B:
   B_j = -C_K^{-T} c_j / (1 - c_j^T v0); so P = {x >= 0, B^T x <= 1} is a best-response polytope.
3. Labels: in the row player's polytope P facet k carries label k (rows 0..d-1, then columns);
   in the column player's polytope Q = {y >= 0, A y <= 1} facet p carries label perm(p) with
   the permutation of Savani and von Stengel (0-based, d = 6: 0 2 1 4 3 5 | 7 6 9 8 11 10).
   The facets of Q at positions d..2d-1 become y >= 0, the others the rows of A.

The payoffs are then rescaled to [0, 1] (an affine map with positive slope per player, which
keeps every Nash equilibrium). ``lemke_howson`` is the textbook complementary pivoting on the
two tableaux (von Stengel, "Computing equilibria for two-person games", 2002); it is the
exact reference on these games and its pivot count is the path length.
"""

from __future__ import annotations

import numpy as np


def svs_permutation(d: int) -> np.ndarray:
    """perm(p) for p = 0..2d-1: the labels of the second dual cyclic polytope's facets."""
    perm = np.arange(2 * d)
    for i in range(2, d, 2):  # first half: swap (i - 1, i) for even i
        perm[i - 1], perm[i] = i, i - 1
    for i in range(d, 2 * d - 1, 2):  # second half: swap (i, i + 1)
        perm[i], perm[i + 1] = i + 1, i
    return perm


def dual_cyclic_normals(d: int, rng: np.random.Generator) -> np.ndarray:
    """2d facet normals (rows) of a dual cyclic polytope in R^d, in moment-curve order.

    The curve parameters are the 2d Chebyshev nodes, each jittered by up to 0.3 of its
    spacing (seeded): distinct and ordered, so the combinatorics are those of the cyclic
    polytope; Chebyshev nodes and polynomials keep float64 exact through d = 8 (condition
    numbers ~1e4, 1e7, 1e11 at d = 4, 6, 8; at d = 10 pivoting breaks down).
    """
    k = np.arange(2 * d)
    t = -np.cos((k + 0.5 + rng.uniform(-0.3, 0.3, size=2 * d)) * np.pi / (2 * d))
    points = np.polynomial.chebyshev.chebvander(t, d)[:, 1:]  # T_1(t) .. T_d(t)
    return points - points.mean(axis=0)


def _polytope_matrix(normals: np.ndarray, coordinate_facets: np.ndarray,
                     other_facets: np.ndarray) -> np.ndarray:
    """B with {x >= 0, B^T x <= 1} affinely equivalent to {z : normals z <= 1}; x_i is the
    slack of facet coordinate_facets[i], column j is facet other_facets[j]."""
    C_K = normals[coordinate_facets]
    v0 = np.linalg.solve(C_K, np.ones(len(coordinate_facets)))
    slack = 1.0 - normals[other_facets] @ v0
    if np.any(slack <= 1e-12):
        raise ValueError("the coordinate facets do not meet at a simple vertex")
    return -np.linalg.solve(C_K.T, normals[other_facets].T) / slack


def _rescale(P: np.ndarray) -> np.ndarray:
    return (P - P.min()) / (P.max() - P.min())


def savani_von_stengel_game(d: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(R, C) of a d x d hard game (d even, >= 2), payoffs in [0, 1]."""
    if d < 2 or d % 2:
        raise ValueError(f"Savani-von Stengel games need an even size d >= 2, got {d}")
    first, second = dual_cyclic_normals(d, rng), dual_cyclic_normals(d, rng)
    half = np.arange(d)
    # row player's polytope P: facet k has label k; facets 0..d-1 are x >= 0, d..2d-1 columns
    B = _polytope_matrix(first, half, half + d)
    # column player's polytope Q: facet p has label perm(p); y_j >= 0 is the facet labelled d + j
    perm = svs_permutation(d)
    inverse = np.argsort(perm)
    A = _polytope_matrix(second, inverse[half + d], inverse[half]).T  # row i: facet labelled i
    return _rescale(A), _rescale(B)


def lemke_howson(R: np.ndarray, C: np.ndarray, label: int = 0, max_pivots: int = 10**6
                 ) -> tuple[np.ndarray, int]:
    """A Nash equilibrium (x, y) of (R, C) by Lemke-Howson dropping ``label``, and the number
    of pivots (the path length). Assumes a nondegenerate game (no ratio-test ties)."""
    m, n = R.shape
    A, B = R - R.min() + 1.0, C - C.min() + 1.0  # positive payoffs: bounded polytopes
    # tableau over y (labels m..m+n-1) and slacks s (labels 0..m-1): A y + s = 1
    tab_q = np.hstack([A, np.eye(m), np.ones((m, 1))])
    labels_q = np.concatenate([np.arange(m, m + n), np.arange(m)])
    basis_q = list(range(n, n + m))
    # tableau over x (labels 0..m-1) and slacks r (labels m..m+n-1): B^T x + r = 1
    tab_p = np.hstack([B.T, np.eye(n), np.ones((n, 1))])
    labels_p = np.concatenate([np.arange(m), np.arange(m, m + n)])
    basis_p = list(range(m, m + n))
    tableaux = [(tab_p, labels_p, basis_p), (tab_q, labels_q, basis_q)]
    side = 0 if label < m else 1  # x_label enters P's tableau, or y_(label - m) enters Q's
    entering_label = label
    pivots = 0
    while pivots < max_pivots:
        tab, labels, basis = tableaux[side]
        col = int(np.nonzero(labels == entering_label)[0][0])
        column = tab[:, col]
        rows = np.nonzero(column > 1e-12)[0]
        ratios = tab[rows, -1] / column[rows]
        row = int(rows[np.argmin(ratios)])
        tab[row] /= tab[row, col]
        for r in range(tab.shape[0]):
            if r != row:
                tab[r] -= tab[r, col] * tab[row]
        leaving = basis[row]
        basis[row] = col
        pivots += 1
        if labels[leaving] == label:
            break
        entering_label = int(labels[leaving])
        side = 1 - side
    else:
        raise RuntimeError(f"Lemke-Howson: no equilibrium within {max_pivots} pivots")
    x, y = np.zeros(m), np.zeros(n)
    for row, var in enumerate(basis_p):
        if var < m:
            x[var] = tab_p[row, -1]
    for row, var in enumerate(basis_q):
        if var < n:
            y[var] = tab_q[row, -1]
    return np.concatenate([x / x.sum(), y / y.sum()]), pivots
