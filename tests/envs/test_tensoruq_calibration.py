"""tensoruq calibration and heavy-tailed target noise: the covariance scale fitted on validation
data brings a mis-scaled predictor to nominal coverage on held-out data, the problem fits it on
validation items only, and the Student-t target noise has the law it claims."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats

import papergym
from papergym.envs.tensoruq import calibration, geometry
from papergym.envs.tensoruq import task as T


def heteroscedastic(rng: np.random.Generator, n: int, family: str) -> tuple[np.ndarray, np.ndarray]:
    """(residuals [n, 6], their true covariances [n, 6, 6]) with a different Σ per item."""
    A = rng.normal(size=(n, 6, 6)) * rng.uniform(0.2, 2.0, size=(n, 1, 1))
    Sigma = A @ A.transpose(0, 2, 1) + 0.1 * np.eye(6)
    L = np.linalg.cholesky(Sigma)
    x = np.einsum("nij,nj->ni", L, rng.normal(size=(n, 6)))
    if family == "laplace":
        x = x * np.sqrt(rng.exponential(size=(n, 1)))
    return x, Sigma


def q_logdet(x: np.ndarray, Sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    q = np.einsum("ni,nij,nj->n", x, np.linalg.inv(Sigma), x)
    return q, np.linalg.slogdet(Sigma)[1]


def coverage(q: np.ndarray, family: str) -> np.ndarray:
    return np.array([np.mean(q <= geometry.mahalanobis_quantile(family, p)) for p in T.COVERAGE_LEVELS])


@pytest.mark.parametrize("family", ["gaussian", "laplace"])
@pytest.mark.parametrize("mis_scale", [0.25, 3.8])
def test_the_fitted_scale_brings_a_mis_scaled_predictor_to_nominal_coverage(family, mis_scale):
    rng = np.random.default_rng(5)
    x_val, S_val = heteroscedastic(rng, 10_000, family)
    x_test, S_test = heteroscedastic(rng, 20_000, family)
    s = calibration.fit_cov_scale(*q_logdet(x_val, mis_scale * S_val), family)
    assert abs(s * mis_scale - 1) < 0.05  # the scale undoes the mis-scaling (sd of s: ~1%)
    q_test, _ = q_logdet(x_test, mis_scale * S_test)
    nominal = np.array(T.COVERAGE_LEVELS)
    assert np.abs(coverage(q_test, family) - nominal).max() > 0.2  # mis-scaled: far off
    # calibrated: nominal (sd of each coverage here ~0.005 from s and the test sample together)
    assert np.abs(coverage(q_test / s, family) - nominal).max() < 0.02


def test_the_laplace_scale_minimises_the_laplace_nll():
    rng = np.random.default_rng(6)
    q, logdet = q_logdet(*heteroscedastic(rng, 500, "laplace"))
    s = calibration.fit_cov_scale(2.0 * q, logdet, "laplace")
    best = calibration.mean_nll(np.log(s), 2.0 * q, logdet, "laplace")
    for factor in (0.9, 1.1):
        assert calibration.mean_nll(np.log(s * factor), 2.0 * q, logdet, "laplace") > best
    with pytest.raises(ValueError, match="family"):
        calibration.fit_cov_scale(q, logdet, "cauchy")
    with pytest.raises(ValueError, match="Mahalanobis"):
        calibration.fit_cov_scale(np.array([1.0, np.nan]), logdet[:2], "gaussian")


class Recording:
    """A fixed, too-wide Gaussian predictor that records every cloud it is asked about."""

    def __init__(self) -> None:
        self.seen: list[bytes] = []

    def predict(self, inputs):
        self.seen += [p.tobytes() for p in np.asarray(inputs["points"])]
        n = len(inputs["volume"])
        return np.zeros((n, 6)), np.tile(0.5 * np.eye(6), (n, 1, 1)), "gaussian", "km"


def test_the_problem_fits_the_scale_on_validation_items_only(monkeypatch):
    task = papergym.make_task("papergym/TensorUQInertia-v0", tier="smoke", n_ood=0)
    view = task.train_view(0, task.budget)
    test = task.heldout_entry(0).build()["test"]
    model = Recording()
    s = task.fitted_cov_scale(model, 0)
    validation = {p.tobytes() for p in np.asarray(view.validation.inputs["points"])}
    assert set(model.seen) == validation
    assert not validation & {p.tobytes() for p in test.inputs["points"]}

    fits, fit = [], calibration.fit_cov_scale

    def spy(q, logdet, family):
        fits.append(len(q))
        return fit(q, logdet, family)

    monkeypatch.setattr(T.calibration, "fit_cov_scale", spy)
    metrics = task.evaluate(Recording(), 0).metrics
    assert fits == [task.n_val] and metrics["cov_scale"] == pytest.approx(s, rel=1e-12)
    # Σ = 0.5 I is far too wide for these targets: calibration shrinks it towards nominal coverage
    assert s < 0.1 and metrics["coverage_error_cal"] < metrics["coverage_error"] - 0.1


def test_student_t_noise_has_t_marginals_and_an_f_distributed_radius():
    e = T.student_t_noise(np.random.default_rng(7), 20_000)
    assert stats.kstest(e[:, 0], stats.t(T.NOISE_DF).cdf).pvalue > 0.01
    # ‖e‖²/6 = (χ²₆/6) / (χ²₃/3) ~ F(6, 3), whatever the rotation Q(R) applied to e
    Q = geometry.km_rotation(torch.as_tensor(-np.linalg.qr(np.random.default_rng(8).normal(size=(3, 3)))[0]))
    rotated = e @ Q.numpy().T
    assert stats.kstest((rotated ** 2).sum(1) / 6, stats.f(6, T.NOISE_DF).cdf).pvalue > 0.01


def test_target_noise_cells_share_their_clouds_and_clean_targets():
    clean = papergym.make_task("papergym/TensorUQInertia-v0", tier="smoke").heldout_entry(0).build()
    noisy = papergym.make_task("papergym/TensorUQInertia-v0", tier="smoke",
                               target_noise=0.02).heldout_entry(0).build()
    assert np.array_equal(clean["test"].inputs["points"], noisy["test"].inputs["points"])
    diff = noisy["test"].targets - clean["test"].targets
    assert (np.abs(diff) > 0).all() and 0.005 < np.median(np.abs(diff)) < 0.05
    with pytest.raises(ValueError, match="target_noise"):
        papergym.make_task("papergym/TensorUQInertia-v0", tier="smoke", target_noise=-1)
