"""tensoruq problems: KM coordinates, irreps bases, the SPD map, the Laplace law, the data and the
evaluator, each against an independent computation."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy import integrate, special, stats

import papergym
from papergym.check import check_problem
from papergym.envs.tensoruq import crystals, geometry, shapes
from papergym.envs.tensoruq import task as T

F64 = torch.float64
EYE6 = torch.eye(6, dtype=F64)


def rotations(n: int, seed: int = 0, reflect: bool = True) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    out = [shapes.random_rotation(rng) for _ in range(n)]
    return [-R if reflect and i % 2 else R for i, R in enumerate(out)]


def sym(rng: np.random.Generator, n: int = 3) -> torch.Tensor:
    A = torch.as_tensor(rng.normal(size=(n, n)))
    return 0.5 * (A + A.T)


# ----------------------------------------------------------------------------- KM coordinates
def test_km_is_an_isometry_and_rotations_act_orthogonally():
    rng = np.random.default_rng(1)
    for R1, R2 in zip(rotations(5, 1), rotations(5, 2)):
        T1 = sym(rng)
        v = geometry.km(T1)
        assert abs(float(torch.linalg.norm(v) - torch.linalg.norm(T1))) < 1e-12
        assert torch.allclose(geometry.from_km(v), T1, atol=1e-14)
        R1t, R2t = torch.as_tensor(R1), torch.as_tensor(R2)
        Q1, Q2 = geometry.km_rotation(R1t), geometry.km_rotation(R2t)
        assert float((Q1.T @ Q1 - EYE6).abs().max()) < 1e-12
        assert float((geometry.km_rotation(R1t @ R2t) - Q1 @ Q2).abs().max()) < 1e-12
        assert float((geometry.km(R1t @ T1 @ R1t.T) - Q1 @ v).abs().max()) < 1e-12


def test_irreps_to_km_is_orthogonal_and_intertwines_the_wigner_d():
    from e3nn import o3

    P = geometry.irreps_to_km()
    assert float((P.T @ P - EYE6).abs().max()) < 1e-10
    for R in rotations(4, 3):
        Rt = torch.as_tensor(R)
        with geometry.float64_default():  # e3nn builds D in the default dtype
            D = o3.Irreps(geometry.TENSOR_IRREPS).D_from_matrix(Rt)
        assert float((geometry.km_rotation(Rt) - P @ D @ P.T).abs().max()) < 1e-10


def test_generator_basis_is_sym2_of_0e_plus_2e():
    from e3nn import o3

    B = geometry.sym2_basis()
    assert B.shape == (21, 6, 6)
    assert o3.Irreps(geometry.GENERATOR_IRREPS).dim == 21 == 1 + 1 + 5 + 5 + 9
    assert float((B - B.transpose(1, 2)).abs().max()) < 1e-14
    gram = torch.einsum("iab,jab->ij", B, B)
    assert float((gram - torch.eye(21, dtype=F64)).abs().max()) < 1e-10  # orthonormal: independent
    # the same span as e3nn's reduced tensor product of the symmetric square
    rtp = o3.ReducedTensorProducts("ij=ji", i="0e+2e").change_of_basis.to(torch.float64).reshape(21, 36)
    both = torch.cat([rtp, geometry.sym2_basis(space="irreps").reshape(21, 36)])
    assert int(torch.linalg.matrix_rank(both)) == 21
    rng = np.random.default_rng(4)
    for R in rotations(4, 4):
        Rt = torch.as_tensor(R)
        with geometry.float64_default():
            D = o3.Irreps(geometry.GENERATOR_IRREPS).D_from_matrix(Rt)
        Q = geometry.km_rotation(Rt)
        c = torch.as_tensor(rng.normal(size=21))
        assert float((geometry.generator(D @ c) - Q @ geometry.generator(c) @ Q.T).abs().max()) < 1e-10


# ----------------------------------------------------------------------------- SPD map
def test_expm_by_eigh_matches_matrix_exp_and_gives_spd():
    rng = np.random.default_rng(5)
    for scale in (1.0, 5.0, 20.0):
        S = sym(rng, 6) * scale
        S = S.clamp(-20, 20)
        lam, V = torch.linalg.eigh(S)
        Sigma = geometry.spectral_exp(lam, V)
        if scale == 1.0:
            assert float((Sigma - torch.linalg.matrix_exp(S)).abs().max()) < 1e-10
            assert float((torch.linalg.inv(Sigma) - torch.linalg.matrix_exp(-S)).abs().max()) < 1e-10
            assert abs(float(torch.logdet(Sigma) - torch.trace(S))) < 1e-10
        assert float(torch.linalg.eigvalsh(Sigma).min()) > 0


def test_safeguard_commutes_with_conjugation_and_is_inert_inside_the_bounds():
    rng = np.random.default_rng(6)
    S = sym(rng, 6) * 4
    lam, bar, V = geometry.safeguarded_spectrum(S, -0.8, 2.0)
    assert bar.min() >= -0.8 - 1e-12 and bar.max() <= 2.0 + 1e-12
    Sigma = geometry.spectral_exp(bar, V)
    for R in rotations(3, 7):
        Q = geometry.km_rotation(torch.as_tensor(R))
        _, bar_q, V_q = geometry.safeguarded_spectrum(Q @ S @ Q.T, -0.8, 2.0)
        assert float((geometry.spectral_exp(bar_q, V_q) - Q @ Sigma @ Q.T).abs().max()) < 1e-10
    inside = sym(rng, 6) * 0.2
    lam, bar, V = geometry.safeguarded_spectrum(inside, -4.0, 3.0)
    assert torch.equal(lam, bar)
    assert float((geometry.spectral_exp(bar, V) - torch.linalg.matrix_exp(inside)).abs().max()) < 1e-12
    # the spread cap: λ_max − λ_min <= log 200
    wide = torch.diag(torch.tensor([-3.0, 0, 0, 0, 0, 5.0], dtype=F64))
    _, bar, _ = geometry.safeguarded_spectrum(wide, -4.0, 6.0)
    assert abs(float(bar[-1] - bar[0]) - math.log(200)) < 1e-12


def test_spectral_map_gradient_matches_autograd_and_is_finite_at_repeated_eigenvalues():
    rng = np.random.default_rng(8)
    S = sym(rng, 6).requires_grad_(True)
    W = sym(rng, 6)

    def fn(lam: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        bar, slope = geometry.safeguard(lam, -1.0, 1.0)
        return torch.exp(-bar), -torch.exp(-bar) * slope

    (geometry.spectral_map(S, fn) * W).sum().backward()
    S2 = S.detach().clone().requires_grad_(True)
    lam, V = torch.linalg.eigh(S2)
    ((V * fn(lam)[0][None, :]) @ V.T * W).sum().backward()
    assert float((S.grad - S2.grad).abs().max()) < 1e-8
    iso = (0.5 * EYE6).clone().requires_grad_(True)
    (geometry.spectral_map(iso, fn) * W).sum().backward()
    assert torch.isfinite(iso.grad).all()
    assert float((iso.grad + math.exp(-0.5) * W).abs().max()) < 1e-10  # f'(½) W at S = ½ I


# ----------------------------------------------------------------------------- Laplace
def test_bessel_k2_recurrence_matches_scipy():
    z = torch.logspace(-3, math.log10(50), 200, dtype=F64)
    ref = special.kv(2, z.numpy())
    got = geometry.bessel_k2(z).numpy()
    assert np.max(np.abs(got - ref) / ref) < 1e-10
    assert np.max(np.abs(np.exp(geometry.log_bessel_k2(z).numpy()) - ref) / ref) < 1e-10


def test_laplace_density_integrates_to_one():
    # whitened (Σ = I): ∫ f(r²) · |S⁵| r⁵ dr with |S⁵| = π³ (unit sphere in R⁶)
    def radial(r: float) -> float:
        q = torch.tensor(r * r, dtype=F64)
        density = math.exp(float(geometry.laplace_logpdf(q, torch.tensor(0.0, dtype=F64))))
        return density * math.pi ** 3 * r ** 5

    total = sum(integrate.quad(radial, a, b, limit=200, epsabs=1e-13)[0]
                for a, b in ((0, 1), (1, 10), (10, 60)))
    assert abs(total - 1) < 1e-6


def test_laplace_draws_have_mahalanobis_w_chi2():
    gen = torch.Generator().manual_seed(0)
    mu = torch.zeros(1, 6, dtype=F64)
    A = torch.as_tensor(np.random.default_rng(9).normal(size=(6, 6)))
    Sigma = (A @ A.T + EYE6)[None]
    x = geometry.sample("laplace", mu, Sigma, 100_000, gen)[:, 0]
    q = torch.einsum("ni,ij,nj->n", x, torch.linalg.inv(Sigma[0]), x).numpy()
    rng = np.random.default_rng(10)
    ref = rng.exponential(size=100_000) * rng.chisquare(6, size=100_000)
    assert stats.ks_2samp(q, ref).pvalue > 0.01
    assert abs(np.mean(q <= geometry.mahalanobis_quantile("laplace", 0.9)) - 0.9) < 0.005
    assert float((torch.as_tensor(np.cov(x.numpy().T)) - Sigma[0]).abs().max()) < 0.15 * float(Sigma.max())


def test_coverage_of_a_perfect_gaussian_predictor():
    rng = np.random.default_rng(11)
    A = rng.normal(size=(6, 6))
    Sigma = A @ A.T + np.eye(6)
    x = rng.multivariate_normal(np.zeros(6), Sigma, size=10_000)
    q = np.einsum("ni,ij,nj->n", x, np.linalg.inv(Sigma), x)
    for p in T.COVERAGE_LEVELS:
        assert abs(np.mean(q <= geometry.mahalanobis_quantile("gaussian", p)) - p) < 0.015


# ----------------------------------------------------------------------------- data
@pytest.mark.parametrize("family", ["box", "ellipsoid", "cylinder"])
def test_analytic_inertia_matches_monte_carlo(family):
    rng = np.random.default_rng(12)
    solid = shapes.make_solid(family, rng)
    pts = rng.uniform(-1, 1, size=(600_000, 3)) * solid.extent
    inside = pts[solid.inside(pts)][:200_000]
    assert len(inside) == 200_000
    M = np.cov(inside.T, bias=True)
    mc = np.trace(M) * np.eye(3) - M
    assert np.max(np.abs(mc - solid.inertia())) / np.max(np.abs(solid.inertia())) < 0.005


def test_inertia_targets_are_psd_with_the_triangle_inequality_and_clouds_have_unit_extent():
    rng = np.random.default_rng(13)
    for family in shapes.FAMILIES:
        for _ in range(5):
            solid = shapes.make_solid(family, rng)
            M = shapes.inclusion_moment(solid, 0.3, rng)
            ev = np.linalg.eigvalsh(np.trace(M) * np.eye(3) - M)
            assert ev.min() > 0, family
            assert ev[0] + ev[1] >= ev[2] - 1e-12, family
            cloud = solid.surface(rng, 2000)
            assert 0.9 < np.ptp(cloud, axis=0).max() <= 1.0 + 1e-9, family


def test_dielectric_tensors_are_spd_isotropic_for_cubic_and_rotate_with_the_crystal():
    rng = np.random.default_rng(14)
    for kind in crystals.LATTICES:
        for _ in range(4):
            c = crystals.make_crystal(rng, (kind,), (1, 4))
            eps = crystals.dielectric(c.bonds, c.pairs, c.volume)
            assert np.allclose(eps, eps.T, atol=1e-14)
            assert np.linalg.eigvalsh(eps).min() > 1.0
            if kind == "cubic":
                assert np.max(np.abs(eps - np.trace(eps) / 3 * np.eye(3))) < 1e-10
            R = rotations(1, int(rng.integers(100)))[0]
            rotated = crystals.dielectric(c.bonds @ R.T, c.pairs, c.volume)
            assert np.max(np.abs(rotated - R @ eps @ R.T)) < 1e-10


# ----------------------------------------------------------------------------- evaluator
class Oracle:
    """μ = the true target (physical or log space), Σ = tiny: for the log_km scoring test."""

    def __init__(self, targets: dict[int, np.ndarray], space: str) -> None:
        self.targets, self.space = targets, space

    def predict(self, inputs):  # rotated inputs (the equivariance probe) get the first target
        first = next(iter(self.targets.values()))
        key = [self.targets.get(hash(p.tobytes()), first) for p in np.asarray(inputs["points"])]
        y = torch.as_tensor(np.stack(key))
        if self.space == "log_km":
            y = T.to_log(y)
        n = len(y)
        return y.numpy(), np.tile(1e-14 * np.eye(6), (n, 1, 1)), "gaussian", self.space


def test_log_km_scoring_maps_back_to_physical_space():
    task = papergym.make_task("papergym/TensorUQDielectric-v0", tier="smoke", n_test=16, n_ood=0)
    held = task.heldout_entry(0).build()
    test = held["test"]
    targets = {hash(p.tobytes()): y for p, y in zip(test.inputs["points"], test.targets)}
    task._train_targets = test.targets  # no view drawn: the ES reference only
    mae = {s: task.evaluate(Oracle(targets, s), 0).metrics["mae"] for s in ("km", "log_km")}
    assert mae["km"] < 1e-8 and abs(mae["km"] - mae["log_km"]) < 1e-8


def test_the_view_never_holds_the_test_split():
    task = papergym.make_task("papergym/TensorUQInertia-v0", tier="smoke")
    view = task.train_view(0, task.budget)
    test = task.heldout_entry(0).build()["test"]
    seen = {p.tobytes() for p in np.asarray(view.train.inputs["points"])}
    seen |= {p.tobytes() for p in np.asarray(view.validation.inputs["points"])}
    assert not any(p.tobytes() in seen for p in test.inputs["points"])
    with pytest.raises(PermissionError):
        task.train_view(10**6 + 1, task.budget)


def test_outlier_cells_share_their_clouds():
    a = papergym.make_task("papergym/TensorUQInertia-v0", tier="smoke", p_out=0.0).heldout_entry(0).build()
    b = papergym.make_task("papergym/TensorUQInertia-v0", tier="smoke", p_out=0.2).heldout_entry(0).build()
    assert np.array_equal(a["test"].targets, b["test"].targets)
    n_a = a["test"].inputs["mask"].sum(1)
    n_b = b["test"].inputs["mask"].sum(1)
    assert (n_a == 32).all() and (n_b > 32).mean() > 0.05


def test_bad_artifacts_are_rejected():
    task = papergym.make_task("papergym/TensorUQInertia-v0", tier="smoke")
    with pytest.raises(TypeError):
        task.evaluate(object(), 0)

    class Wrong:
        def predict(self, inputs):
            return np.zeros((2, 6)), np.zeros((2, 6, 6)), "gaussian", "km"

    with pytest.raises(ValueError):
        task.evaluate(Wrong(), 0)

    class LogOnInertia:
        def predict(self, inputs):
            n = len(inputs["volume"])
            return np.zeros((n, 6)), np.tile(np.eye(6), (n, 1, 1)), "gaussian", "log_km"

    with pytest.raises(ValueError, match="space"):
        task.evaluate(LogOnInertia(), 0)
    with pytest.raises(ValueError, match="p_out"):
        papergym.make_task("papergym/TensorUQInertia-v0", tier="smoke", p_out=2)


def test_papergym_check_on_a_non_default_configuration():
    report = check_problem("papergym/TensorUQDielectric-v0", tier="smoke",
                           make_kwargs={"noise": 0.5, "n_train": 32, "n_val": 8})
    assert report.ok, report.summary()
