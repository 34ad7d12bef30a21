"""How an estimator's scores are judged against the ground truth: rank and linear correlation,
top-1 selection regret, NDCG@5, helps-versus-hurts AUROC."""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata


def pearson(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson r; 0 when either side is constant (a constant estimate ranks nothing)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    a, b = a - a.mean(), b - b.mean()
    denom = np.sqrt((a * a).sum() * (b * b).sum())
    return float((a * b).sum() / denom) if denom > 0 else 0.0


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman rho: Pearson r of the mid-ranks."""
    return pearson(rankdata(a), rankdata(b))


def kendall(a: np.ndarray, b: np.ndarray) -> float:
    """Kendall tau-b over all pairs (ties counted as neither concordant nor discordant)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    i, j = np.triu_indices(len(a), k=1)
    da, db = np.sign(a[i] - a[j]), np.sign(b[i] - b[j])
    n0 = len(i)
    n1, n2 = n0 - (da == 0).sum(), n0 - (db == 0).sum()
    if n1 == 0 or n2 == 0:
        return 0.0
    return float((da * db).sum() / np.sqrt(float(n1) * float(n2)))


def regret(estimate: np.ndarray, actual: np.ndarray) -> tuple[float, float]:
    """Top-1 selection regret max(actual) - actual(argmax estimate), in accuracy and normalized
    by max - mean (ties of the estimate: the worst of the tied picks)."""
    estimate, actual = np.asarray(estimate), np.asarray(actual)
    picked = actual[estimate == estimate.max()].min()
    r = float(actual.max() - picked)
    spread = float(actual.max() - actual.mean())
    return r, (r / spread if spread > 0 else 0.0)


def ndcg(estimate: np.ndarray, gains: np.ndarray, k: int = 5) -> float:
    """NDCG@k of the estimate's ranking with the given gains; 1 when every gain is 0."""
    estimate, gains = np.asarray(estimate), np.asarray(gains, dtype=np.float64)
    discount = 1.0 / np.log2(np.arange(2, k + 2))
    top = np.argsort(-estimate, kind="stable")[:k]
    ideal = np.sort(gains)[::-1][:k]
    best = float((ideal * discount[: len(ideal)]).sum())
    return float((gains[top] * discount[: len(top)]).sum() / best) if best > 0 else 1.0


def auroc(score: np.ndarray, label: np.ndarray) -> float:
    """P(score of a positive > score of a negative), ties count half; 0.5 with one class only."""
    score, label = np.asarray(score, dtype=np.float64), np.asarray(label, dtype=bool)
    pos, neg = score[label], score[~label]
    if len(pos) == 0 or len(neg) == 0:
        return 0.5
    diff = pos[:, None] - neg[None, :]
    return float(((diff > 0) + 0.5 * (diff == 0)).mean())


def harm_detection(
    estimate: np.ndarray, estimate_supervised: float, actual: np.ndarray, supervised: float, margin: float
) -> tuple[float, float]:
    """How well the estimator's sign tells the pretexts that hurt the target from the others.

    A pretext *hurts* when its actual accuracy is below ``supervised - margin`` and does not when
    it is at least ``supervised`` (the band between, which the target's noise cannot sign, is
    left out); the estimator *flags* a pretext when its estimate is below its own estimate for
    training without a pretext (``estimate_supervised``). Returns (balanced accuracy, recall):
    the mean, over the two classes present, of the share of hurting pretexts flagged and the share
    of the others not flagged (0.5 in expectation for any flagging rule blind to the truth, a
    random or a constant one; 1 for right flags), and the share of hurting pretexts flagged (1
    when none hurts)."""
    estimate, actual = np.asarray(estimate, dtype=np.float64), np.asarray(actual, dtype=np.float64)
    flagged = estimate < estimate_supervised
    hurts, fine = actual < supervised - margin, actual >= supervised
    shares = [float(flagged[hurts].mean())] if hurts.any() else []
    if fine.any():
        shares.append(float((~flagged[fine]).mean()))
    recall = float(flagged[hurts].mean()) if hurts.any() else 1.0
    return (float(np.mean(shares)) if shares else 0.5), recall
