"""Exact 1-Wasserstein distances between small discrete distributions, many at once.

W1_d(mu, nu) = min_{pi >= 0, pi 1 = mu, pi^T 1 = nu} <pi, C>, C_ij = d(x_i, y_j). For supports of
at most 3 points the optimum is a basic solution, i.e. the flow on a spanning tree of the
bipartite graph K_{m,n} (81 trees for 3 x 3). Each tree's flows are a fixed linear map of the
marginals, so a batch of problems is solved by computing every tree's flows once, keeping the
non-negative ones and taking the cheapest cost [spec]. Problems with smaller supports are padded
with zero-mass points (degenerate trees remain basic solutions). Larger supports fall back to
``scipy.optimize.linprog`` (HiGHS), one problem at a time.
"""

from __future__ import annotations

from functools import cache
from itertools import combinations

import numpy as np
from scipy.optimize import linprog

MAX_TREE_SUPPORT = 3
FEASIBLE_TOL = 1e-13  # a basic flow this far below zero still counts as zero


@cache
def spanning_trees(m: int, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(cells (T, m+n-1, 2), flow maps (T, m+n-1, m+n)) of every spanning tree of K_{m,n}.

    The flow map F_T gives the tree's flows from the stacked marginals [mu; nu]: the tree's
    columns of the constraint matrix have full column rank, so F_T = pinv(A_T) solves the
    consistent system A_T x = [mu; nu] exactly."""
    cells = [(i, j) for i in range(m) for j in range(n)]
    A = np.zeros((m + n, m * n))
    for c, (i, j) in enumerate(cells):
        A[i, c] = 1.0
        A[m + j, c] = 1.0
    trees, maps = [], []
    for subset in combinations(range(m * n), m + n - 1):
        cols = A[:, subset]
        if np.linalg.matrix_rank(cols) == m + n - 1:
            trees.append([cells[c] for c in subset])
            maps.append(np.linalg.pinv(cols))
    return np.array(trees, dtype=np.int64), np.array(maps)


def pad_support(P: np.ndarray, width: int = MAX_TREE_SUPPORT) -> tuple[np.ndarray, np.ndarray]:
    """Support indices (N, width) and masses (N, width) of the rows of ``P`` (N, S), padded with
    zero-mass copies of the first support point. Rows with a larger support raise."""
    nonzero = P > 0
    counts = nonzero.sum(axis=1)
    if counts.max() > width:
        raise ValueError(f"a support of {counts.max()} points exceeds the tree solver's {width}")
    order = np.argsort(~nonzero, axis=1, kind="stable")[:, :width]
    mass = np.take_along_axis(P, order, axis=1)
    valid = np.arange(width)[None, :] < counts[:, None]
    idx = np.where(valid, order, order[:, :1])
    return idx, np.where(valid, mass, 0.0)


class TreeTransport:
    """A batch of transport problems with fixed marginals and changing costs (a metric
    iteration): flows are computed once, each ``cost`` call is a gather and a min.

    ``mu``, ``nu``: (N, 3) masses; ``xi``, ``yj``: (N, 3) the points they sit on (state ids)."""

    def __init__(self, mu: np.ndarray, nu: np.ndarray, xi: np.ndarray, yj: np.ndarray) -> None:
        cells, maps = spanning_trees(MAX_TREE_SUPPORT, MAX_TREE_SUPPORT)
        marginals = np.concatenate([mu, nu], axis=1)             # (N, 6)
        self.flows = np.einsum("tkm,nm->ntk", maps, marginals)  # (N, T, 5)
        self.feasible = np.all(self.flows >= -FEASIBLE_TOL, axis=2)
        if not self.feasible.any(axis=1).all():
            raise ValueError("a transport problem without a feasible basis (marginals differ?)")
        self.flows = np.maximum(self.flows, 0.0)
        self.rows = xi[:, cells[:, :, 0]]                        # (N, T, 5) point ids
        self.cols = yj[:, cells[:, :, 1]]

    def cost(self, d: np.ndarray) -> np.ndarray:
        """W1 under the cost matrix ``d`` (S, S) for every problem: (N,)."""
        total = np.einsum("ntk,ntk->nt", self.flows, d[self.rows, self.cols])
        return np.where(self.feasible, total, np.inf).min(axis=1)


def w1_trees(mu: np.ndarray, nu: np.ndarray, C: np.ndarray) -> np.ndarray:
    """W1 of a batch of problems with their own cost matrices: ``mu`` (N, m), ``nu`` (N, n),
    ``C`` (N, m, n), m, n <= 3 (pad smaller problems with zero mass)."""
    N, m = mu.shape
    n = nu.shape[1]
    cells, maps = spanning_trees(m, n)
    flows = np.einsum("tkm,nm->ntk", maps, np.concatenate([mu, nu], axis=1))
    feasible = np.all(flows >= -FEASIBLE_TOL, axis=2)
    costs = C[:, cells[:, :, 0], cells[:, :, 1]]
    total = np.einsum("ntk,ntk->nt", np.maximum(flows, 0.0), costs)
    return np.where(feasible, total, np.inf).min(axis=1)


def w1_linprog(mu: np.ndarray, nu: np.ndarray, C: np.ndarray) -> float:
    """W1 of one problem of any size by the transport LP (HiGHS)."""
    m, n = C.shape
    A_eq = np.zeros((m + n, m * n))
    for i in range(m):
        A_eq[i, i * n:(i + 1) * n] = 1.0
    for j in range(n):
        A_eq[m + j, j::n] = 1.0
    res = linprog(C.ravel(), A_eq=A_eq, b_eq=np.concatenate([mu, nu]), bounds=(0, None),
                  method="highs", options={"primal_feasibility_tolerance": 1e-10,
                                           "dual_feasibility_tolerance": 1e-10})
    if res.status != 0:
        raise RuntimeError(f"transport LP failed: {res.message}")
    return float(res.fun)
