"""Data of the pretext family: per-seed digits splits (labelled / unlabelled / test) and the
synthetic sets (two moons, concentric rings, a 10-D Gaussian mixture) whose labelling rule is
known, so that an assumption's true reliability can be computed (oracle diagnostics only)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from papergym.datasets import load_digits

SPLIT_TAG, SYNTH_TAG, ORACLE_TAG = 51, 52, 53
SYNTH_DATASETS = ("moons", "rings", "gmm")
GMM_DIM, GMM_CLASSES = 10, 4
N_UNLABELLED = 1000  # both problems' unlabelled set


@dataclass(frozen=True)
class Split:
    """One seed's data: labelled (X_l, y_l), unlabelled X_u (its labels y_u kept problem-side
    for the all-labels reference row only), test (X_t, y_t)."""

    name: str
    X_l: np.ndarray
    y_l: np.ndarray
    X_u: np.ndarray
    y_u: np.ndarray
    X_t: np.ndarray
    y_t: np.ndarray
    classes: int
    image_side: int  # 8 for digits, 0 for vector data


def digits_split(seed: int, n_per_class: int = 5, n_unlabelled: int = N_UNLABELLED) -> Split:
    """n_per_class labelled images per class, n_unlabelled unlabelled, the rest (747) test."""
    X, y = load_digits()
    rng = np.random.default_rng([SPLIT_TAG, int(seed)])
    labelled = np.concatenate([rng.permutation(np.flatnonzero(y == c))[:n_per_class] for c in range(10)])
    rest = rng.permutation(np.setdiff1d(np.arange(len(y)), labelled))
    if n_unlabelled >= len(rest):
        raise ValueError(f"n_unlabelled must be < {len(rest)}, got {n_unlabelled}")
    u, t = np.sort(rest[:n_unlabelled]), np.sort(rest[n_unlabelled:])
    labelled = np.sort(labelled)
    return Split("digits", X[labelled], y[labelled], X[u], y[u], X[t], y[t], 10, 8)


def _moons(n: int, rng: np.random.Generator, noise: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    y = rng.integers(0, 2, n)
    t = rng.uniform(0, np.pi, n)
    X = np.where(y[:, None] == 0, np.c_[np.cos(t), np.sin(t)], np.c_[1 - np.cos(t), 0.5 - np.sin(t)])
    return X + noise * rng.standard_normal(X.shape), y


def _rings(n: int, rng: np.random.Generator, noise: float = 0.08) -> tuple[np.ndarray, np.ndarray]:
    y = rng.integers(0, 2, n)
    t = rng.uniform(0, 2 * np.pi, n)
    r = np.where(y == 0, 0.5, 1.0)
    X = r[:, None] * np.c_[np.cos(t), np.sin(t)]
    return X + noise * rng.standard_normal(X.shape), y


def gmm_means(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Eight cluster means in 10-D, two per class: u_i (class i) and -u_i (class i + 1 mod 4), so
    that x -> -x moves every cluster to one of another class (a label-swapping reflection)."""
    rng = np.random.default_rng([SYNTH_TAG, int(seed), 7])
    u = rng.standard_normal((GMM_CLASSES, GMM_DIM))
    u *= 2.0 / np.linalg.norm(u, axis=1, keepdims=True)
    means = np.concatenate([u, -u])
    labels = np.concatenate([np.arange(GMM_CLASSES), (np.arange(GMM_CLASSES) + 1) % GMM_CLASSES])
    return means, labels


def _gmm(n: int, rng: np.random.Generator, seed: int, sigma: float = 0.55) -> tuple[np.ndarray, np.ndarray]:
    means, labels = gmm_means(seed)
    k = rng.integers(0, len(means), n)
    return means[k] + sigma * rng.standard_normal((n, GMM_DIM)), labels[k]


def sample_synth(dataset: str, n: int, rng: np.random.Generator, seed: int) -> tuple[np.ndarray, np.ndarray]:
    if dataset == "moons":
        return _moons(n, rng)
    if dataset == "rings":
        return _rings(n, rng)
    if dataset == "gmm":
        return _gmm(n, rng, seed)
    raise ValueError(f"dataset must be one of {SYNTH_DATASETS}, got {dataset!r}")


def synth_split(
    dataset: str, seed: int, n_per_class: int = 10, n_unlabelled: int = N_UNLABELLED, n_test: int = 2000
) -> Split:
    """A fresh draw of the generator per seed: n_per_class labelled per class, n_unlabelled, n_test."""
    rng = np.random.default_rng([SYNTH_TAG, int(seed), SYNTH_DATASETS.index(dataset)])
    classes = GMM_CLASSES if dataset == "gmm" else 2
    X, y = sample_synth(dataset, 20 * n_per_class * classes + n_unlabelled + n_test, rng, seed)
    labelled = np.concatenate([np.flatnonzero(y == c)[:n_per_class] for c in range(classes)])
    rest = np.setdiff1d(np.arange(len(y)), labelled)
    u, t = rest[:n_unlabelled], rest[n_unlabelled : n_unlabelled + n_test]
    return Split(dataset, X[labelled], y[labelled], X[u], y[u], X[t], y[t], classes, 0)


def oracle_labeller(dataset: str, seed: int, n: int = 20000):
    """The generator's labelling rule, approximated by 1-NN on a large labelled draw (the
    oracle behind the synthetic sets' true reliability; never given to agents)."""
    X, y = sample_synth(dataset, n, np.random.default_rng([ORACLE_TAG, int(seed)]), seed)

    def label(Q: np.ndarray) -> np.ndarray:
        d = (Q**2).sum(1)[:, None] - 2 * Q @ X.T + (X**2).sum(1)[None, :]
        return y[np.argmin(d, axis=1)]

    return label
