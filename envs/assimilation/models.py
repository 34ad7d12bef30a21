"""The two forecast models of the family: Lorenz-96 (RK4) and 2-D Kolmogorov flow (pseudo-spectral).

Both are frozen dataclasses, so a problem hands them to agents by value: an agent forecasts with
exactly the model the problem uses (the perfect-model setting) unless ``model_error`` is set, in
which case the truth runs with a different forcing. Every method works on the last axis of a
batch of flattened states (``(..., n)``); ``tendency`` and ``step`` also accept torch tensors, so
the agents' PDE-residual guidance differentiates the same equations the problem integrates.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import numpy as np


def _roll(x: Any, shift: int) -> Any:
    """``np.roll`` / ``torch.roll`` along the last axis."""
    if isinstance(x, np.ndarray):
        k = shift % x.shape[-1]
        return np.concatenate((x[..., -k:], x[..., :-k]), axis=-1) if k else x
    return x.roll(shift, dims=-1)


@dataclass(frozen=True)
class Lorenz96:
    """dx_k/dt = (x_{k+1} - x_{k-2}) x_{k-1} - damping x_k + F, periodic in k (Lorenz 1996).

    ``step`` is one classical RK4 step of ``dt``; one assimilation cycle is ``cycle_steps`` steps
    (Delta = 0.15 with dt = 0.05). ``damping = 0, forcing = 0`` is the energy-conserving limit:
    the advection term alone conserves sum_k x_k^2.
    """

    n: int = 40
    forcing: float = 8.0
    dt: float = 0.05
    cycle_steps: int = 3
    damping: float = 1.0

    @property
    def delta(self) -> float:
        return self.dt * self.cycle_steps

    @property
    def grid(self) -> tuple[int, ...]:
        """The shape of a state on its periodic grid: the ring of n sites."""
        return (self.n,)

    def advection(self, x: Any) -> Any:
        return (_roll(x, -1) - _roll(x, 2)) * _roll(x, 1)

    def tendency(self, x: Any) -> Any:
        return self.advection(x) - self.damping * x + self.forcing

    def step(self, x: Any, dt: float | None = None) -> Any:
        h = self.dt if dt is None else dt
        k1 = self.tendency(x)
        k2 = self.tendency(x + 0.5 * h * k1)
        k3 = self.tendency(x + 0.5 * h * k2)
        k4 = self.tendency(x + h * k3)
        return x + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)

    def forecast(self, x: Any, cycles: int = 1) -> Any:
        """The state(s) ``cycles`` assimilation cycles later."""
        for _ in range(int(cycles) * self.cycle_steps):
            x = self.step(x)
        return x

    def random_state(self, rng: np.random.Generator, count: int | None = None) -> np.ndarray:
        """A point on the attractor (``count`` of them, shape (count, n)): a perturbed rest state
        spun up for 1,000 RK4 steps."""
        x = self.forcing + rng.normal(0.0, 1.0, self.n if count is None else (count, self.n))
        for _ in range(1000):
            x = self.step(x)
        return x

    def with_forcing(self, forcing: float) -> Lorenz96:
        return replace(self, forcing=float(forcing))


@dataclass(frozen=True)
class Kolmogorov:
    """2-D incompressible Navier-Stokes in vorticity form on the periodic square [0, 2 pi)^2:

        d omega/dt + u . grad omega = nu lap omega - drag omega + f,   f = -k_f cos(k_f y),

    the curl of the Kolmogorov body force u_x += sin(k_f y) (k_f = 4), u from the stream function
    (lap psi = -omega, u = (d psi/dy, -d psi/dx)). Pseudo-spectral on an ``size`` x ``size``
    grid, the nonlinear term de-aliased by the 2/3 rule, classical RK4 in time. Re = 1 / nu.
    States are flattened row-major (y, x) vorticity fields.

    ``dealias_state`` completes the 2/3 rule (Orszag 1971): every field entering ``step`` or
    ``tendency`` is first projected onto the retained band |k_x|, |k_y| <= size // 3. Without it
    only the nonlinear term's output is truncated, which is exact for band-limited fields (a
    spun-up truth stays in the band to round-off) but keeps the out-of-band modes of a field from
    outside the model (an analysis), and their products in u . grad omega reach the retained band
    (partly as aliases: on the grid, a product of two modes above size / 3 folds back into it).
    """

    size: int = 32
    reynolds: float = 1000.0
    drag: float = 0.1
    wavenumber: int = 4
    dt: float = 0.02
    cycle_steps: int = 10
    forcing_scale: float = 1.0
    spinup: float = 20.0  # time units from noise to a developed flow
    dealias_state: bool = False  # project inputs onto the 2/3-rule band (KolmogorovCycling-v1)

    @property
    def n(self) -> int:
        return self.size * self.size

    @property
    def delta(self) -> float:
        return self.dt * self.cycle_steps

    @property
    def grid(self) -> tuple[int, ...]:
        """The shape of a state on its periodic grid: the (y, x) torus (states are flattened)."""
        return (self.size, self.size)

    def _grids(self) -> tuple[np.ndarray, ...]:
        return _spectral_grids(self.size)

    def forcing_field(self) -> np.ndarray:
        y = 2 * math.pi * np.arange(self.size) / self.size
        column = -self.forcing_scale * self.wavenumber * np.cos(self.wavenumber * y)
        return np.repeat(column[:, None], self.size, axis=1)

    def _fields(self, x: Any) -> tuple[Any, _Spectral]:
        """``x`` as (..., size, size) fields and the spectral operators of its library: numpy
        (float64), or torch in the tensor's own dtype and device (differentiable)."""
        if not isinstance(x, np.ndarray) and type(x).__module__.startswith("torch"):
            w = x
        else:
            w = np.asarray(x, dtype=np.float64)
        return w.reshape(*w.shape[:-1], self.size, self.size), _spectral(w, self.size, self.wavenumber,
                                                                           self.forcing_scale)

    def tendency(self, x: Any) -> Any:
        """d omega/dt of flattened fields (numpy float64, or a torch tensor), evaluated spectrally."""
        w, ops = self._fields(x)
        return ops.irfft2(self._tendency_hat(self._hat(w, ops), ops)).reshape(w.shape[:-2] + (self.n,))

    def _hat(self, w: Any, ops: _Spectral) -> Any:
        """The spectrum of a (..., size, size) field, projected onto the 2/3-rule band when
        ``dealias_state`` is set."""
        w_hat = ops.rfft2(w)
        return w_hat * ops.dealias if self.dealias_state else w_hat

    def _tendency_hat(self, w_hat: Any, ops: _Spectral) -> Any:
        kx, ky, inv, k2 = ops.kx, ops.ky, ops.inv, ops.k2
        psi_hat = w_hat * inv
        u = ops.irfft2(1j * ky * psi_hat)
        v = ops.irfft2(-1j * kx * psi_hat)
        wx = ops.irfft2(1j * kx * w_hat)
        wy = ops.irfft2(1j * ky * w_hat)
        advection = ops.rfft2(u * wx + v * wy) * ops.dealias
        return -advection - (k2 / self.reynolds + self.drag) * w_hat + ops.forcing

    def step(self, x: Any, dt: float | None = None) -> Any:
        """One RK4 step of flattened fields: numpy in, float64 numpy out; a torch tensor in, a
        tensor of its dtype out, differentiable (the same operations through ``torch.fft``)."""
        h = self.dt if dt is None else dt
        w, ops = self._fields(x)
        w_hat = self._hat(w, ops)
        k1 = self._tendency_hat(w_hat, ops)
        k2 = self._tendency_hat(w_hat + 0.5 * h * k1, ops)
        k3 = self._tendency_hat(w_hat + 0.5 * h * k2, ops)
        k4 = self._tendency_hat(w_hat + h * k3, ops)
        w_hat = w_hat + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        return ops.irfft2(w_hat).reshape(w.shape[:-2] + (self.n,))

    def forecast(self, x: Any, cycles: int = 1) -> Any:
        for _ in range(int(cycles) * self.cycle_steps):
            x = self.step(x)
        return x

    def random_state(self, rng: np.random.Generator, count: int | None = None,
                     spinup: float | None = None) -> np.ndarray:
        """A developed flow (``count`` of them, shape (count, n)): low-wavenumber random
        vorticity of std 3 spun up for ``spinup`` time units."""
        k = np.sqrt(self._grids()[4])
        shape = (1 if count is None else count, self.size, self.size // 2 + 1)
        w_hat = (rng.normal(size=shape) + 1j * rng.normal(size=shape)) * ((k > 0) & (k <= 4))
        w = np.fft.irfft2(w_hat, s=(self.size, self.size))
        w = 3.0 * w / np.maximum(w.std(axis=(-2, -1), keepdims=True), 1e-12)
        w = w.reshape(-1) if count is None else w.reshape(count, -1)
        for _ in range(int(round((self.spinup if spinup is None else spinup) / self.dt))):
            w = self.step(w)
        return w

    def with_forcing(self, scale: float) -> Kolmogorov:
        return replace(self, forcing_scale=float(scale))


@functools.lru_cache(maxsize=8)
def _spectral_grids(size: int) -> tuple[np.ndarray, ...]:
    """Wavenumbers (kx on the rfft axis), 1/k^2 (0 at k = 0), the 2/3 de-aliasing mask, k^2."""
    k = np.fft.fftfreq(size, d=1.0 / size)
    ky, kx = np.meshgrid(k, np.fft.rfftfreq(size, d=1.0 / size), indexing="ij")
    k2 = kx**2 + ky**2
    inv = np.where(k2 > 0, 1.0 / np.where(k2 > 0, k2, 1.0), 0.0)
    cut = size // 3
    dealias = (np.abs(kx) <= cut) & (np.abs(ky) <= cut)
    return kx, ky, inv, dealias, k2


@functools.lru_cache(maxsize=8)
def _forcing_hat(size: int, wavenumber: int, scale: float) -> np.ndarray:
    y = 2 * math.pi * np.arange(size) / size
    column = -scale * wavenumber * np.cos(wavenumber * y)
    return np.fft.rfft2(np.repeat(column[:, None], size, axis=1))


class _Spectral(NamedTuple):
    """The FFT pair and the spectral constants of one array library (and dtype, device)."""

    rfft2: Callable[[Any], Any]
    irfft2: Callable[[Any], Any]
    kx: Any
    ky: Any
    inv: Any
    dealias: Any
    k2: Any
    forcing: Any


def _spectral(w: Any, size: int, wavenumber: int, scale: float) -> _Spectral:
    kx, ky, inv, dealias, k2 = _spectral_grids(size)
    forcing = _forcing_hat(size, wavenumber, scale)
    if isinstance(w, np.ndarray):
        return _Spectral(np.fft.rfft2, functools.partial(np.fft.irfft2, s=(size, size)), kx, ky, inv, dealias,
                         k2, forcing)
    return _torch_spectral(size, wavenumber, scale, w.dtype, w.device)


@functools.lru_cache(maxsize=16)
def _torch_spectral(size: int, wavenumber: int, scale: float, dtype: Any, device: Any) -> _Spectral:
    """The numpy constants as torch tensors: real ones in ``dtype``, complex ones in its complex
    counterpart (so a float32 field stays complex64 throughout)."""
    import torch

    kx, ky, inv, dealias, k2 = _spectral_grids(size)
    real = lambda a: torch.as_tensor(a, dtype=dtype, device=device)  # noqa: E731
    cdtype = torch.complex64 if dtype in (torch.float32, torch.float16, torch.bfloat16) else torch.complex128
    forcing = torch.as_tensor(_forcing_hat(size, wavenumber, scale), dtype=cdtype, device=device)
    return _Spectral(torch.fft.rfft2, functools.partial(torch.fft.irfft2, s=(size, size)), real(kx), real(ky),
                     real(inv), real(dealias), real(k2), forcing)
