"""Reference values: Gray-code brute force, osv.json with its status, the GW SDP bound.

``reference_cut(name)`` returns (OPT, source) for an instance: ``brute_force`` for N ≤ 24
(generated instances and gka1b), else ``osv_optimal`` / ``osv_best_known`` from osv.json.
osv.json itself does not say which values are proven optimal; [recon] the BiqMac families
(bqp, be, g05, pm1s, pm1d, w, pw, gka) were solved to optimality by the BiqMac/BiqCrunch
solvers and are marked ``optimal``; the torus (t2g, t3g) and Ising chain values, and Gset,
are ``best_known``. :func:`check_against_reference` makes a cut above an optimal value an
error (a bookkeeping bug) and logs a cut above a best-known value as a new best-known.

Goemans–Williamson: max ¼ Σ_uv W_uv (1 − X_uv) over X ⪰ 0, diag X = 1 (cvxpy + SCS, default
tolerances); its value bounds MaxCut from above; random-hyperplane rounding of the Gram
factor gives ≥ 0.878·SDP in expectation for non-negative weights.
"""

from __future__ import annotations

import logging

import numpy as np

from papergym.maxcut import MaxCutInstance, best_known_cut

log = logging.getLogger(__name__)
BRUTE_FORCE_MAX_NODES = 24
OPTIMAL_PREFIXES = ("bqp", "be", "g05", "pm1s", "pm1d", "w", "pw", "gka")
_REFERENCE_CACHE: dict[str, tuple[float, str]] = {}
NEW_BEST_KNOWN: dict[str, float] = {}


def gray_code_maxcut(weights: np.ndarray, chunk_bits: int = 16) -> tuple[float, np.ndarray]:
    """Exact MaxCut of a dense weight matrix: node n−1 fixed on side 0, Gray-code order.

    Consecutive Gray codes differ in one bit k, so cut(next) = cut(prev) + Δ with
    Δ = Σ_j w_kj (1 − 2[s_k ≠ s_j]) evaluated before the flip: O(n) per code instead of
    O(|E|). Vectorized per chunk of codes, with the running cut carried across chunks.
    """
    weights = np.asarray(weights, dtype=float)
    n = weights.shape[0]
    if n > BRUTE_FORCE_MAX_NODES:
        raise ValueError(f"brute force is limited to {BRUTE_FORCE_MAX_NODES} nodes, got {n}")
    if n <= 1:
        return 0.0, np.zeros(n, dtype=np.int8)
    free = n - 1
    total_codes = 1 << free
    best_value, best_gray = 0.0, 0  # code 0: every node on side 0, cut 0
    running = 0.0
    bits = np.arange(free, dtype=np.int64)
    chunk = 1 << min(free, chunk_bits)
    for start in range(1, total_codes, chunk):
        t = np.arange(start, min(start + chunk, total_codes), dtype=np.int64)
        previous_gray = (t - 1) ^ ((t - 1) >> 1)
        flipped = np.log2((t & -t).astype(float)).astype(np.int64)  # the bit that changes
        sides = ((previous_gray[:, None] >> bits) & 1).astype(np.int8)  # before the flip
        own = sides[np.arange(t.size), flipped]
        differ = sides != own[:, None]  # s_j ≠ s_k over the free nodes; node n−1 is side 0
        row = weights[flipped, :free]
        delta = (row * (1 - 2 * differ)).sum(axis=1) + weights[flipped, free] * (1 - 2 * own)
        values = running + np.cumsum(delta)
        i = int(np.argmax(values))
        if values[i] > best_value:
            best_value, best_gray = float(values[i]), int(t[i] ^ (t[i] >> 1))
        running = float(values[-1])
    assignment = np.zeros(n, dtype=np.int8)
    assignment[:free] = (best_gray >> bits) & 1
    return best_value, assignment


def osv_status(name: str) -> str:
    """``optimal`` or ``best_known`` for an osv.json entry ([recon], see module docstring)."""
    if name.startswith(("ising", "t2g", "t3g", "G")) and not name.startswith("g05"):
        return "best_known"
    return "optimal" if name.startswith(OPTIMAL_PREFIXES) else "best_known"


def reference_cut(instance: MaxCutInstance) -> tuple[float, str]:
    """(OPT, source) for an instance; brute force when N ≤ 24, else osv.json."""
    key = instance.name
    if key in _REFERENCE_CACHE:
        return _REFERENCE_CACHE[key]
    if instance.n <= BRUTE_FORCE_MAX_NODES:
        value, _ = gray_code_maxcut(instance.adjacency())
        result = (value, "brute_force")
    else:
        try:
            value = best_known_cut(key)
        except KeyError:
            raise KeyError(
                f"no reference cut for {key!r}: not in osv.json and too large for brute force "
                f"(N = {instance.n} > {BRUTE_FORCE_MAX_NODES})"
            ) from None
        result = (value, f"osv_{osv_status(key)}")
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
    spin = 1.0 - 2.0 * sides
    total = np.triu(weights, 1).sum()
    values = 0.5 * (total - 0.5 * np.einsum("ci,ij,cj->c", spin, weights, spin))
    return values, sides.astype(np.int8)
