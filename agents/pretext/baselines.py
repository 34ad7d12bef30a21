"""Baseline estimators: the pretext-loss heuristic, the short-run linear probe (strong
baseline), seeded random scores (the floor), and the full-training oracle (reference)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from papergym.agent import Agent
from papergym.agents.pretext._common import short_run, with_median_supervised


class PretextLoss(Agent):
    """score = -(final pretext loss / reference loss) after the budgeted run."""

    id: ClassVar[str] = "pretext_loss"
    family: ClassVar[str] = "pretext"
    role: ClassVar[str] = "baseline"
    paper: ClassVar[str] = "jia2026pretext"

    def solve(self, view: Any, budget: Any, seed: int) -> dict[str, float]:
        scores = {}
        for p in view.pool:
            run = short_run(view, p["id"], seed)
            ref = max(float(run["pretext_loss_reference"]), 1e-12)
            scores[p["id"]] = -float(run["pretext_loss_final"]) / ref
        return with_median_supervised(scores)


def probe_accuracy(
    F: np.ndarray,
    y: np.ndarray,
    classes: int,
    seed: int,
    folds: int = 5,
    l2: float = 1e-2,
    iters: int = 200,
    lr: float = 0.5,
) -> float:
    """k-fold cross-validated accuracy of an L2-regularized softmax regression on standardized
    features (full-batch gradient descent)."""
    rng = np.random.default_rng([98, seed])
    order = rng.permutation(len(y))
    correct = 0
    for f in range(folds):
        test = order[f::folds]
        train = np.setdiff1d(order, test)
        mu, sd = F[train].mean(0), F[train].std(0) + 1e-8
        Xtr, Xte = (F[train] - mu) / sd, (F[test] - mu) / sd
        W, b = np.zeros((F.shape[1], classes)), np.zeros(classes)
        Y = np.eye(classes)[y[train]]
        for _ in range(iters):
            z = Xtr @ W + b
            z -= z.max(1, keepdims=True)
            P = np.exp(z)
            P /= P.sum(1, keepdims=True)
            G = (P - Y) / len(train)
            W -= lr * (Xtr.T @ G + l2 * W)
            b -= lr * G.sum(0)
        correct += int(((Xte @ W + b).argmax(1) == y[test]).sum())
    return correct / len(y)


class ShortProbe(Agent):
    """Pretext training for the whole budget, then a logistic-regression probe on the labelled
    set in the learned representation: score = its 5-fold CV accuracy; ``supervised`` = the
    same probe on the raw inputs."""

    id: ClassVar[str] = "short_probe"
    family: ClassVar[str] = "pretext"
    role: ClassVar[str] = "baseline"
    paper: ClassVar[str] = "jia2026pretext"

    def solve(self, view: Any, budget: Any, seed: int) -> dict[str, float]:
        y, K = np.asarray(view.y_labelled), int(view.classes)
        scores = {}
        for p in view.pool:
            run = short_run(view, p["id"], seed)
            scores[p["id"]] = probe_accuracy(np.asarray(run["features"]), y, K, seed)
        scores["supervised"] = probe_accuracy(np.asarray(view.X_labelled), y, K, seed)
        return scores


class RandomScores(Agent):
    """Seeded uniform scores: the floor of the table."""

    id: ClassVar[str] = "random"
    family: ClassVar[str] = "pretext"
    role: ClassVar[str] = "baseline"
    paper: ClassVar[str] = "jia2026pretext"

    def solve(self, view: Any, budget: Any, seed: int) -> dict[str, float]:
        rng = np.random.default_rng([99, seed])
        return {**{p["id"]: float(rng.uniform()) for p in view.pool}, "supervised": 0.5}


class FullTraining(Agent):
    """The full-training oracle (reference, never ranked): one ground-truth-protocol run per
    pretext with a training seed of its own, scored on the unlabelled set's true labels. Its
    correlation with the ground truth is the ceiling the target's own noise leaves."""

    id: ClassVar[str] = "full_training"
    family: ClassVar[str] = "pretext"
    role: ClassVar[str] = "reference"
    paper: ClassVar[str] = "jia2026pretext"

    def solve(self, view: Any, budget: Any, seed: int) -> dict[str, float]:
        ids = [p["id"] for p in view.pool] + ["supervised"]
        return {pid: float(view.oracle_accuracy(pid)) for pid in ids}
