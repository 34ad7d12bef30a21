"""The continual stream's pieces shared by the evaluator and the agents: the backbone MLP, its
pretraining, the digits domain-shift tasks, and the problem-side metrics (transfer from the
accuracy matrix, spectral balance of each task's update).

Backbone: MLP 64 -> w -> w -> w -> 10 with GELU. Adapters act on the three hidden linear
layers (``ADAPTED``); the output layer stays frozen for every agent. Weights follow
``torch.nn.Linear``: W is (out, in) and a layer computes x W^T + b.

Versions: v0 pretrains on clean digits only, so every shifted task starts at chance. v1
pretrains on clean digits and twelve other shifts (``PRETRAIN_DOMAINS_V1``: the other
dihedral maps, half-image inversions, 1 px diagonal shifts, blur), none of them a stream task,
and its stream's permutation and shift are partial (24 pixels; 1 px), so every task starts
above chance and adaptation starts from a pretrained model, as in the paper.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from papergym.datasets import (
    box_blur3,
    gaussian_noise,
    invert,
    invert_half,
    load_digits,
    mirror_images,
    partial_pixel_permutation,
    permute_pixels,
    pixel_permutation,
    remap_labels,
    rotate90,
    shift_images,
    stratified_split,
    transpose_images,
)

N_IN, N_CLASSES = 64, 10
ADAPTED = (0, 1, 2)  # indices of the adapted linear layers (64->w, w->w, w->w)
TASKS = ("T1", "T2", "T3", "T4", "T5")
TASK_NAMES = {"T1": "rotate 90", "T2": "invert", "T3": "pixel permutation",
              "T4": "transpose + noise 0.06", "T5": "shift 2 px + 3x3 blur"}
TASK_NAMES_V1 = {**TASK_NAMES, "T3": "permutation of 24 pixels", "T5": "shift 1 px + 3x3 blur"}
HARD_REMAP = {"T2": 3, "T4": 3}  # y -> (y + 3) mod 10 on these tasks (Hard)
NOISE_SIGMA = 0.06
PERMUTED_PIXELS_V1 = 24  # v1's T3 moves 24 of the 64 pixels
PRETRAIN_TAG, STREAM_TAG, TRANSFORM_TAG, INIT_TAG = 21, 22, 23, 24
PRETRAIN = {"epochs": 30, "batch_size": 32, "lr": 1e-3}
# v1: thirteen domains, each over the pretraining half's images; 15 epochs of batch 64 (2,745 steps)
PRETRAIN_V1 = {"epochs": 15, "batch_size": 64, "lr": 1e-3}
PRETRAIN_DOMAINS_V1 = {
    "clean": lambda X: np.array(X, dtype=np.float64),
    "rotate 180": lambda X: rotate90(X, 2),
    "rotate 270": lambda X: rotate90(X, 3),
    "mirror left-right": lambda X: mirror_images(X, "lr"),
    "mirror top-bottom": lambda X: mirror_images(X, "tb"),
    "anti-transpose": lambda X: rotate90(transpose_images(X), 2),
    "invert top half": lambda X: invert_half(X, "top"),
    "invert bottom half": lambda X: invert_half(X, "bottom"),
    "invert left half": lambda X: invert_half(X, "left"),
    "invert right half": lambda X: invert_half(X, "right"),
    "shift (1, -1) px": lambda X: shift_images(X, 1, -1),
    "shift (-1, 1) px": lambda X: shift_images(X, -1, 1),
    "3x3 blur": box_blur3,
}
VERSIONS = (0, 1)
TEST_FRACTION = 1 / 3  # of the stream's base images: 2:1 train / test


# ----------------------------------------------------------------------------- backbone


@dataclass(frozen=True)
class Backbone:
    """Frozen pretrained weights (float32 arrays, read-only) and its clean test accuracy."""

    weights: tuple[np.ndarray, ...]
    biases: tuple[np.ndarray, ...]
    clean_accuracy: float

    @property
    def width(self) -> int:
        return int(self.weights[0].shape[0])

    def adapted_shapes(self) -> list[tuple[int, int]]:
        return [tuple(self.weights[i].shape) for i in ADAPTED]


def forward(weights: Sequence[torch.Tensor], biases: Sequence[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """Logits of the MLP: GELU after every layer but the last."""
    h = x
    for i, (W, b) in enumerate(zip(weights, biases)):
        h = torch.nn.functional.linear(h, W, b)
        if i < len(weights) - 1:
            h = torch.nn.functional.gelu(h)
    return h


def base_split(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Seed's stratified halves of the digits: (pretraining indices, stream indices)."""
    _, y = load_digits()
    return stratified_split(y, 0.5, np.random.default_rng([PRETRAIN_TAG, seed]))


def pretraining_data(seed: int, version: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The pretraining half's images: clean (v0), or under each of ``PRETRAIN_DOMAINS_V1`` (v1)."""
    X, y = load_digits()
    pre, _ = base_split(seed)
    if version == 0:
        return X[pre], y[pre]
    return (np.concatenate([f(X[pre]) for f in PRETRAIN_DOMAINS_V1.values()]),
            np.tile(y[pre], len(PRETRAIN_DOMAINS_V1)))


def pretrain_backbone(seed: int, width: int, version: int = 0) -> Backbone:
    """Adam on the pretraining data (``pretraining_data``; v0: 30 epochs of batch 32, v1: 15
    epochs of batch 64), seeded init."""
    if version not in VERSIONS:
        raise ValueError(f"version must be one of {VERSIONS}, got {version!r}")
    X_pre, y_pre = pretraining_data(seed, version)
    schedule = PRETRAIN if version == 0 else PRETRAIN_V1
    gen = torch.Generator().manual_seed(int(np.random.default_rng([INIT_TAG, seed]).integers(2**31)))
    sizes = [N_IN, width, width, width, N_CLASSES]
    weights, biases = [], []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1.0 / math.sqrt(fan_in)  # torch.nn.Linear's default ranges
        weights.append(((torch.rand(fan_out, fan_in, generator=gen) * 2 - 1) * bound).requires_grad_())
        biases.append(((torch.rand(fan_out, generator=gen) * 2 - 1) * bound).requires_grad_())
    opt = torch.optim.Adam(weights + biases, lr=schedule["lr"])
    Xt = torch.tensor(X_pre, dtype=torch.float32)
    yt = torch.tensor(y_pre)
    order_rng = np.random.default_rng([PRETRAIN_TAG, seed, 1])
    for _ in range(schedule["epochs"]):
        order = torch.from_numpy(order_rng.permutation(len(yt)))
        for i in range(0, len(order), schedule["batch_size"]):
            idx = order[i:i + schedule["batch_size"]]
            loss = torch.nn.functional.cross_entropy(forward(weights, biases, Xt[idx]), yt[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    W = tuple(_frozen(w.detach().numpy()) for w in weights)
    b = tuple(_frozen(v.detach().numpy()) for v in biases)
    _, _, X_test, y_test = clean_stream_split(seed)
    clean = accuracy(W, b, [np.zeros_like(W[i], dtype=np.float64) for i in ADAPTED], X_test, y_test)
    return Backbone(W, b, clean)


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=np.float32)
    a.setflags(write=False)
    return a


def accuracy(weights: Sequence[np.ndarray], biases: Sequence[np.ndarray], deltas: Sequence[np.ndarray],
             X: np.ndarray, y: np.ndarray) -> float:
    """Accuracy of W + delta on the adapted layers (float64), the frozen rest unchanged."""
    W = [torch.tensor(np.asarray(w, dtype=np.float64)) for w in weights]
    for i, d in zip(ADAPTED, deltas):
        W[i] = W[i] + torch.tensor(np.asarray(d, dtype=np.float64))
    b = [torch.tensor(np.asarray(v, dtype=np.float64)) for v in biases]
    with torch.no_grad():
        pred = forward(W, b, torch.tensor(np.asarray(X, dtype=np.float64))).argmax(dim=1).numpy()
    return float(np.mean(pred == y))


# ----------------------------------------------------------------------------- task stream


@dataclass(frozen=True)
class TaskSplit:
    name: str
    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray


def clean_stream_split(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The stream's base images split 2:1 (stratified, seeded): clean train and test."""
    X, y = load_digits()
    _, stream = base_split(seed)
    train, test = stratified_split(y[stream], TEST_FRACTION, np.random.default_rng([STREAM_TAG, seed]))
    return X[stream][train], y[stream][train], X[stream][test], y[stream][test]


def transform(name: str, X: np.ndarray, seed: int, version: int = 0) -> np.ndarray:
    """Task ``name``'s input shift (the permutation and the noise drawn from the seed); v1's T3
    permutes 24 pixels and its T5 shifts by 1 px."""
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; tasks are {TASKS}")
    rng = np.random.default_rng([TRANSFORM_TAG, seed, TASKS.index(name)])
    if name == "T1":
        return rotate90(X)
    if name == "T2":
        return invert(X)
    if name == "T3":
        if version == 0:
            return permute_pixels(X, pixel_permutation(X.shape[1], rng))
        return permute_pixels(X, partial_pixel_permutation(X.shape[1], PERMUTED_PIXELS_V1, rng))
    if name == "T4":
        return gaussian_noise(transpose_images(X), NOISE_SIGMA, rng)
    return box_blur3(shift_images(X, 0, 2 if version == 0 else 1))  # T5


def build_stream(seed: int, tasks: Sequence[str], hard: bool, version: int = 0) -> list[TaskSplit]:
    """Every task applies its shift to the same base images (train and test alike); Hard remaps
    the labels of T2 and T4."""
    X_tr, y_tr, X_te, y_te = clean_stream_split(seed)
    n_tr = len(y_tr)
    out = []
    for name in tasks:
        X = transform(name, np.concatenate([X_tr, X_te]), seed, version)  # one noise draw for both
        y_train, y_test = y_tr, y_te
        if hard and name in HARD_REMAP:
            y_train, y_test = remap_labels(y_tr, HARD_REMAP[name]), remap_labels(y_te, HARD_REMAP[name])
        out.append(TaskSplit(name, X[:n_tr], np.array(y_train), X[n_tr:], np.array(y_test)))
    return out


# ----------------------------------------------------------------------------- metrics


def transfer_metrics(a: np.ndarray) -> dict[str, float]:
    """From a[i][j] (row 0 = backbone, row i = after task i; columns = tasks in stream order):
    MFN = mean_j a[T][j]; MAA = mean_i mean_{j<=i} a[i][j]; BWT = mean_{j<T}(a[T][j] - a[j][j]);
    FWT = mean_{j>=2}(a[j-1][j] - a[0][j]); zero_shot = mean_{j>=2} a[j-1][j]; start_accuracy = mean_j
    a[0][j] (the backbone on every task before any adaptation)."""
    T = a.shape[1]
    if a.shape != (T + 1, T) or T < 2:
        raise ValueError(f"accuracy matrix must be (T + 1, T) with T >= 2, got {a.shape}")
    return {
        "mfn": float(a[T].mean()),
        "maa": float(np.mean([a[i, :i].mean() for i in range(1, T + 1)])),
        "bwt": float(np.mean([a[T, j] - a[j + 1, j] for j in range(T - 1)])),
        "fwt": float(np.mean([a[j, j] - a[0, j] for j in range(1, T)])),
        "zero_shot": float(np.mean([a[j, j] for j in range(1, T)])),
        "start_accuracy": float(a[0].mean()),
    }


def spectrum(delta: np.ndarray, rank: int) -> np.ndarray:
    """The top-``rank`` singular values of an update."""
    return np.linalg.svd(np.asarray(delta, dtype=np.float64), compute_uv=False)[:rank]


def balance(sigma: np.ndarray) -> tuple[float, float] | None:
    """(top-1 energy share sigma_1^2 / sum sigma^2, normalized entropy H(p) / log r of
    p = sigma^2 / sum sigma^2); None for a zero update."""
    energy = np.asarray(sigma, dtype=np.float64) ** 2
    total = energy.sum()
    if total <= 0 or len(energy) < 2:
        return None
    p = energy / total
    nz = p[p > 0]
    return float(p.max()), float(-(nz * np.log(nz)).sum() / math.log(len(p)))
