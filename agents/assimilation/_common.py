"""Pieces the assimilation agents share: the cycling policy base (one hook per method, tuned by
the protocol of papergym.tuning on the problem's cached tuning runs), localization, low-rank
completion (soft-impute, HaLRTC) and the window residual of the forecast model in torch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from papergym.agent import Agent
from papergym.tuning import Tuned, choose

HERE = Path(__file__).parent
PAPER = "peng2026lophyda"
BOUND = 50.0


def as_action(states: np.ndarray, ensemble_size: int) -> np.ndarray:
    """An (E, n) float32 action: an ensemble as is, a single state repeated E times; values
    clipped to the action box (an analysis that diverged is the agent's error, not a crash)."""
    x = np.asarray(states, dtype=np.float64)
    if x.ndim == 1:
        x = np.repeat(x[None], ensemble_size, axis=0)
    x = np.nan_to_num(x, nan=0.0, posinf=BOUND, neginf=-BOUND)
    return np.clip(x, -BOUND, BOUND).astype(np.float32)


class CyclingPolicy:
    """A stateful cycling-DA policy: ``analyse(obs) -> (E, n) or (n,)``; ``reset()`` at each
    episode start. Subclasses keep whatever state they need (ensembles, past analyses)."""

    def __init__(self, ensemble_size: int) -> None:
        self.ensemble_size = ensemble_size
        self.reset()

    def reset(self) -> None:
        pass

    def analyse(self, obs: dict[str, Any]) -> np.ndarray:
        raise NotImplementedError

    def __call__(self, obs: dict[str, Any]) -> np.ndarray:
        return as_action(self.analyse(obs), self.ensemble_size)


class CyclingAgent(Tuned, Agent):
    """Base of the assimilation agents: ``make_policy(view, params, seed)`` is the one hook each
    method fills, ``params`` its ``Config`` as plain data; an agent that tunes declares
    ``search_space`` over keys of its ``Config``, whose defaults are the default candidate.

    ``solve`` runs the tuning protocol (papergym.tuning): the view's ``tuning_runs``
    candidates, the defaults first and then the agent's own Latin-hypercube draws, each scored
    by ``view.tuning_rmse`` (tuning seeds at the tuning density, time-averaged RMSE over all
    sites; the problem caches each run under the agent's identity and the configuration, so an
    ablation tunes on runs of its own); the lowest RMSE wins, ties to the default. It returns
    the policy of the chosen configuration for this trial's seed.
    """

    family = "assimilation"
    paper = PAPER

    def make_policy(self, view: Any, params: dict[str, Any], seed: int) -> CyclingPolicy:
        raise NotImplementedError

    def solve(self, view: Any, budget: Any, seed: int) -> CyclingPolicy:
        configs = [c.model_dump() for c in
                   self.tuning_candidates(int(budget.remaining("tuning_runs")), view)]
        best = configs[0]
        if len(configs) > 1:
            rmse = [view.tuning_rmse(self.make_policy(view, c, seed=0), c) for c in configs]
            best = configs[choose([-r for r in rmse])]
        self.chosen = best
        return self.make_policy(view, best, seed)


# ----------------------------------------------------------------------------- localization


def gaspari_cohn(distance: np.ndarray, radius: float) -> np.ndarray:
    """Gaspari and Cohn (1999) eq. 4.10: the compactly supported fifth-order correlation with
    half-width ``radius`` (zero beyond 2 radius)."""
    r = np.abs(np.asarray(distance, dtype=float)) / float(radius)
    out = np.zeros_like(r)
    near, far = r <= 1.0, (r > 1.0) & (r < 2.0)
    a = r[near]
    out[near] = -0.25 * a**5 + 0.5 * a**4 + 0.625 * a**3 - 5.0 / 3.0 * a**2 + 1.0
    b = r[far]
    out[far] = b**5 / 12.0 - 0.5 * b**4 + 0.625 * b**3 + 5.0 / 3.0 * b**2 - 5.0 * b + 4.0 - 2.0 / (3.0 * b)
    return out


# ----------------------------------------------------------------------------- low-rank completion


def soft_impute(Y: np.ndarray, mask: np.ndarray, lam: float, init: np.ndarray | None = None,
                iters: int = 100, tol: float = 1e-7, rank: int | None = None) -> np.ndarray:
    """Mazumder, Hastie and Tibshirani (2010) Algorithm 1: Z <- S_lam(P_Omega(Y) + P_Omega^perp(Z)),
    S_lam the singular-value soft threshold; ``init`` fills the missing entries at the start.
    ``rank`` keeps at most that many singular values (their Hard-Impute post-processing, §7:
    with lam -> 0 the iteration then converges to the rank-r completion)."""
    mask = mask.astype(bool)
    Z = np.where(mask, Y, 0.0 if init is None else init)
    for _ in range(int(iters)):
        filled = np.where(mask, Y, Z)
        U, s, Vt = np.linalg.svd(filled, full_matrices=False)
        s = np.maximum(s - lam, 0.0)
        if rank is not None:
            s[int(rank):] = 0.0
        new = (U * s) @ Vt
        change = np.linalg.norm(new - Z) / max(np.linalg.norm(Z), 1e-12)
        Z = new
        if change < tol:
            break
    return Z


def soft_impute_cv(Y: np.ndarray, mask: np.ndarray, init: np.ndarray, lams: tuple[float, ...],
                   rng: np.random.Generator, holdout: float = 0.2) -> tuple[np.ndarray, float]:
    """Soft-impute with lam chosen on a random ``holdout`` of the observed entries."""
    observed = np.flatnonzero(mask.reshape(-1))
    if len(observed) < 5 or len(lams) == 1:
        lam = lams[len(lams) // 2]
        return soft_impute(Y, mask, lam, init), lam
    held = rng.choice(observed, size=max(1, int(holdout * len(observed))), replace=False)
    fit_mask = mask.copy().reshape(-1)
    fit_mask[held] = False
    fit_mask = fit_mask.reshape(mask.shape)
    errors = []
    for lam in lams:
        Z = soft_impute(Y, fit_mask, lam, init, iters=50)
        errors.append(np.mean((Z.reshape(-1)[held] - Y.reshape(-1)[held]) ** 2))
    lam = lams[int(np.argmin(errors))]
    return soft_impute(Y, mask, lam, init), lam


def unfold(T: np.ndarray, mode: int) -> np.ndarray:
    return np.moveaxis(T, mode, 0).reshape(T.shape[mode], -1)


def fold(M: np.ndarray, mode: int, shape: tuple[int, ...]) -> np.ndarray:
    full = (shape[mode], *[s for i, s in enumerate(shape) if i != mode])
    return np.moveaxis(M.reshape(full), 0, mode)


def svt(M: np.ndarray, tau: float) -> np.ndarray:
    U, s, Vt = np.linalg.svd(M, full_matrices=False)
    return (U * np.maximum(s - tau, 0.0)) @ Vt


def halrtc(T: np.ndarray, mask: np.ndarray, weights: tuple[float, ...] | None = None, rho: float = 1e-2,
           iters: int = 300, tol: float = 1e-8, rho_growth: float = 1.05,
           init: np.ndarray | None = None) -> np.ndarray:
    """HaLRTC (Liu, Musialski, Wonka, Ye 2013, Algorithm 3): min sum_k w_k ||X_(k)||_* subject to
    P_Omega X = P_Omega T, by ADMM with one auxiliary tensor per mode; ``init`` fills the missing
    entries at the start (default: the mean of the observed ones)."""
    mask = mask.astype(bool)
    shape, K = T.shape, T.ndim
    w = np.full(K, 1.0 / K) if weights is None else np.asarray(weights, dtype=float)
    fill = (T[mask].mean() if mask.any() else 0.0) if init is None else init
    X = np.where(mask, T, fill)
    Ys = [np.zeros(shape) for _ in range(K)]
    for _ in range(int(iters)):
        Ms = [fold(svt(unfold(X + Ys[k] / rho, k), w[k] / rho), k, shape) for k in range(K)]
        new = np.mean([Ms[k] - Ys[k] / rho for k in range(K)], axis=0)
        new = np.where(mask, T, new)
        for k in range(K):
            Ys[k] = Ys[k] - rho * (Ms[k] - new)
        scale = max(np.linalg.norm(new), 1e-12)
        change = np.linalg.norm(new - X) / scale
        # converged when X stalls and every mode's auxiliary agrees with it (a huge first
        # threshold zeroes every M_k and leaves X unchanged: that is no convergence)
        gap = max(np.linalg.norm(M - new) for M in Ms) / scale
        X = new
        rho *= rho_growth
        if change < tol and gap < tol:
            break
    return X


# ----------------------------------------------------------------------------- the model in torch


def window_residual(model: Any, window: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """R_tau = x_{tau+1} - M_Delta(x_tau) for consecutive rows of ``window`` (physical units,
    shape (W, n)); rows where ``valid[tau] & valid[tau + 1]`` is false are zeroed."""
    prev = window[:-1]
    for _ in range(model.cycle_steps):
        prev = model.step(prev)
    pair = (valid[:-1] & valid[1:]).to(window.dtype)[:, None]
    return (window[1:] - prev) * pair


class WindowHistory:
    """The agent's own past analyses over the last W - 1 cycles (rows marked valid once filled)."""

    def __init__(self, window: int, n: int) -> None:
        self.window, self.n = window, n
        self.states = np.zeros((window - 1, n))
        self.valid = np.zeros(window - 1, dtype=bool)

    def push(self, analysis: np.ndarray) -> None:
        if self.window == 1:
            return
        self.states = np.concatenate([self.states[1:], analysis[None]])
        self.valid = np.concatenate([self.valid[1:], [True]])
