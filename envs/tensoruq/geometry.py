"""The mathematics shared by the tensoruq problems and agents: Kelvin-Mandel (KM) coordinates of
symmetric 3 x 3 tensors, their rotation action Q(R) in O(6), the irreps bases (0e + 2e for the
tensor, Sym²(0e + 2e) = 2x0e + 2x2e + 1x4e for a generator S in sym(6)), the safeguarded matrix
exponential sym(6) -> SPD, and the symmetric multivariate Laplace distribution.

Everything here is torch and runs in the dtype of its inputs; the bases are built once, in
float64, from e3nn's Wigner 3j symbols (a float32 build is off by ~5e-7, too much for an exact
equivariance test) and cast on use. e3nn is imported on first use, not at module import.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np
import torch

SQRT2 = math.sqrt(2.0)
KM_PAIRS = ((0, 0), (1, 1), (2, 2), (1, 2), (0, 2), (0, 1))  # (11, 22, 33, 23, 13, 12)
KM_SCALE = (1.0, 1.0, 1.0, SQRT2, SQRT2, SQRT2)
TENSOR_IRREPS = "1x0e+1x2e"
GENERATOR_IRREPS = "2x0e+2x2e+1x4e"
LOG_MAX_SPREAD = math.log(200.0)  # spectral safeguard: lambda_max - lambda_min <= log 200 [code]


# ----------------------------------------------------------------------------- KM coordinates
def km(T: torch.Tensor) -> torch.Tensor:
    """v(T) = (T11, T22, T33, √2 T23, √2 T13, √2 T12): an isometry, ||v|| = ||T||_F."""
    return torch.stack([s * T[..., i, j] for (i, j), s in zip(KM_PAIRS, KM_SCALE)], dim=-1)


def from_km(v: torch.Tensor) -> torch.Tensor:
    """The symmetric 3 x 3 tensor of KM coordinates v (inverse of :func:`km`)."""
    T = v.new_zeros((*v.shape[:-1], 3, 3))
    for k, ((i, j), s) in enumerate(zip(KM_PAIRS, KM_SCALE)):
        T[..., i, j] = v[..., k] / s
        T[..., j, i] = v[..., k] / s
    return T


def km_rotation(R: torch.Tensor) -> torch.Tensor:
    """Q(R) with v(R T Rᵀ) = Q(R) v(T): column k is v(R E_k Rᵀ), E_k the tensor of the k-th unit
    KM vector. Q is orthogonal and a homomorphism; reflections act as their rotation part
    (T is even)."""
    E = from_km(torch.eye(6, dtype=R.dtype, device=R.device))  # [6, 3, 3]
    rotated = R[..., None, :, :] @ E @ R[..., None, :, :].transpose(-1, -2)
    return km(rotated).transpose(-1, -2)


def logm_spd(T: torch.Tensor) -> torch.Tensor:
    lam, V = torch.linalg.eigh(T)
    return (V * torch.log(lam)[..., None, :]) @ V.transpose(-1, -2)


def expm_sym(T: torch.Tensor) -> torch.Tensor:
    lam, V = torch.linalg.eigh(T)
    return (V * torch.exp(lam)[..., None, :]) @ V.transpose(-1, -2)


# ----------------------------------------------------------------------------- irreps bases
@lru_cache(maxsize=1)
def _irreps_to_km64() -> torch.Tensor:
    from e3nn import o3

    with float64_default():
        cob = o3.ReducedTensorProducts("ij=ji", i="1o").change_of_basis  # [6, 3, 3], 0e + 2e
    cob = cob.to(torch.float64)
    # P[a, k] = f_a * Q_k[pair a]: irreps coordinates c -> KM coordinates P c
    P = torch.stack([km(cob[k]) for k in range(6)], dim=1)
    P = P / torch.linalg.norm(P, dim=0, keepdim=True)  # e3nn's normalization may differ: rescale
    return P


def irreps_to_km(dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """P (6 x 6, orthogonal): KM coordinates of a tensor with 0e + 2e irreps coordinates c are P c."""
    return _irreps_to_km64().to(dtype)


@lru_cache(maxsize=1)
def _sym2_basis64() -> torch.Tensor:
    """21 orthonormal symmetric 6 x 6 matrices B_j (irreps coordinates of 0e + 2e), ordered as
    2x0e + 2x2e + 1x4e: Sym²(0) = 0, 0 ⊗ 2 = 2, Sym²(2) = 0 + 2 + 4 (the Wigner 3j of 2 ⊗ 2 -> L is
    symmetric for even L)."""
    from e3nn import o3

    with float64_default():
        w = {L: o3.wigner_3j(2, 2, L).to(torch.float64) * math.sqrt(2 * L + 1) for L in (0, 2, 4)}
    blocks = []

    def embed(M22: torch.Tensor) -> torch.Tensor:
        B = torch.zeros(6, 6, dtype=torch.float64)
        B[1:, 1:] = M22
        return B

    e0 = torch.zeros(6, 6, dtype=torch.float64)
    e0[0, 0] = 1.0
    blocks.append(e0)  # 0e from 0 x 0
    blocks.append(embed(w[0][:, :, 0]))  # 0e from 2 x 2
    for m in range(5):  # 2e from 0 x 2
        B = torch.zeros(6, 6, dtype=torch.float64)
        B[0, 1 + m] = B[1 + m, 0] = 1 / SQRT2
        blocks.append(B)
    blocks.extend(embed(w[2][:, :, k]) for k in range(5))  # 2e from 2 x 2
    blocks.extend(embed(w[4][:, :, k]) for k in range(9))  # 4e from 2 x 2
    B = torch.stack(blocks)
    return B / torch.linalg.norm(B, dim=(1, 2), keepdim=True)


def sym2_basis(dtype: torch.dtype = torch.float64, space: str = "km") -> torch.Tensor:
    """The [21, 6, 6] generator basis, in KM coordinates (P B Pᵀ) or irreps coordinates."""
    B = _sym2_basis64()
    if space == "km":
        P = _irreps_to_km64()
        B = P @ B @ P.T
    elif space != "irreps":
        raise ValueError(f"space must be 'km' or 'irreps', got {space!r}")
    return B.to(dtype)


def generator(c: torch.Tensor) -> torch.Tensor:
    """S = Σ_j c_j B_j in KM coordinates, for c in 2x0e + 2x2e + 1x4e (last axis 21)."""
    return torch.einsum("...j,jab->...ab", c, sym2_basis(c.dtype))


def tensor_from_irreps(c: torch.Tensor) -> torch.Tensor:
    """KM coordinates P c of a 0e + 2e irreps vector c (last axis 6)."""
    return c @ irreps_to_km(c.dtype).T


class float64_default:
    def __enter__(self) -> None:
        self.old = torch.get_default_dtype()
        torch.set_default_dtype(torch.float64)

    def __exit__(self, *exc: object) -> None:
        torch.set_default_dtype(self.old)


# ----------------------------------------------------------------------------- SPD map
def safeguarded_spectrum(S: torch.Tensor, lam_lo: float, lam_hi: float, max_spread: float = LOG_MAX_SPREAD
                         ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(λ, λ̄, V) of S = V diag(λ) Vᵀ: eigh in float64; λ̄ = λ clamped to [lam_lo, lam_hi], then
    every λ̄_i above λ̄_min + max_spread lowered to it, so cond Σ̄ <= exp(max_spread). The
    authors' code lowers the largest only [code], which leaves the bound broken when two or
    more eigenvalues exceed the cap, and breaks equivariance at a repeated top eigenvalue (which
    copy of it eigh puts last depends on the rotation). Each λ̄_i is a function of λ_i and the
    invariant λ̄_min only, a map of the eigenvalues, so Σ̄(Q S Qᵀ) = Q Σ̄(S) Qᵀ exactly."""
    dtype = S.dtype
    S64 = 0.5 * (S + S.transpose(-1, -2)).to(torch.float64)
    lam, V = torch.linalg.eigh(S64)
    bar, _ = safeguard(lam, lam_lo, lam_hi, max_spread)
    return lam.to(dtype), bar.to(dtype), V.to(dtype)


def safeguard(lam: torch.Tensor, lam_lo: float, lam_hi: float,
              max_spread: float = LOG_MAX_SPREAD) -> tuple[torch.Tensor, torch.Tensor]:
    """(λ̄, dλ̄/dλ) of ascending eigenvalues λ: the clamp and spread cap of
    :func:`safeguarded_spectrum`, with the elementwise derivative (the cap's dependence on λ_min
    is not differentiated: the cap is a last-resort guard)."""
    bar = lam.clamp(lam_lo, lam_hi)
    slope = ((lam > lam_lo) & (lam < lam_hi)).to(lam.dtype)
    cap = bar.amin(-1, keepdim=True) + max_spread
    capped = bar > cap  # every eigenvalue over the cap, not only the largest
    bar = torch.where(capped, cap.expand_as(bar), bar)
    slope = torch.where(capped, torch.zeros_like(slope), slope)
    return bar, slope


class SpectralMap(torch.autograd.Function):
    """F(S) = V diag(f(λ)) Vᵀ for symmetric S with a stable backward (Daleckii-Krein): dF =
    V [Δ ∘ (Vᵀ dS V)] Vᵀ, Δ_ij = (f(λ_i) − f(λ_j)) / (λ_i − λ_j), f'(λ_i) where λ_i ≈ λ_j. Autograd
    through eigh divides by λ_i − λ_j instead and blows up at the (nearly) repeated eigenvalues
    that an isotropic or freshly initialized generator has. ``fn(λ) -> (f, f')``; float64."""

    @staticmethod
    def forward(ctx: Any, S: torch.Tensor, fn: Any) -> torch.Tensor:
        S64 = (0.5 * (S + S.transpose(-1, -2))).to(torch.float64)
        lam, V = torch.linalg.eigh(S64)
        f, df = fn(lam)
        ctx.save_for_backward(lam, V, f, df)
        ctx.dtype = S.dtype
        return ((V * f[..., None, :]) @ V.transpose(-1, -2)).to(S.dtype)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        lam, V, f, df = ctx.saved_tensors
        G = grad.to(torch.float64)
        G = 0.5 * (G + G.transpose(-1, -2))
        gap = lam[..., :, None] - lam[..., None, :]
        close = gap.abs() < 1e-9 * (1 + lam.abs().amax(-1, keepdim=True)[..., None])
        divided = (f[..., :, None] - f[..., None, :]) / torch.where(close, torch.ones_like(gap), gap)
        delta = torch.where(close, 0.5 * (df[..., :, None] + df[..., None, :]), divided)
        K = V.transpose(-1, -2) @ G @ V
        return (V @ (delta * K) @ V.transpose(-1, -2)).to(ctx.dtype), None


def spectral_map(S: torch.Tensor, fn: Any) -> torch.Tensor:
    return SpectralMap.apply(S, fn)


def spectral_exp(lam_bar: torch.Tensor, V: torch.Tensor) -> torch.Tensor:
    """Σ = V diag(exp λ̄) Vᵀ."""
    return (V * torch.exp(lam_bar)[..., None, :]) @ V.transpose(-1, -2)


# ----------------------------------------------------------------------------- Laplace
def bessel_k2(z: torch.Tensor) -> torch.Tensor:
    """K₂(z) = K₀(z) + (2/z) K₁(z) (recurrence)."""
    return torch.special.modified_bessel_k0(z) + 2.0 / z * torch.special.modified_bessel_k1(z)


def log_bessel_k2(z: torch.Tensor) -> torch.Tensor:
    """log K₂(z) through the scaled forms (K_ν(z) = e^{−z} K_ν^s(z)): stable for large z."""
    k0 = torch.special.scaled_modified_bessel_k0(z)
    k1 = torch.special.scaled_modified_bessel_k1(z)
    return torch.log(k0 + 2.0 / z * k1) - z


def laplace_logpdf(q: torch.Tensor, logdet: torch.Tensor, k: int = 6) -> torch.Tensor:
    """log f of the symmetric multivariate Laplace with Cov X = Σ (X = μ + √W Σ^{1/2} Z, W ~
    Exp(1)) at Mahalanobis q: log 2 − (k/2) log 2π − ½ log|Σ| + (ν/2) log(q/2) + log K_ν(√(2q)),
    ν = 1 − k/2 (K_{−ν} = K_ν). Implemented for k = 6 (ν = −2)."""
    if k != 6:
        raise ValueError("laplace_logpdf is implemented for k = 6")
    nu = 1 - k / 2
    return (math.log(2.0) - k / 2 * math.log(2 * math.pi) - 0.5 * logdet
            + nu / 2 * torch.log(q / 2) + log_bessel_k2(torch.sqrt(2 * q)))


def gaussian_logpdf(q: torch.Tensor, logdet: torch.Tensor, k: int = 6) -> torch.Tensor:
    return -0.5 * (k * math.log(2 * math.pi) + logdet + q)


@lru_cache(maxsize=8)
def mahalanobis_quantile(family: str, p: float, k: int = 6) -> float:
    """The p-quantile of q: χ²_k (Gaussian) or W·χ²_k with W ~ Exp(1) (Laplace), whose CDF
    F(t) = ∫ P(χ²_k ≤ t/w) e^{−w} dw is integrated numerically (exact, no Monte Carlo)."""
    from scipy import integrate, optimize, stats

    if family == "gaussian":
        return float(stats.chi2.ppf(p, k))
    if family != "laplace":
        raise ValueError(f"family must be 'gaussian' or 'laplace', got {family!r}")

    def cdf(t: float) -> float:
        value, _ = integrate.quad(lambda w: stats.chi2.cdf(t / w, k) * math.exp(-w), 0, np.inf, limit=200)
        return value

    return float(optimize.brentq(lambda t: cdf(t) - p, 1e-9, 1e4, xtol=1e-12))


def sample(family: str, mu: torch.Tensor, Sigma: torch.Tensor, n: int,
           generator: torch.Generator) -> torch.Tensor:
    """n draws per row of the declared predictive family, [n, B, 6], with Cov = Σ for both."""
    B, k = mu.shape
    L = torch.linalg.cholesky(Sigma)
    z = torch.randn((n, B, k), generator=generator, dtype=mu.dtype)
    x = torch.einsum("bij,nbj->nbi", L, z)
    if family == "laplace":
        w = -torch.log(torch.rand((n, B, 1), generator=generator, dtype=mu.dtype))
        x = x * torch.sqrt(w)
    elif family != "gaussian":
        raise ValueError(f"family must be 'gaussian' or 'laplace', got {family!r}")
    return mu[None] + x
