"""Post-hoc covariance scaling: one scalar s > 0 per trained model, fitted on the validation split
and applied to every test prediction as Σ -> sΣ ("σ scaling", Laves et al. 2020; the regression
analogue of temperature scaling, Guo et al. 2017).

s minimises the mean negative log-likelihood of the model's own predictive family on the
validation items. The NLL is a proper scoring rule that uses every validation item, and it is not
the calibration metric scored afterwards (the coverage error), so a model's calibrated coverage
still measures the *shape* of its covariance: one scalar can put one coverage level on target,
not all three, nor give each item its own width. A scalar is invariant, so sΣ stays equivariant.

Pure functions of Mahalanobis distances and log-determinants; the caller decides which items
they come from (the problem passes validation items only).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from scipy import optimize

from papergym.envs.tensoruq import geometry

K = 6  # KM coordinates of a symmetric 3 x 3 tensor
LOG_SCALE_RANGE = 12.0  # s is searched within e^±12 of the Gaussian estimate mean(q)/k


def mean_nll(log_s: float, q: np.ndarray, logdet: np.ndarray, family: str) -> float:
    """Mean NLL of the ``family`` law with Σ -> e^{log_s} Σ: q -> q/s, log|Σ| -> log|Σ| + k log s."""
    logpdf = geometry.laplace_logpdf if family == "laplace" else geometry.gaussian_logpdf
    s = math.exp(log_s)
    qs = torch.as_tensor(np.asarray(q, dtype=np.float64) / s)
    ld = torch.as_tensor(np.asarray(logdet, dtype=np.float64) + K * log_s)
    return float(-logpdf(qs, ld).mean())


def fit_cov_scale(q: np.ndarray, logdet: np.ndarray, family: str) -> float:
    """The covariance scale s minimising the validation NLL of ``family`` (``gaussian``: the closed
    form s = mean(q)/k; ``laplace``: a bounded 1-D search over log s around it)."""
    q = np.asarray(q, dtype=np.float64)
    if q.ndim != 1 or len(q) == 0 or not np.isfinite(q).all() or (q < 0).any():
        raise ValueError(f"fit_cov_scale: q must be a non-empty vector of finite Mahalanobis "
                         f"distances >= 0, got shape {q.shape}")
    if family not in ("gaussian", "laplace"):
        raise ValueError(f"fit_cov_scale: family must be 'gaussian' or 'laplace', got {family!r}")
    gauss = max(float(q.mean()) / K, 1e-300)
    if family == "gaussian":
        return gauss
    centre = math.log(gauss)
    res = optimize.minimize_scalar(mean_nll, args=(q, logdet, family), method="bounded",
                                   bounds=(centre - LOG_SCALE_RANGE, centre + LOG_SCALE_RANGE),
                                   options={"xatol": 1e-6})
    return float(math.exp(res.x))
