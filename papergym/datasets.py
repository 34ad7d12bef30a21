"""Shared datasets: scikit-learn's digits read without importing scikit-learn, stratified
seeded splits, image transforms (rotation, transpose, inversion, pixel permutation, noise,
shift, blur) and label remaps for task streams, and a metered minibatch iterator (epochs of a
fixed batch size, charged to a :class:`papergym.Budget`)."""

from __future__ import annotations

import gzip
import importlib.util
import time
from functools import lru_cache
from pathlib import Path

import numpy as np

from papergym.problem import Budget


def digits_file() -> Path:
    """scikit-learn's shipped digits table, found without importing scikit-learn (~2 s)."""
    spec = importlib.util.find_spec("sklearn")
    if spec is None or spec.origin is None:
        raise ModuleNotFoundError("the digits data needs scikit-learn (it ships the file)")
    return Path(spec.origin).parent / "datasets" / "data" / "digits.csv.gz"


@lru_cache(maxsize=1)
def load_digits() -> tuple[np.ndarray, np.ndarray]:
    """The 1,797 digits as (pixels / 16 float64 (n, 64), labels int64 (n,)), read-only.

    Reads the same file as ``sklearn.datasets.load_digits`` (tested equal)."""
    text = gzip.decompress(digits_file().read_bytes()).replace(b"\n", b",").decode()
    table = np.array(text.rstrip(",").split(","), dtype=np.float64).reshape(-1, 65)
    X, y = table[:, :-1] / 16.0, table[:, -1].astype(np.int64)
    X.setflags(write=False)
    y.setflags(write=False)
    return X, y


def stratified_split(labels: np.ndarray, fraction: float,
                     rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """(kept, held-out) sorted indices: per class (ascending), round(fraction * n_c) of a
    permutation drawn from ``rng`` are held out."""
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"fraction must be in [0, 1], got {fraction!r}")
    held = np.zeros(len(labels), dtype=bool)
    for c in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == c))
        held[members[: int(round(fraction * len(members)))]] = True
    return np.flatnonzero(~held), np.flatnonzero(held)


@lru_cache(maxsize=1)
def digits_split() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The fixed stratified 75/25 split of the digits (``default_rng(0)``), independent of
    any trial seed: (X_train, y_train, X_test, y_test)."""
    X, y = load_digits()
    kept, test = stratified_split(y, 0.25, np.random.default_rng(0))
    return X[kept], y[kept], X[test], y[test]


class MeteredBatches:
    """Epochs of shuffled minibatches of (X, y); each epoch spends 1 of ``budget``'s ``name``.

    The order of every epoch is drawn from ``rng`` (the problem's, so that every agent of a
    seed sees the same batches); the last batch of an epoch may be smaller. After
    :meth:`close` (a task stream moving on) no further epoch is given.
    """

    def __init__(self, X: np.ndarray, y: np.ndarray, batch_size: int, budget: Budget,
                 rng: np.random.Generator, name: str = "epochs") -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size!r}")
        if len(X) != len(y):
            raise ValueError(f"X has {len(X)} rows but y has {len(y)}")
        self._X, self._y, self._rng, self._budget = X, y, rng, budget
        self.batch_size, self.name = int(batch_size), name
        self.epochs_drawn = 0
        self.started: float | None = None  # perf_counter() at the first epoch drawn
        self.closed = False

    @property
    def batches_per_epoch(self) -> int:
        return -(-len(self._y) // self.batch_size)

    @property
    def epochs_left(self) -> int:
        return int(self._budget.remaining(self.name))

    def epoch(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """The next epoch's minibatches (copies), charged to the budget."""
        if self.closed:
            raise RuntimeError(f"these batches ({self.name}) are closed: the stream has moved on")
        self._budget.spend(self.name, 1)
        if self.started is None:
            self.started = time.perf_counter()
        self.epochs_drawn += 1
        order = self._rng.permutation(len(self._y))
        return [(np.array(self._X[order[i:i + self.batch_size]]),
                 np.array(self._y[order[i:i + self.batch_size]]))
                for i in range(0, len(order), self.batch_size)]

    def close(self) -> None:
        self.closed = True

    def __repr__(self) -> str:
        return (f"MeteredBatches(n={len(self._y)}, batch_size={self.batch_size}, "
                f"{self.name} left={self.epochs_left})")



# ----------------------------------------------------------------------------- image transforms
# Rows of ``X`` are flattened square images (digits: 8 x 8, pixels in [0, 1]); each transform
# returns a new float array of the same shape, so a task stream can be built from one base set.


def _images(X: np.ndarray) -> np.ndarray:
    side = int(round(np.sqrt(X.shape[-1])))
    if X.ndim != 2 or side * side != X.shape[1]:
        raise ValueError(f"expected rows of flattened square images, got shape {X.shape}")
    return np.asarray(X, dtype=np.float64).reshape(len(X), side, side)


def rotate90(X: np.ndarray, k: int = 1) -> np.ndarray:
    """Rotate every image by k * 90 degrees counter-clockwise."""
    return np.rot90(_images(X), k=k, axes=(1, 2)).reshape(len(X), -1).copy()


def transpose_images(X: np.ndarray) -> np.ndarray:
    """Mirror every image about its main diagonal."""
    return _images(X).transpose(0, 2, 1).reshape(len(X), -1).copy()


def invert(X: np.ndarray) -> np.ndarray:
    """Intensity inversion 1 - x (pixels in [0, 1])."""
    return 1.0 - np.asarray(X, dtype=np.float64)


def pixel_permutation(n_pixels: int, rng: np.random.Generator) -> np.ndarray:
    """A fixed permutation of the pixel positions, drawn from ``rng``."""
    return rng.permutation(n_pixels)


def permute_pixels(X: np.ndarray, permutation: np.ndarray) -> np.ndarray:
    if sorted(np.asarray(permutation).tolist()) != list(range(X.shape[1])):
        raise ValueError("permutation must be a permutation of the pixel positions")
    return np.asarray(X, dtype=np.float64)[:, permutation].copy()


def gaussian_noise(X: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """x + N(0, sigma^2) per pixel, clipped to [0, 1]."""
    return np.clip(np.asarray(X, dtype=np.float64) + sigma * rng.standard_normal(X.shape), 0.0, 1.0)


def shift_images(X: np.ndarray, dy: int, dx: int) -> np.ndarray:
    """Translate every image by (dy, dx) pixels; what moves in is 0."""
    images = _images(X)
    out = np.zeros_like(images)
    side = images.shape[1]
    ys, yd = (slice(0, side - dy), slice(dy, side)) if dy >= 0 else (slice(-dy, side), slice(0, side + dy))
    xs, xd = (slice(0, side - dx), slice(dx, side)) if dx >= 0 else (slice(-dx, side), slice(0, side + dx))
    out[:, yd, xd] = images[:, ys, xs]
    return out.reshape(len(X), -1)


def box_blur3(X: np.ndarray) -> np.ndarray:
    """3 x 3 mean filter with zero padding."""
    images = _images(X)
    padded = np.pad(images, ((0, 0), (1, 1), (1, 1)))
    side = images.shape[1]
    out = sum(padded[:, i:i + side, j:j + side] for i in range(3) for j in range(3)) / 9.0
    return out.reshape(len(X), -1)


def mirror_images(X: np.ndarray, axis: str) -> np.ndarray:
    """Mirror every image left-right (``axis="lr"``) or top-bottom (``"tb"``)."""
    if axis not in ("lr", "tb"):
        raise ValueError(f"axis must be 'lr' or 'tb', got {axis!r}")
    images = _images(X)
    out = images[:, :, ::-1] if axis == "lr" else images[:, ::-1, :]
    return out.reshape(len(X), -1).copy()


def invert_half(X: np.ndarray, half: str) -> np.ndarray:
    """Intensity inversion 1 - x of one half of every image (``top``, ``bottom``, ``left``,
    ``right``); the other half unchanged."""
    images = _images(X).copy()
    mid = images.shape[1] // 2
    regions = {"top": np.s_[:, :mid, :], "bottom": np.s_[:, mid:, :],
               "left": np.s_[:, :, :mid], "right": np.s_[:, :, mid:]}
    if half not in regions:
        raise ValueError(f"half must be one of {sorted(regions)}, got {half!r}")
    images[regions[half]] = 1.0 - images[regions[half]]
    return images.reshape(len(X), -1)


def partial_pixel_permutation(n_pixels: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """A permutation of the pixel positions that moves only ``k`` of them (drawn from ``rng``)
    among themselves; the rest stay in place."""
    if not 2 <= k <= n_pixels:
        raise ValueError(f"k must be in [2, {n_pixels}], got {k}")
    permutation = np.arange(n_pixels)
    chosen = rng.choice(n_pixels, size=k, replace=False)
    permutation[chosen] = chosen[rng.permutation(k)]
    return permutation


def remap_labels(y: np.ndarray, offset: int, n_classes: int = 10) -> np.ndarray:
    """y -> (y + offset) mod n_classes (a label permutation that forces interference)."""
    return (np.asarray(y, dtype=np.int64) + int(offset)) % n_classes
