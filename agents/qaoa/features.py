"""Node positional encodings for the qaoa partition agents (not an agent).

The problem's node features (``envs/qaoa/instances.node_features``: degree, weighted degree,
clustering, PageRank, betweenness) describe a node's role, not where it is: on a regular or
near-regular graph adjacent nodes are no closer in that space than random pairs, so a
partition generator that clusters node embeddings has nothing that keeps a block connected.
Laplacian eigenvector encodings (Dwivedi et al. 2020; Belkin & Niyogi's eigenmaps) do: the
eigenvectors of the smallest nontrivial eigenvalues of the normalized Laplacian of |w| minimize
Σ_uv |w_uv|·‖x_u − x_v‖², so strongly coupled nodes sit close [recon: the official Neural
QAOA² code uses the five structural features only; this is a declared variant].
"""

from __future__ import annotations

import numpy as np


def laplacian_encoding(weights: np.ndarray, dim: int) -> np.ndarray:
    """(n, dim) eigenvectors 2..dim+1 of I − D^{-1/2}|W|D^{-1/2}, each scaled by √n and
    signed so that its largest-magnitude entry is positive; zero columns where n − 1 < dim."""
    absw = np.abs(np.asarray(weights, dtype=np.float64))
    n = absw.shape[0]
    out = np.zeros((n, dim))
    if n < 2:
        return out
    degree = absw.sum(axis=1)
    inv_sqrt = np.where(degree > 0, 1.0 / np.sqrt(np.where(degree > 0, degree, 1.0)), 0.0)
    laplacian = np.eye(n) - inv_sqrt[:, None] * absw * inv_sqrt[None, :]
    _, vectors = np.linalg.eigh(laplacian)
    chosen = vectors[:, 1 : dim + 1] * np.sqrt(n)
    signs = np.sign(chosen[np.argmax(np.abs(chosen), axis=0), np.arange(chosen.shape[1])])
    out[:, : chosen.shape[1]] = chosen * np.where(signs == 0, 1.0, signs)
    return out
