"""Ellipsoid method for performative stability at rho <= 1 (Anagnostides et al. 2026).

The paper's positive result: for rho <= 1 an eps-PS point is found in poly(d, log 1/eps)
deployments by an ellipsoid method whose separating vector at a deployed point x is
a = x - G(x). Validity [derived]: for nonexpansive G every fixed point x* satisfies
<x - G(x), x* - x> <= -1/2 ||x - G(x)||^2, so the half-space {y : <a, y - x> <= 0} keeps every
PS point (``cut="central"``), and so does the deeper {y : <a, y - x> <= -1/2 ||a||^2}
(``cut="deep"``).

    E_0 = ball(1/2 * 1, sqrt(d)/2) contains X = [0,1]^d;  P_0 = (d/4) I
    loop: if c not in X: a = outward normal of the most violated face (deep cut, no deployment)
          else: deploy x = c; observe G(x) = Pi_X(zbar); a = x - G(x)
          b = P a / sqrt(a^T P a);  alpha = depth of the cut in E's metric
          c <- c - (1 + d alpha)/(d + 1) b
          P <- d^2/(d^2 - 1) (1 - alpha^2) (P - 2 (1 + d alpha)/((d + 1)(1 + alpha)) b b^T)
    the last deployment is the best iterate seen (smallest observed gap); d = 1 is bisection.
[recon] start ball, output rule and cut depth are reconstructions (the paper gives the
separation oracle and the complexity, not an implementation). Box domains only: on the
simplex-product (bimatrix) instances the agent raises ValueError (shown as n/a).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import papergym
from papergym.agents.performative._deploy import AffineAdapter, DeploymentRule


class EllipsoidRule(DeploymentRule):
    def __init__(self, domain: Any, horizon: int, cut: str = "central", record: bool = False):
        self.domain = domain
        self.horizon, self.cut_kind, self.record = horizon, cut, record
        super().__init__(AffineAdapter(domain))

    def reset(self) -> None:
        super().reset()
        d = self.domain.dim
        self.center = np.full(d, 0.5)
        self.P = np.eye(d) * d / 4.0
        self.lo, self.hi = 0.0, 1.0  # d = 1: bisection interval
        self.best, self.best_gap = None, np.inf
        self.degenerate = False
        self.history: list[tuple[np.ndarray, np.ndarray]] = []
        if self.record:
            self.history.append((self.center.copy(), self.P.copy()))

    # one cut {y : <a, y - c> <= -depth}; alpha = depth / sqrt(a^T P a)
    def _cut(self, a: np.ndarray, depth: float) -> None:
        d = self.domain.dim
        norm = float(a @ self.P @ a)
        if not np.isfinite(norm) or norm <= 1e-300:
            self.degenerate = True
            return
        alpha = depth / np.sqrt(norm)
        if alpha <= -1.0 / d:
            return  # the cut does not touch the ellipsoid: nothing to learn
        if alpha >= 1.0:
            alpha = 0.0  # an empty intersection: G is not nonexpansive here; fall back to central
        b = self.P @ a / np.sqrt(norm)
        self.center = self.center - (1 + d * alpha) / (d + 1) * b
        P = (d * d / (d * d - 1.0)) * (1 - alpha**2) * (
            self.P - 2 * (1 + d * alpha) / ((d + 1) * (1 + alpha)) * np.outer(b, b))
        self.P = 0.5 * (P + P.T)
        if self.record:
            self.history.append((self.center.copy(), self.P.copy()))

    def _feasibility_cuts(self) -> None:
        for _ in range(50 * self.domain.dim**2):
            over, under = self.center - 1.0, -self.center
            i_over, i_under = int(np.argmax(over)), int(np.argmax(under))
            if max(over[i_over], under[i_under]) <= 0 or self.degenerate:
                return
            a = np.zeros(self.domain.dim)
            if over[i_over] >= under[i_under]:   # keep {y_i <= 1}
                a[i_over] = 1.0
                self._cut(a, over[i_over])
            else:                                # keep {y_i >= 0}
                a[i_under] = -1.0
                self._cut(a, under[i_under])

    def step(self, observation: dict[str, np.ndarray], t: int) -> np.ndarray:
        x, G = self.adapter.point(observation), self.adapter.refit(observation)
        a = x - G                                  # separating vector [paper]
        gap = float(np.linalg.norm(a))
        if gap < self.best_gap:
            self.best, self.best_gap = x.copy(), gap
        if t + 1 >= self.horizon:
            return self.best                       # last deployment: the best iterate seen
        if gap == 0.0:
            return x
        deep = 0.5 * gap * gap if self.cut_kind == "deep" else 0.0
        if self.domain.dim == 1:
            # bisection: the PS points lie on the side of x that G(x) points to
            if a[0] > 0:
                self.hi = min(self.hi, x[0] - deep / abs(a[0]))
            else:
                self.lo = max(self.lo, x[0] + deep / abs(a[0]))
            return np.array([0.5 * (self.lo + self.hi)])
        # the kept half-space {<a, y - x> <= -deep} written around the center
        self._cut(a, float(a @ (self.center - x)) + deep)
        self._feasibility_cuts()
        if self.degenerate:
            return self.best
        return self.center.copy()


class Ellipsoid(papergym.Agent):
    """Central-cut ellipsoid method with separating vector x - G(x)."""

    id = "ellipsoid"
    family = "performative"
    problems = ("papergym/PerformativeAffine-v*",)
    role = "method"
    paper = "anagnostides2026"
    seed_artifact = False  # a deterministic rule: the same at every seed

    class Config(papergym.AgentConfig):
        cut: str = "central"  # "central" | "deep"

    def solve(self, view: Any, budget: papergym.Budget, seed: int) -> Any:
        kind = getattr(getattr(view, "domain", None), "kind", getattr(view, "problem", "?"))
        if kind != "box":
            raise ValueError(f"ellipsoid: defined for box domains only (n/a on {kind})")
        if self.config.cut not in ("central", "deep"):
            raise ValueError(f"ellipsoid: cut must be 'central' or 'deep', got {self.config.cut!r}")
        return EllipsoidRule(view.domain, view.horizon, self.config.cut)
