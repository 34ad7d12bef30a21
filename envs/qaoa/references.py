"""Reference values: exact MaxCut (papergym.maxcut), osv.json with its status, the GW SDP bound.

``reference_cut(name)`` returns (OPT, source) for an instance: ``brute_force`` for N ≤ 24
(:func:`papergym.maxcut.exact_maxcut`)
(generated instances and gka1b), else ``osv_optimal`` / ``osv_best_known`` from osv.json.
osv.json itself does not say which values are proven optimal; [recon] the BiqMac families
(bqp, be, g05, pm1s, pm1d, w, pw, gka) were solved to optimality by the BiqMac/BiqCrunch
solvers and are marked ``optimal`` up to 121 nodes; the torus (t2g, t3g) and Ising chain
values, Gset, and every larger file are ``best_known``. Some large values of osv.json are not
optima: simulated annealing (1,000 sweeps) cuts 116,586 on bqp500-1 (the OR-Library optimum)
against 115,764 there, 128,209 on bqp500-2 (128,053) and 61,187 on gka1f (61,039). They stay
the denominators of r, as in the paper's code, so a strong classical reference can score r
slightly above 1 on them. :func:`check_against_reference` makes a cut above an optimal value
an error (a bookkeeping bug) and logs a cut above a best-known value as a new best-known.

Goemans–Williamson: max ¼ Σ_uv W_uv (1 − X_uv) over X ⪰ 0, diag X = 1 (cvxpy + SCS, default
tolerances); its value bounds MaxCut from above; random-hyperplane rounding of the Gram
factor gives ≥ 0.878·SDP in expectation for non-negative weights.
"""

from __future__ import annotations

import logging

import numpy as np

from papergym.maxcut import (
    EXACT_MAX_NODES,
    MaxCutInstance,
    best_known_cut,
    cut_value,
    exact_maxcut,
    load_maxcut,
)

log = logging.getLogger(__name__)
BRUTE_FORCE_MAX_NODES = EXACT_MAX_NODES
OPTIMAL_PREFIXES = ("bqp", "be", "g05", "pm1s", "pm1d", "w", "pw", "gka")
OPTIMAL_MAX_NODES = 121  # larger osv values are best-known (some are beaten: module docstring)
_REFERENCE_CACHE: dict[str, tuple[float, str]] = {}
NEW_BEST_KNOWN: dict[str, float] = {}


def osv_status(name: str, n: int | None = None) -> str:
    """``optimal`` or ``best_known`` for an osv.json entry ([recon], see module docstring)."""
    if name.startswith(("ising", "t2g", "t3g", "G")) and not name.startswith("g05"):
        return "best_known"
    if not name.startswith(OPTIMAL_PREFIXES):
        return "best_known"
    n = load_maxcut(name).n if n is None else n
    return "optimal" if n <= OPTIMAL_MAX_NODES else "best_known"


def reference_cut(instance: MaxCutInstance) -> tuple[float, str]:
    """(OPT, source) for an instance; brute force when N ≤ 24, else osv.json."""
    key = instance.name
    if key in _REFERENCE_CACHE:
        return _REFERENCE_CACHE[key]
    if instance.n <= BRUTE_FORCE_MAX_NODES:
        value, _ = exact_maxcut(instance)
        result = (value, "brute_force")
    else:
        try:
            value = best_known_cut(key)
        except KeyError:
            raise KeyError(
                f"no reference cut for {key!r}: not in osv.json and too large for brute force "
                f"(N = {instance.n} > {BRUTE_FORCE_MAX_NODES})"
            ) from None
        result = (value, f"osv_{osv_status(key, instance.n)}")
    _REFERENCE_CACHE[key] = result
    return result


def check_against_reference(name: str, cut: float, reference: float, source: str,
                            tolerance: float = 1e-6) -> None:
    """A cut above a proven optimum is a bug; above a best-known value it is news."""
    slack = tolerance * max(1.0, abs(reference))
    if cut <= reference + slack:
        return
    if source in ("brute_force", "osv_optimal"):
        raise AssertionError(
            f"{name}: cut {cut:g} exceeds the optimal value {reference:g} ({source}); "
            "the assignment or the bookkeeping is wrong"
        )
    if cut > NEW_BEST_KNOWN.get(name, -np.inf):
        NEW_BEST_KNOWN[name] = cut
        log.warning("%s: new best-known cut %g (osv %g)", name, cut, reference)


def performance_ratio(cut: float, optimum: float, weights_sum_negative: float) -> float:
    """r = (cut − SumNeg)/(OPT − SumNeg) [code]; in [0, 1] for cuts ≤ OPT."""
    return (cut - weights_sum_negative) / (optimum - weights_sum_negative)


def normalized_score(cut: float, optimum: float, weights_sum: float) -> float:
    """ns = (cut − Σw/2)/(OPT − Σw/2): 0 = a uniform random cut in expectation, 1 = OPT."""
    return (cut - weights_sum / 2) / (optimum - weights_sum / 2)


def goemans_williamson_sdp(weights: np.ndarray, max_iters: int | None = None,
                          ) -> tuple[float, np.ndarray]:
    """The GW SDP value and a Gram factor V (rows are unit vectors) via cvxpy + SCS.

    Default SCS tolerances; ``max_iters`` caps SCS's iterations (then the value is not a
    certified bound, but the factor still rounds to valid cuts). The weights are divided by
    max|w| for the solve (conditioning) and the value is scaled back.
    """
    import cvxpy as cp

    n = weights.shape[0]
    scale = max(float(np.abs(weights).max()), 1e-300)
    laplacian = (np.diag(weights.sum(axis=1)) - weights) / scale
    gram = cp.Variable((n, n), PSD=True)
    problem = cp.Problem(cp.Maximize(cp.trace(laplacian @ gram) / 4), [cp.diag(gram) == 1])
    problem.solve(solver=cp.SCS, **({} if max_iters is None else {"max_iters": int(max_iters)}))
    x = np.asarray(gram.value)
    x = (x + x.T) / 2
    eigenvalues, eigenvectors = np.linalg.eigh(x)
    factor = eigenvectors * np.sqrt(np.clip(eigenvalues, 0.0, None))
    factor /= np.maximum(np.linalg.norm(factor, axis=1, keepdims=True), 1e-12)
    return float(problem.value) * scale, factor


def hyperplane_cuts(weights: np.ndarray, factor: np.ndarray, count: int,
                    rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Cut values and sides of ``count`` random-hyperplane roundings of a Gram factor."""
    normals = rng.standard_normal((factor.shape[1], count))
    sides = (factor @ normals >= 0).T  # (count, n)
    return cut_value(weights, sides), sides.astype(np.int8)
