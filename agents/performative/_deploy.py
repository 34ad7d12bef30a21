"""Shared machinery of the deployer agents: what a rule reads from an observation, and tuning.

A deployment rule is the artifact PerformativeAffine-v0 and StrategicCredit-v0 score:
``rule(observation) -> next point`` with ``reset()`` at every episode. Rules are written once
against a small adapter that reads the deployed point x, the RRM map G(x) (the exact risk
minimizer on the revealed data) and the loss gradient F(x) at x on that data:

    affine (l = 1/2 ||x - z||^2):  G(x) = Pi_X(zbar),           F(x) = x - zbar
    credit (regularized logistic): G(theta) = Newton refit,      F(theta) = logistic gradient

Tuning runs candidate rules on the view's metered training environments (never on
evaluation instances) and scores them by the empirical gap ||x - G(x)|| the agent itself
observes at the end of each run, which needs no oracle.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


class AffineAdapter:
    """PerformativeAffine-v0 observations: {x, zbar, t}."""

    def __init__(self, domain: Any) -> None:
        self.domain = domain

    def project(self, v: np.ndarray) -> np.ndarray:
        return self.domain.project(v)

    def point(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        return np.asarray(observation["x"], dtype=np.float64)

    def refit(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        return self.domain.project(np.asarray(observation["zbar"], dtype=np.float64))

    def gradient(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        return self.point(observation) - np.asarray(observation["zbar"], dtype=np.float64)


class CreditAdapter:
    """StrategicCredit-v0 observations: {features, labels, theta} after the response."""

    def __init__(self, view: Any) -> None:
        from papergym.envs.performative import credit

        self.credit = credit
        self.l2, self.regularize_bias, self.bound = view.l2, view.regularize_bias, view.theta_bound

    def project(self, v: np.ndarray) -> np.ndarray:
        return np.clip(v, -self.bound, self.bound)

    def point(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        return np.asarray(observation["theta"], dtype=np.float64)

    def refit(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        return self.credit.fit_logistic(observation["features"], observation["labels"], self.l2,
                                        self.regularize_bias, theta0=self.point(observation))

    def gradient(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        return self.credit.logistic_gradient(self.point(observation), observation["features"],
                                             observation["labels"], self.l2, self.regularize_bias)


def adapter_for(view: Any) -> AffineAdapter | CreditAdapter:
    if getattr(view, "problem", "affine") == "credit":
        return CreditAdapter(view)
    return AffineAdapter(view.domain)


class DeploymentRule:
    """Base of the stateful deployment rules; subclasses implement ``step(obs, t)``.

    ``t`` counts the observations since ``reset()`` (t = 0: the starting point x_0).
    """

    def __init__(self, adapter: AffineAdapter | CreditAdapter) -> None:
        self.adapter = adapter
        self.reset()

    def reset(self) -> None:
        self.t = 0

    def __call__(self, observation: dict[str, np.ndarray]) -> np.ndarray:
        action = self.step(observation, self.t)
        self.t += 1
        return action

    def step(self, observation: dict[str, np.ndarray], t: int) -> np.ndarray:
        raise NotImplementedError


def training_score(view: Any, rule: DeploymentRule, n_instances: int, max_steps: int) -> float:
    """Mean log10 of the last observed empirical gap over training instances (lower is better).

    Runs at most ``max_steps`` deployments per instance; every one is charged to the view's
    budget. A rule that reaches eps early scores log10(gap) minus a small bonus for speed.
    """
    adapter = rule.adapter
    scores = []
    for instance_seed in view.train_instance_seeds[:n_instances]:
        env = view.make_env(instance_seed=instance_seed)
        observation, _ = env.reset(seed=instance_seed)
        rule.reset()
        steps, done, terminated = 0, False, False
        while not done and steps < max_steps:
            observation, _, terminated, truncated, _ = env.step(rule(observation))
            steps += 1
            done = terminated or truncated
        gap = np.linalg.norm(adapter.point(observation) - adapter.refit(observation))
        scores.append(np.log10(max(gap, 1e-16)) + (1e-6 * steps if terminated else 0.0))
    return float(np.mean(scores))


def tune(view: Any, make_rule: Callable[[float], DeploymentRule], grid: Sequence[float],
         n_instances: int, max_steps: int) -> tuple[float, dict[float, float]]:
    """Pick the grid value whose rule has the smallest training score (first on ties)."""
    scores = {value: training_score(view, make_rule(value), n_instances, max_steps)
              for value in grid}
    best = min(grid, key=lambda v: scores[v])
    return best, scores
