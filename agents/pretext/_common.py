"""What the pretext estimators share: the three factor measurements, the labelled-set
accuracy and its extrapolated ceiling, and the one metered short run per pretext.

Our operationalization of the abstract's three factors [recon; the paper's formulas are not
public]:
- learnability L (model-relative): the share of the pretext loss the target model removes in
  a budgeted run, 1 - l_p(run) / l_p(reference) clipped to [0, 1], the reference being the
  labels-only model of the same run (joint pretexts) or the initialization (pretrain
  pretexts); rotation and jigsaw: the chance-normalized pretext accuracy;
- reliability R (data-relative): invariance and partner pretexts, P[yhat(a(x)) = yhat(x)]
  over labelled x and draws of the pretext's partner a(x), yhat a fixed labeller
  (leave-one-out 1-NN on the raw labelled points); confidence pretexts, the leave-one-out
  accuracy of the labeller's confident predictions (kNN vote share >= the threshold); no label
  assumption (rotation, jigsaw, denoising): 1;
- completeness C (target-relative): leave-one-out 3-NN accuracy of the labels in the
  representation after the run, chance-normalized;
- estimate: acc_sup + (acc_ceil - acc_sup) * L * C * (2R - 1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

SHORT_RUN_LR = 3e-3  # the estimators' short runs (fixed, not tuned)
PARTNER_DRAWS = 4


def _sqdist(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    return (A**2).sum(1)[:, None] - 2 * A @ B.T + (B**2).sum(1)[None, :]


def loo_knn_votes(
    Q: np.ndarray, X: np.ndarray, y: np.ndarray, classes: int, k: int, exclude: np.ndarray | None = None
) -> np.ndarray:
    """Vote shares (n_q, classes) of the k nearest labelled points; ``exclude[i]`` (an index into
    X) is left out for query i (leave-one-out)."""
    d = _sqdist(Q, X)
    if exclude is not None:
        d[np.arange(len(Q)), exclude] = np.inf
    nn = np.argsort(d, axis=1)[:, :k]
    votes = np.zeros((len(Q), classes))
    for j in range(k):
        votes[np.arange(len(Q)), y[nn[:, j]]] += 1.0
    return votes / k


def loo_accuracy(F: np.ndarray, y: np.ndarray, classes: int, k: int = 1) -> float:
    """Leave-one-out kNN accuracy on standardized features (ties: the lowest class)."""
    Z = (F - F.mean(0)) / (F.std(0) + 1e-8)
    votes = loo_knn_votes(Z, Z, y, classes, k, exclude=np.arange(len(y)))
    return float((votes.argmax(1) == y).mean())


def chance_normalized(acc: float, classes: int) -> float:
    return float(np.clip((acc - 1.0 / classes) / (1.0 - 1.0 / classes), 0.0, 1.0))


def acc_supervised(view: Any) -> float:
    """acc_sup: leave-one-out 1-NN accuracy on the raw labelled set."""
    return loo_accuracy(np.asarray(view.X_labelled), np.asarray(view.y_labelled), int(view.classes))


def acc_ceiling(view: Any, seed: int) -> float:
    """acc_ceil: a power law err(n) = a n^-b fitted to the 1-NN error on labelled subsets (20%,
    40%, 80%, 100% of n_l; the rest of the labelled set scores a subset) and extrapolated to
    n_l + n_u, clipped to [acc_sup, 1]."""
    X, y = np.asarray(view.X_labelled), np.asarray(view.y_labelled)
    K, n_l, n_total = int(view.classes), len(y), len(y) + len(view.X_unlabelled)
    rng = np.random.default_rng([97, seed])
    sizes, errors = [], []
    for frac in (0.2, 0.4, 0.8):
        n = max(K, int(round(frac * n_l)))
        errs = []
        for _ in range(10):
            pick = rng.permutation(n_l)
            train, test = pick[:n], pick[n:]
            votes = loo_knn_votes(X[test], X[train], y[train], K, 1)
            errs.append(float((votes.argmax(1) != y[test]).mean()))
        sizes.append(n)
        errors.append(np.mean(errs))
    sizes.append(n_l)
    errors.append(1.0 - acc_supervised(view))
    e = np.clip(np.array(errors), 1e-3, 1.0)
    slope, intercept = np.polyfit(np.log(sizes), np.log(e), 1)
    ceiling = 1.0 - float(np.exp(intercept + min(slope, 0.0) * np.log(n_total)))
    return float(np.clip(ceiling, 1.0 - errors[-1], 1.0))


def reliability(view: Any, pretext: dict, seed: int) -> float:
    X, y, K = np.asarray(view.X_labelled), np.asarray(view.y_labelled), int(view.classes)
    n = len(y)
    if pretext["assumption"] in ("invariance", "pair"):
        own = loo_knn_votes(X, X, y, K, 1, exclude=np.arange(n)).argmax(1)
        partners = np.asarray(view.partners(pretext["id"], PARTNER_DRAWS, seed))
        agree = [loo_knn_votes(P, X, y, K, 1, exclude=np.arange(n)).argmax(1) == own for P in partners]
        return float(np.mean(agree))
    if pretext["assumption"] == "confidence":
        votes = loo_knn_votes(X, X, y, K, 5, exclude=np.arange(n))
        threshold = float(pretext["params"].get("threshold", 0.0))
        confident = votes.max(1) >= threshold
        if not confident.any():
            return 0.5
        return float((votes.argmax(1)[confident] == y[confident]).mean())
    return 1.0


def learnability(run: dict, pretext: dict) -> float:
    if pretext["classification"] and run["pretext_acc_final"] is not None:
        return chance_normalized(float(run["pretext_acc_final"]), 4)
    ref, final = float(run["pretext_loss_reference"]), float(run["pretext_loss_final"])
    if ref <= 1e-12:
        return 0.0
    return float(np.clip(1.0 - final / ref, 0.0, 1.0))


def completeness(run: dict, view: Any) -> float:
    acc = loo_accuracy(np.asarray(run["features"]), np.asarray(view.y_labelled), int(view.classes), k=3)
    return chance_normalized(acc, int(view.classes))


@dataclass(frozen=True)
class Factors:
    L: float
    R: float
    C: float
    run: dict


def short_run(view: Any, pretext_id: str, seed: int) -> dict:
    """The one metered run per pretext: its whole step budget at the fixed short-run lr."""
    steps = int(view.steps_per_pretext[pretext_id])
    return dict(view.run_pretext(pretext_id, steps, lr=SHORT_RUN_LR, seed=seed))


def factors(view: Any, seed: int, need_r: bool = True) -> dict[str, Factors]:
    out = {}
    for p in view.pool:
        p = dict(p)
        run = short_run(view, p["id"], seed)
        out[p["id"]] = Factors(
            learnability(run, p), reliability(view, p, seed) if need_r else 1.0, completeness(run, view), run
        )
    return out


def lrc_estimates(view: Any, seed: int) -> dict[str, float]:
    """acc_est = acc_sup + (acc_ceil - acc_sup) * L * C * (2R - 1) for every pool member, plus
    ``supervised`` = acc_sup."""
    sup, ceil = acc_supervised(view), acc_ceiling(view, seed)
    est = {pid: sup + (ceil - sup) * f.L * f.C * (2.0 * f.R - 1.0) for pid, f in factors(view, seed).items()}
    est["supervised"] = sup
    return est


def with_median_supervised(scores: dict[str, float]) -> dict[str, float]:
    """Rankers without an accuracy scale: ``supervised`` at the median score."""
    return {**scores, "supervised": float(np.median(list(scores.values())))}
