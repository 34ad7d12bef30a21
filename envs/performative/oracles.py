"""Exact oracles: the set of performatively stable points and the performative optimum.

- Box domains (``exact_ps``): every PS point x = Pi_X(g(x)) has an active set (x_i = 0, 1 or
  free); with v(x) = g(x) - x = A x + b (A = M - I, b = c) it satisfies v_F = 0 on the free
  coordinates, v_i <= 0 where x_i = 0 and v_i >= 0 where x_i = 1 [derived]. We enumerate the
  3^d active sets grouped by their free set F (2^d linear solves, each with all 2^|not F|
  binary patterns as right-hand sides), which takes well under a second at d = 10.
  Singular A_FF (a continuum of PS points, e.g. a rotation with a fixed axis) is skipped; such
  instances carry a PS point by construction (``instance.known_ps``) and the distance to
  their PS set is computed from ker(I - Q) (``nonexpansive_ps_distance``).
  The enumerator stops at d = ENUMERATION_MAX_DIM (10: 3^10 = 59,049 active sets, about a
  second; d = 12 takes 3-8 s); beyond it
  ``milp_box_ps`` finds one PS point (the one nearest x_0 in l1) from the complementarity
  MILP below with HiGHS (``scipy.optimize.milp``).
- Simplex products (``bimatrix_equilibria``): PS = Nash equilibria of (R, C) [paper's VI -> PS
  map]; all equilibria by support enumeration (nondegenerate games; m, n <= 6 here), and on
  the Savani-von Stengel games by Lemke-Howson from every label (their equilibrium is unique;
  support enumeration is numerically ambiguous there from d = 8).
- Performative optimum: box = bounded least squares min 1/2 ||(I - M) x - c||^2
  (``scipy.optimize.lsq_linear``); simplex product = SLSQP on the same convex quadratic.
Results are cached by instance key.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, lsq_linear, milp, minimize

from papergym.envs.performative.hard import lemke_howson
from papergym.envs.performative.instances import AffineInstance

TOL = 1e-9
ENUMERATION_MAX_DIM = 10
MILP_TIME_LIMIT_S = 60.0


def _binary_patterns(k: int) -> np.ndarray:
    return ((np.arange(1 << k)[:, None] >> np.arange(k)) & 1).astype(np.float64)


def enumerate_box_ps(A: np.ndarray, b: np.ndarray, tol: float = TOL) -> np.ndarray:
    """All x in [0,1]^d with v = A x + b complementary to x's active set (rows of the result)."""
    d = b.size
    if d > ENUMERATION_MAX_DIM:
        raise ValueError(f"enumerate_box_ps: 3^{d} active sets is beyond the enumerator "
                         f"(d <= {ENUMERATION_MAX_DIM}); use milp_box_ps")
    found: list[np.ndarray] = []
    for mask in range(1 << d):
        free = np.array([(mask >> i) & 1 for i in range(d)], dtype=bool)
        fixed = ~free
        patterns = _binary_patterns(int(fixed.sum()))  # (P, |fixed|) values of the fixed coords
        X = np.zeros((patterns.shape[0], d))
        X[:, fixed] = patterns
        if free.any():
            A_ff = A[np.ix_(free, free)]
            if np.linalg.cond(A_ff) > 1e12:
                continue
            rhs = -(b[free][:, None] + A[np.ix_(free, fixed)] @ patterns.T)
            X[:, free] = np.linalg.solve(A_ff, rhs).T
            inside = np.all((X[:, free] >= -tol) & (X[:, free] <= 1 + tol), axis=1)
        else:
            inside = np.ones(X.shape[0], dtype=bool)
        V = X @ A.T + b
        at_zero = fixed & np.isclose(X, 0.0)
        at_one = fixed & np.isclose(X, 1.0)
        ok = inside & np.all(~at_zero | (V <= tol), axis=1) & np.all(~at_one | (V >= -tol), axis=1)
        found.extend(np.clip(X[ok], 0.0, 1.0))
    return _dedupe(found, dim=d)


def milp_box_ps(A: np.ndarray, b: np.ndarray, target: np.ndarray,
                time_limit: float = MILP_TIME_LIMIT_S) -> np.ndarray | None:
    """One PS point of the box instance v(x) = A x + b, the l1-nearest to ``target``, or None.

    Complementarity as a MILP [derived]: binaries lo_i (x_i = 0, v_i <= 0) and hi_i (x_i = 1,
    v_i >= 0), lo_i + hi_i <= 1; x_i <= 1 - lo_i, x_i >= hi_i, -V lo_i <= v_i <= V hi_i with
    V_i = sum_j |A_ij| + |b_i| >= |v_i| on the box, so lo = hi = 0 forces v_i = 0 (x_i free).
    Objective sum_i t_i with t_i >= |x_i - target_i|. Variables [x, lo, hi, t].
    """
    d = b.size
    V = np.abs(A).sum(axis=1) + np.abs(b)
    E, Z = np.eye(d), np.zeros((d, d))
    rows = [
        (np.hstack([Z, E, E, Z]), -np.inf, 1.0),                    # lo + hi <= 1
        (np.hstack([E, E, Z, Z]), -np.inf, 1.0),                    # x + lo <= 1
        (np.hstack([E, Z, -E, Z]), 0.0, np.inf),                    # x - hi >= 0
        (np.hstack([A, Z, -np.diag(V), Z]), -np.inf, -b),           # A x + b <= V hi
        (np.hstack([A, np.diag(V), Z, Z]), -b, np.inf),             # A x + b >= -V lo
        (np.hstack([E, Z, Z, -E]), -np.inf, target),                # x - t <= target
        (np.hstack([-E, Z, Z, -E]), -np.inf, -target),              # -x - t <= -target
    ]
    constraints = [LinearConstraint(M, np.broadcast_to(lo, d), np.broadcast_to(hi, d))
                   for M, lo, hi in rows]
    cost = np.concatenate([np.zeros(3 * d), np.ones(d)])
    integrality = np.concatenate([np.zeros(d), np.ones(2 * d), np.zeros(d)])
    bounds = Bounds(np.zeros(4 * d), np.concatenate([np.ones(3 * d), np.full(d, np.inf)]))
    res = milp(cost, constraints=constraints, integrality=integrality, bounds=bounds,
               options={"time_limit": time_limit, "mip_rel_gap": 1e-9})
    if res.x is None:
        return None
    x = np.clip(res.x[:d], 0.0, 1.0)
    # polish the free coordinates: solve v_F = 0 exactly on the active set the MILP chose
    lo, hi = res.x[d:2 * d] > 0.5, res.x[2 * d:3 * d] > 0.5
    free = ~(lo | hi)
    x[lo], x[hi] = 0.0, 1.0
    if free.any():
        x[free] = np.linalg.solve(A[np.ix_(free, free)], -(b[free] + A[np.ix_(free, ~free)] @ x[~free]))
    return np.clip(x, 0.0, 1.0)


def _dedupe(points: list[np.ndarray], dim: int, tol: float = 1e-7) -> np.ndarray:
    unique: list[np.ndarray] = []
    for p in points:
        if all(np.linalg.norm(p - q) > tol for q in unique):
            unique.append(p)
    return np.array(unique).reshape(-1, dim)


def bimatrix_equilibria(R: np.ndarray, C: np.ndarray, tol: float = TOL) -> np.ndarray:
    """All Nash equilibria (x, y) of a nondegenerate bimatrix game by support enumeration."""
    m, n = R.shape
    found: list[np.ndarray] = []
    for k in range(1, min(m, n) + 1):
        for rows in itertools.combinations(range(m), k):
            for cols in itertools.combinations(range(n), k):
                y = _indifference(R[np.ix_(rows, cols)], n, cols)
                x = _indifference(C[np.ix_(rows, cols)].T, m, rows)
                if x is None or y is None:
                    continue
                row_payoffs, col_payoffs = R @ y, C.T @ x
                if row_payoffs.max() <= row_payoffs[list(rows)].min() + tol and (
                    col_payoffs.max() <= col_payoffs[list(cols)].min() + tol
                ):
                    found.append(np.concatenate([x, y]))
    return _dedupe(found, dim=m + n)


def _indifference(P: np.ndarray, size: int, support: tuple[int, ...]) -> np.ndarray | None:
    """Mixed strategy on ``support`` that makes the opponent (payoffs P) indifferent."""
    k = len(support)
    system = np.zeros((k + 1, k + 1))
    system[:k, :k] = P
    system[:k, k] = -1.0
    system[k, :k] = 1.0
    rhs = np.zeros(k + 1)
    rhs[k] = 1.0
    try:
        sol = np.linalg.solve(system, rhs)
    except np.linalg.LinAlgError:
        return None
    if np.any(sol[:k] < -TOL):
        return None
    strategy = np.zeros(size)
    strategy[list(support)] = np.clip(sol[:k], 0.0, None)
    return strategy / strategy.sum()


_PS_CACHE: dict[tuple, np.ndarray] = {}


def lemke_howson_equilibria(R: np.ndarray, C: np.ndarray) -> np.ndarray:
    """The equilibria Lemke-Howson reaches from the m + n labels (deduplicated)."""
    return _dedupe([lemke_howson(R, C, label)[0] for label in range(sum(R.shape))],
                   dim=sum(R.shape))


def exact_ps(instance: AffineInstance) -> np.ndarray:
    """Every isolated PS point of ``instance`` (rows), cached by instance key; beyond the
    enumerator (d > 10) the one PS point nearest x_0 in l1 found by the MILP (empty if it timed
    out), so that ``distance_to_ps`` is the distance to that point."""
    key = instance.key()
    if key not in _PS_CACHE:
        if instance.family == "bimatrix" and instance.params.get("game") == "savani":
            points = lemke_howson_equilibria(instance.payoffs["R"], instance.payoffs["C"])
        elif instance.family == "bimatrix":
            points = bimatrix_equilibria(instance.payoffs["R"], instance.payoffs["C"])
        elif instance.dim > ENUMERATION_MAX_DIM:
            found = milp_box_ps(instance.M - np.eye(instance.dim), instance.c, instance.x0_random)
            points = np.zeros((0, instance.dim)) if found is None else found[None, :]
        else:
            points = enumerate_box_ps(instance.M - np.eye(instance.dim), instance.c)
        if instance.known_ps is not None and not any(
            np.linalg.norm(p - instance.known_ps) < 1e-7 for p in points
        ):
            points = np.vstack([points, instance.known_ps[None, :]])
        if len(_PS_CACHE) > 512:
            _PS_CACHE.clear()
        _PS_CACHE[key] = points
    return _PS_CACHE[key]


def nonexpansive_ps_distance(instance: AffineInstance, x: np.ndarray) -> float:
    """Distance from x to {x_s + ker(I - M)} intersected with the box (kernel dim <= 1 exactly)."""
    x_s = instance.known_ps
    _, s, vt = np.linalg.svd(np.eye(instance.dim) - instance.M)
    kernel = vt[s < 1e-9]
    if kernel.shape[0] == 0:
        return float(np.linalg.norm(x - x_s))
    if kernel.shape[0] == 1:
        u = kernel[0]
        # the segment x_s + t u inside [0,1]^d: t between the box crossings
        with np.errstate(divide="ignore"):
            lo = np.where(u > 0, -x_s / u, np.where(u < 0, (1 - x_s) / u, -np.inf))
            hi = np.where(u > 0, (1 - x_s) / u, np.where(u < 0, -x_s / u, np.inf))
        t = np.clip(u @ (x - x_s), lo.max(), hi.min())
        return float(np.linalg.norm(x - (x_s + t * u)))
    # higher-dimensional kernels (measure zero under the Haar draw): a small constrained search
    res = minimize(lambda t: 0.5 * np.sum((x_s + kernel.T @ t - x) ** 2),
                   np.zeros(kernel.shape[0]), method="SLSQP",
                   constraints=[{"type": "ineq", "fun": lambda t: x_s + kernel.T @ t},
                                {"type": "ineq", "fun": lambda t: 1 - x_s - kernel.T @ t}])
    return float(np.linalg.norm(x_s + kernel.T @ res.x - x))


def distance_to_ps(instance: AffineInstance, x: np.ndarray) -> float:
    if instance.family == "nonexpansive":
        return nonexpansive_ps_distance(instance, x)
    points = exact_ps(instance)
    if points.shape[0] == 0:
        return float("inf")
    return float(np.min(np.linalg.norm(points - x, axis=1)))


_PO_CACHE: dict[tuple, np.ndarray] = {}


def performative_optimum(instance: AffineInstance) -> np.ndarray:
    """argmin_X PR = argmin_X 1/2 ||(I - M) x - c||^2 (sigma adds a constant) [derived]."""
    key = instance.key()
    if key in _PO_CACHE:
        return _PO_CACHE[key]
    B = np.eye(instance.dim) - instance.M
    if instance.domain.kind == "box":
        x = lsq_linear(B, instance.c, bounds=(0.0, 1.0), method="bvls", tol=1e-14).x
    else:
        x = _qp_simplex(B, instance.c, instance)
    if len(_PO_CACHE) > 512:
        _PO_CACHE.clear()
    _PO_CACHE[key] = x
    return x


def _qp_simplex(B: np.ndarray, c: np.ndarray, instance: AffineInstance) -> np.ndarray:
    """min 1/2 ||B x - c||^2 over Delta_m x Delta_n (a small convex QP: SLSQP, then polish)."""
    m = instance.domain.m
    res = minimize(lambda x: 0.5 * np.sum((B @ x - c) ** 2), instance.domain.center(),
                   jac=lambda x: B.T @ (B @ x - c), method="SLSQP",
                   bounds=[(0.0, 1.0)] * instance.dim,
                   constraints=[{"type": "eq", "fun": lambda x: x[:m].sum() - 1.0},
                                {"type": "eq", "fun": lambda x: x[m:].sum() - 1.0}],
                   options={"ftol": 1e-15, "maxiter": 500})
    return instance.domain.project(res.x)
