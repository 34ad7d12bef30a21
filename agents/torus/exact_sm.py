"""Exact score matching for torus graphs (Klein et al. 2020, AoAS; the paper's baseline).

J(phi) = 1/2 phi^T Gamma phi - phi^T H with Gamma = E[D D^T] (D = dS/dx, m x d, m = 2 d^2) and
H = E[w * S(x)], so phi-hat = (Gamma-hat + lam2 I)^{-1} H-hat. Gamma is accumulated in float64 from
the sparsity of D: variable k only touches the 4d - 2 statistics of row and column k of the
angle matrix, so Gamma = sum_k E[D_k D_k^T] over (4d - 2)-blocks; memory O(d^4), solve O(d^6).
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

from papergym.agent import Agent, AgentConfig
from papergym.envs.torus import tg


def _touching(d: int, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cells (i, j) of the angle matrix that depend on x_k, and dA_ij/dx_k (+-1)."""
    rows, cols, signs = [k], [k], [1.0]
    for j in range(d):
        if j != k:
            rows.append(k)
            cols.append(j)
            signs.append(1.0 if k < j else -1.0)  # A_kj = x_k + x_j above, x_j - x_k below
    for i in range(d):
        if i != k:
            rows.append(i)
            cols.append(k)
            signs.append(1.0)  # A_ik = x_i + x_k above, x_k - x_i below
    return np.array(rows), np.array(cols), np.array(signs)


def gamma_h(x: np.ndarray, weights: np.ndarray | None = None, chunk: int = 2000):
    """Gamma-hat (m, m) and H-hat (m,) in the flattened (d, d, 2) layout (weighted means)."""
    n, d = x.shape
    m = 2 * d * d
    wts = np.ones(n) if weights is None else np.asarray(weights, float)
    total = wts.sum()
    gamma, h = np.zeros((m, m)), np.zeros((d, d, 2))
    lap = tg.lap_weights(d)
    blocks = []
    for k in range(d):
        rows, cols, signs = _touching(d, k)
        flat = np.concatenate([(rows * d + cols) * 2, (rows * d + cols) * 2 + 1])
        blocks.append((rows, cols, signs, flat))
    for start in range(0, n, chunk):
        a = tg.angles(x[start:start + chunk])
        wc = wts[start:start + chunk]
        sin, cos = np.sin(a), np.cos(a)
        h[..., 0] += np.einsum("n,nij->ij", wc, cos) * lap
        h[..., 1] += np.einsum("n,nij->ij", wc, sin) * lap
        root = np.sqrt(wc)[:, None]
        for rows, cols, signs, flat in blocks:
            dk = np.concatenate([-sin[:, rows, cols] * signs, cos[:, rows, cols] * signs], axis=1) * root
            gamma[np.ix_(flat, flat)] += dk.T @ dk
    return gamma / total, h.ravel() / total


def exact_sm(x: np.ndarray, lam2: float = 1e-6, weights: np.ndarray | None = None) -> np.ndarray:
    d = x.shape[1]
    gamma, h = gamma_h(x, weights)
    gamma[np.diag_indices_from(gamma)] += lam2
    return linalg.solve(gamma, h, assume_a="pos").reshape(d, d, 2)


class ExactScoreMatching(Agent):
    """Closed-form score matching; refuses d above ``max_d`` (Gamma has (2 d^2)^2 entries)."""

    id = "exact_sm"
    family = "torus"
    role = "baseline"
    paper = "klein2020torus"
    problems = ("papergym/TGFit-v0", "papergym/TGScaling-v0")

    class Config(AgentConfig):
        lam2: float = 1e-6
        max_d: int = 40

    def _check(self, d: int) -> None:
        if d > self.config.max_d:
            gib = (2 * d * d) ** 2 * 8 / 2 ** 30
            raise ValueError(f"exact score matching at d={d} forms a {2 * d * d}^2 Gamma ({gib:.1f} GiB) "
                             f"and an O(d^6) solve; max_d={self.config.max_d}: use ssm instead")

    def solve(self, view, budget, seed):
        if view.mode == "scaling":
            fits = {}
            for d in view.exact_dims:
                self._check(d)
                x = view.exact_data(d)
                view.start_clock("exact", d)
                fits[d] = exact_sm(x, self.config.lam2)
                view.stop_clock("exact", d)
            return {"exact": fits}
        self._check(view.d)
        return exact_sm(view.data(), self.config.lam2)
