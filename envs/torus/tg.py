"""Torus graphs: the density, its score, the Gibbs sampler and the instance generators.

Density on x in [0, 2pi)^d (Klein et al. 2020; layout of Goffinet, Hanks & Carlson 2026):
log p(x | phi) = phi . S(x) - log Z(phi), phi in R^{d x d x 2}, S(x) = (cos A, sin A) with the
angle matrix A_kk = x_k, A_ij = x_i + x_j (i < j), A_ij = x_j - x_i (i > j). Edge (i, j) owns the
four entries (phi_ij, phi_ji); its strength is their Euclidean norm.

Closed forms used by the estimators (checked against finite differences in tests/envs/test_torus.py):
- score s = d/dx phi.S(x): with G_ij = -phi_ij0 sin A_ij + phi_ij1 cos A_ij,
  s = diag(G) + rowsum(U) + colsum(U) + colsum(L) - rowsum(L) (U, L strict upper/lower parts of G);
- Laplacian of log p = -phi . (w * S(x)), w = 1 on the diagonal, 2 off it;
- full conditionals: x_k | rest ~ von Mises with natural parameters (A_k, B_k), linear in phi and in
  (cos x_j, sin x_j), j != k (:func:`conditional_coefficients`).
"""

from __future__ import annotations

import logging

import numpy as np

TWO_PI = 2.0 * np.pi
log = logging.getLogger(__name__)


# ----------------------------------------------------------------------------- the density


def angles(x: np.ndarray) -> np.ndarray:
    """The angle matrix A (..., d, d) of x (..., d)."""
    d = x.shape[-1]
    total = x[..., :, None] + x[..., None, :]
    diff = x[..., None, :] - x[..., :, None]  # A_ij = x_j - x_i below the diagonal
    upper = np.triu(np.ones((d, d), bool), 1)
    out = np.where(upper, total, diff)
    idx = np.arange(d)
    out[..., idx, idx] = x
    return out


def stats(x: np.ndarray) -> np.ndarray:
    """Sufficient statistics S(x) (..., d, d, 2) = (cos A, sin A)."""
    a = angles(x)
    return np.stack([np.cos(a), np.sin(a)], axis=-1)


def lap_weights(d: int) -> np.ndarray:
    """w: 1 on the diagonal, 2 off it (the Laplacian of S_ij is -w_ij S_ij)."""
    return 2.0 - np.eye(d)


def energy(phi: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Unnormalized log density phi . S(x) for x (..., d)."""
    return np.einsum("...ijc,ijc->...", stats(x), phi)


def score_from_angles(phi: np.ndarray, a: np.ndarray) -> np.ndarray:
    """The score d/dx phi.S(x) (b, d) from the angle matrices a (b, d, d)."""
    g = -phi[..., 0] * np.sin(a) + phi[..., 1] * np.cos(a)
    upper, lower = np.triu(g, 1), np.tril(g, -1)
    diag = np.diagonal(g, axis1=-2, axis2=-1)
    return diag + upper.sum(-1) + upper.sum(-2) + lower.sum(-2) - lower.sum(-1)


def score(phi: np.ndarray, x: np.ndarray) -> np.ndarray:
    return score_from_angles(phi, angles(np.atleast_2d(x)))


def edge_strengths(phi: np.ndarray) -> np.ndarray:
    """Symmetric (d, d) matrix of ||(phi_ij, phi_ji)||_2, zero diagonal."""
    sq = (phi ** 2).sum(-1)
    out = np.sqrt(sq + sq.T)
    np.fill_diagonal(out, 0.0)
    return out


def edge_groups_norm(phi: np.ndarray) -> np.ndarray:
    """Per-entry norm of its edge group (d, d): ||(phi_ij, phi_ji)|| broadcast to both halves."""
    return edge_strengths(phi)


# ----------------------------------------------------------------------------- conditionals


def pair_matrices(phi: np.ndarray) -> tuple[np.ndarray, ...]:
    """(a, b, P, Q, U, V): the full conditionals are A = a + C P + S Q and B = b + S U + C V.

    C, S (n, d) are cos x and sin x. With G0, G1 the symmetric phase-sum couplings (upper half of
    phi), D0 symmetric and D1 antisymmetric the phase-difference couplings (lower half; the term of
    k < m reads D0 cos(x_k - x_m) + D1 sin(x_k - x_m)): P = D0 + G0, Q = G1 + D1, U = D0 - G0,
    V = G1 - D1; all have zero diagonals.
    """
    u0, u1 = np.triu(phi[..., 0], 1), np.triu(phi[..., 1], 1)
    l0, l1 = np.tril(phi[..., 0], -1), np.tril(phi[..., 1], -1)
    g0, g1 = u0 + u0.T, u1 + u1.T
    d0, d1 = l0 + l0.T, l1.T - l1
    a, b = np.diagonal(phi[..., 0]).copy(), np.diagonal(phi[..., 1]).copy()
    return a, b, d0 + g0, g1 + d1, d0 - g0, g1 - d1


def pair_matrices_adjoint(da, db, dp, dq, du, dv) -> np.ndarray:
    """The adjoint of :func:`pair_matrices`: gradients of (a, b, P, Q, U, V) -> gradient of phi."""
    dg0, dd0 = dp - du, dp + du
    dg1, dd1 = dq + dv, dq - dv
    d = len(da)
    out = np.zeros((d, d, 2))
    upper = np.triu(np.ones((d, d), bool), 1)
    lower = upper.T
    out[..., 0] = np.where(upper, dg0 + dg0.T, np.where(lower, dd0 + dd0.T, 0.0))
    out[..., 1] = np.where(upper, dg1 + dg1.T, np.where(lower, dd1.T - dd1, 0.0))
    idx = np.arange(d)
    out[idx, idx, 0], out[idx, idx, 1] = da, db
    return out


def conditional_coefficients(phi: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Natural parameters (A, B), each (n, d), of every full conditional x_k | x_{-k}."""
    a, b, p, q, u, v = pair_matrices(phi)
    c, s = np.cos(x), np.sin(x)
    return a + c @ p + s @ q, b + s @ u + c @ v


def mean_stats(x: np.ndarray) -> np.ndarray:
    """mean_n S(x_n) (d, d, 2) from products of cos and sin (cos(x_i +- x_j) expanded): O(n d^2) in
    matrix products, without forming the (n, d, d) angle array."""
    c, s = np.cos(x), np.sin(x)
    n, d = x.shape
    cc, ss, cs, sc = c.T @ c / n, s.T @ s / n, c.T @ s / n, s.T @ c / n  # cs[i, j] = mean c_i s_j
    upper = np.triu(np.ones((d, d), bool), 1)
    out = np.empty((d, d, 2))
    out[..., 0] = np.where(upper, cc - ss, cc + ss)   # cos(x_i + x_j) above, cos(x_j - x_i) below
    out[..., 1] = np.where(upper, sc + cs, cs - sc)   # sin(x_i + x_j) above, sin(x_j - x_i) below
    idx = np.arange(d)
    out[idx, idx, 0], out[idx, idx, 1] = c.mean(0), s.mean(0)
    return out


def score_by_conditionals(phi: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The same score as :func:`score`: phi.S(x) = A_k cos x_k + B_k sin x_k + const(x_{-k}), so
    s_k = -A_k sin x_k + B_k cos x_k, with (A, B) from matrix products (O(n d^2), BLAS)."""
    big_a, big_b = conditional_coefficients(phi, x)
    return -big_a * np.sin(x) + big_b * np.cos(x)


# ----------------------------------------------------------------------------- Gibbs sampling


def gibbs(phi: np.ndarray, n: int, rng: np.random.Generator, chains: int = 1000, burn: int = 300,
          thin: int = 5) -> tuple[np.ndarray, float]:
    """n samples of TG(phi) by Gibbs sweeps over von Mises full conditionals, and the split-R-hat.

    ``chains`` independent chains start uniform; after ``burn`` sweeps every ``thin``-th sweep is
    kept until n samples exist. R-hat: the largest split-R-hat of the cos/sin summaries over
    8 pseudo-chains (4 chain groups x 2 halves of the kept sweeps).
    """
    d = phi.shape[0]
    a, b, p, q, u, v = pair_matrices(phi)
    # one matvec per coordinate: [C S] @ coef[:, k] -> (A_k - a_k, B_k - b_k)
    coef = np.stack([np.concatenate([p, q]), np.concatenate([v, u])], axis=-1)  # (2d, d, 2)
    keep = -(-n // chains)
    x = rng.uniform(0.0, TWO_PI, (chains, d))
    cs = np.concatenate([np.cos(x), np.sin(x)], axis=1)
    kept = np.empty((keep, chains, d))
    for sweep in range(burn + keep * thin):
        for k in range(d):
            nat = cs @ coef[:, k, :]
            big_a, big_b = nat[:, 0] + a[k], nat[:, 1] + b[k]
            xk = rng.vonmises(np.arctan2(big_b, big_a), np.hypot(big_a, big_b)) % TWO_PI
            x[:, k] = xk
            cs[:, k], cs[:, d + k] = np.cos(xk), np.sin(xk)
        step = sweep - burn
        if step >= 0 and (step + 1) % thin == 0:
            kept[step // thin] = x
    rhat = split_rhat(kept)
    samples = kept.transpose(1, 0, 2).reshape(-1, d)[:n]
    return samples, rhat


def split_rhat(kept: np.ndarray, groups: int = 4) -> float:
    """Max split-R-hat of cos/sin of every coordinate; kept is (sweeps, chains, d)."""
    sweeps, chains, d = kept.shape
    if sweeps < 2 or chains < groups:
        return float("nan")
    half = sweeps // 2
    summaries = np.concatenate([np.cos(kept), np.sin(kept)], axis=-1)
    pseudo = []
    for g in np.array_split(np.arange(chains), groups):
        for part in (summaries[:half, g], summaries[half:2 * half, g]):
            pseudo.append(part.reshape(-1, 2 * d))
    chains_arr = np.stack(pseudo)  # (8, draws, 2d)
    m, length = chains_arr.shape[:2]
    means = chains_arr.mean(1)
    within = chains_arr.var(1, ddof=1).mean(0)
    between = length * means.var(0, ddof=1)
    var_plus = (length - 1) / length * within + between / length
    return float(np.max(np.sqrt(var_plus / np.maximum(within, 1e-300))))


# ----------------------------------------------------------------------------- generators


def random_phi(d: int, rng: np.random.Generator, edge_prob: float = 0.5,
               pair_scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """phi and its true edge mask: diagonal N(0, 1); each edge kept w.p. edge_prob with its four
    entries N(0, s^2), s = 1 for d <= 5 and sqrt(5 / d) above (so conditionals stay O(1))."""
    if pair_scale is None:
        pair_scale = 1.0 if d <= 5 else float(np.sqrt(5.0 / d))
    for _ in range(1000):  # both classes must exist for the edge AUROC
        mask = np.triu(rng.random((d, d)) < edge_prob, 1)
        if 0 < mask.sum() < d * (d - 1) // 2:
            break
    mask = mask | mask.T
    phi = rng.normal(0.0, pair_scale, (d, d, 2)) * mask[..., None]
    idx = np.arange(d)
    phi[idx, idx] = rng.normal(0.0, 1.0, (d, 2))
    return phi, mask


def coupling_phi(d: int, rng: np.random.Generator, edge_prob: float, scale: float) -> np.ndarray:
    """A TG-HMM emission: phase-difference couplings only (alpha, beta below the diagonal), no
    diagonal terms and no phase sums, so every marginal is exactly uniform."""
    mask = np.tril(rng.random((d, d)) < edge_prob, -1)
    return rng.normal(0.0, scale, (d, d, 2)) * mask[..., None]


def sample_gated(phi_draw, n: int, phi_rng: np.random.Generator, sample_rng: np.random.Generator,
                 max_rhat: float = 1.05, attempts: int = 5, **gibbs_kwargs):
    """Draw phi by ``phi_draw(phi_rng)`` (phi, or a tuple whose first item is phi) and sample it;
    regenerate phi (logged) while the split-R-hat exceeds ``max_rhat``.

    Returns (the draw, samples, R-hat, attempts)."""
    rhat = float("nan")
    for attempt in range(attempts):
        drawn = phi_draw(phi_rng)
        phi = drawn[0] if isinstance(drawn, tuple) else drawn
        samples, rhat = gibbs(phi, n, sample_rng, **gibbs_kwargs)
        if rhat <= max_rhat:
            return drawn, samples, rhat, attempt + 1
        log.warning("torus Gibbs: d=%d attempt %d has R-hat %.3f > %.2f; regenerating phi",
                    phi.shape[0], attempt + 1, rhat, max_rhat)
    raise RuntimeError(f"torus Gibbs did not mix in {attempts} draws of phi (last R-hat "
                       f"{rhat:.3f} > {max_rhat})")


# ----------------------------------------------------------------------------- AR torus graphs


def ar_weights(r: int, lags: int, rng: np.random.Generator, self_scale: float, cross_scale: float,
               edge_prob: float) -> tuple[np.ndarray, np.ndarray]:
    """W (R, R, L, 2) of an AR-TG and its directed pattern (R, R), pattern[s, t]: s drives t.

    W[t, s, l] = (w0, w1) makes the 2x2 block w0 I + w1 J (J the 90 degree rotation) acting on
    (cos y_s, sin y_s) at lag l + 1 in the natural parameters of channel t."""
    pattern = rng.random((r, r)) < edge_prob
    np.fill_diagonal(pattern, False)
    scale = np.where(pattern.T, cross_scale, 0.0) + np.eye(r) * self_scale  # indexed [t, s]
    w = rng.normal(0.0, 1.0, (r, r, lags, 2)) * scale[:, :, None, None]
    return w, pattern


def simulate_ar(w: np.ndarray, steps: int, rng: np.random.Generator, burn: int = 200) -> np.ndarray:
    """y (steps, R): y_t,t' ~ vM with (a, b)_t = sum_s,l (w0 (c, s) + w1 (-s, c)) of y_s at t - l."""
    r, _, lags, _ = w.shape
    total = steps + burn + lags
    y = np.zeros((total, r))
    y[:lags] = rng.uniform(0.0, TWO_PI, (lags, r))
    c_hist, s_hist = np.cos(y), np.sin(y)
    for t in range(lags, total):
        c = c_hist[t - lags:t][::-1].T  # (R_source, L), lag 1 first
        s = s_hist[t - lags:t][::-1].T
        w0, w1 = w[..., 0], w[..., 1]  # (R_target, R_source, L)
        nat_a = (w0 * c - w1 * s).sum((1, 2))
        nat_b = (w0 * s + w1 * c).sum((1, 2))
        y[t] = rng.vonmises(np.arctan2(nat_b, nat_a), np.hypot(nat_a, nat_b)) % TWO_PI
        c_hist[t], s_hist[t] = np.cos(y[t]), np.sin(y[t])
    return y[burn + lags:]
