"""The spectral safeguard's spread cap acts on every eigenvalue: the condition-number bound
holds with several eigenvalues over the cap, and equivariance holds at repeated eigenvalues."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from papergym.envs.tensoruq import geometry, shapes

F64 = torch.float64
MAX_COND = 200.0  # exp(LOG_MAX_SPREAD)


def with_spectrum(lam: list[float], seed: int) -> torch.Tensor:
    """V diag(lam) V^T with a random orthogonal V of size 6."""
    V, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(6, 6)))
    V = torch.as_tensor(V)
    return (V * torch.tensor(lam, dtype=F64)) @ V.T


def safeguarded(S: torch.Tensor) -> torch.Tensor:
    _, bar, V = geometry.safeguarded_spectrum(S, -6.0, 6.0)
    return geometry.spectral_exp(bar, V)


SPECTRA = {
    "repeated top": [-3.0, -1.0, 0.0, 1.0, 4.0, 4.0],
    "three over the cap": [-3.0, -2.0, 0.0, 3.0, 4.5, 5.5],
    "isotropic pairs": [-2.0, -2.0, 0.5, 0.5, 4.0, 4.0],
}


@pytest.mark.parametrize("name", sorted(SPECTRA))
def test_condition_number_bound_holds_with_several_eigenvalues_over_the_cap(name):
    Sigma = safeguarded(with_spectrum(SPECTRA[name], seed=1))
    ev = torch.linalg.eigvalsh(Sigma)
    assert float(ev.max() / ev.min()) <= MAX_COND * (1 + 1e-9)
    assert math.log(float(ev.max() / ev.min())) == pytest.approx(geometry.LOG_MAX_SPREAD)


@pytest.mark.parametrize("name", sorted(SPECTRA))
def test_safeguard_is_equivariant_at_repeated_eigenvalues(name):
    S = with_spectrum(SPECTRA[name], seed=2)
    Sigma = safeguarded(S)
    rng = np.random.default_rng(3)
    for i in range(8):
        R = shapes.random_rotation(rng)
        Q = geometry.km_rotation(torch.as_tensor(-R if i % 2 else R))
        error = float((safeguarded(Q @ S @ Q.T) - Q @ Sigma @ Q.T).abs().max())
        assert error < 1e-9 * float(Sigma.abs().max())


def test_derivative_form_caps_the_same_eigenvalues():
    lam = torch.tensor(SPECTRA["three over the cap"], dtype=F64)
    bar, slope = geometry.safeguard(lam, -6.0, 6.0)
    cap = float(lam.min()) + geometry.LOG_MAX_SPREAD
    assert torch.allclose(bar, lam.clamp(max=cap))
    assert slope.tolist() == [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]  # capped ones carry no gradient
