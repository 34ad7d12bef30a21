"""Helpers shared by the fedlearn agents: messages, the tuning protocol, artifact keys."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from papergym.envs.fedlearn import codec
from papergym.envs.fedlearn.protocol import ClientPolicy, FedAlgorithm, FedSetting


def send(setting: FedSetting, slots: Sequence[tuple], scalars: Sequence[float] = ()) -> dict:
    """An uplink message (U slots) from ``(codec, values, support, scale)`` slots."""
    return codec.build_message(setting.uplink_slots, setting.dim, slots, scalars)


def broadcast(setting: FedSetting, slots: Sequence[tuple], scalars: Sequence[float] = ()) -> dict:
    """A downlink message (D slots)."""
    return codec.build_message(setting.downlink_slots, setting.dim, slots, scalars)


def received(observation: dict, slot: int) -> np.ndarray:
    """Downlink slot ``slot`` as float64 (what the client computes with)."""
    return observation["downlink"][slot].astype(np.float64)


def unit(v: np.ndarray) -> np.ndarray:
    """v / ||v|| (zero stays zero): the normalized step of the parameter-free methods."""
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else np.zeros_like(v)


def cache_key(agent_cls: type, **values: Any) -> str:
    """Everything that determines an algorithm's run: agent, code, resolved values."""
    items = ",".join(f"{k}={values[k]!r}" for k in sorted(values))
    return f"{agent_cls.qualified_id()}@{agent_cls.code_hash()}({items})"


# The one tuning protocol (papergym.tuning): every tuned agent evaluates TUNING_CONFIGS
# configurations, its Config defaults first, then its own Latin-hypercube draws of its
# ``search_space``. FedRounds grants no tuning_runs budget of its own, so the family fixes it
# here, the same for every agent (the old grids gave FedAvg and SCAFFOLD 7, SCAFCOM 10,
# EF21-M 12 and FedAdam 15).
TUNING_CONFIGS = 12


def protocol_grid(agent: Any, **fixed: Any) -> list[dict[str, Any]]:
    """``agent``'s TUNING_CONFIGS candidates (its defaults first, then its own draws), each
    as the values of its ``search_space`` keys plus ``fixed`` (e.g. the tuning ratio)."""
    keys = list(agent.search_space)
    return [{**{k: getattr(c, k) for k in keys}, **fixed}
            for c in agent.tuning_candidates(TUNING_CONFIGS)]


def tune(view: Any, build: Callable[..., FedAlgorithm],
         grid: Sequence[dict[str, Any]]) -> tuple[dict[str, Any], list[float]]:
    """Search ``grid`` on the view's tuning instances (spec: mean validation accuracy of the
    last 5 rounds, averaged over tuning instances); ties go to the first point (the default)."""
    scores = []
    for point in grid:
        algorithm = build(**point)
        runs = [view.validation_score(algorithm, j) for j in range(view.num_tuning_instances)]
        scores.append(float(np.mean(runs)) if all(math.isfinite(r) for r in runs) else -math.inf)
    best = int(np.argmax(scores))
    return dict(grid[best]), scores


class LocalStepsClient(ClientPolicy):
    """The local loop every local-update method shares: x^0 = theta, then K steps
    x^{k+1} = x^k - step * D(v_k) with v_k = ``direction(g_k, ...)`` and D the identity
    (SGD-type methods: FedAvg, SCAFFOLD, SCAFCOM) or v -> v/||v|| (``normalized``: PAdaMFed,
    ParFreFL). ``gradient`` draws g_k from the oracle (one call per step); a method that
    needs a second point on the same minibatch overrides it. Returns x^K and gbar =
    (1/K) sum_k g_k."""

    normalized = False

    def __init__(self, oracle: Any, setting: FedSetting, step: float) -> None:
        self.oracle, self.setting, self.step = oracle, setting, step

    def gradient(self, x: np.ndarray, observation: dict) -> np.ndarray:
        return self.oracle(x)[1]

    def direction(self, g: np.ndarray, x: np.ndarray, observation: dict) -> np.ndarray:
        return g

    def local_steps(self, theta: np.ndarray, observation: dict) -> tuple[np.ndarray, np.ndarray]:
        x, total = theta.copy(), np.zeros_like(theta)
        for _ in range(self.setting.local_steps):
            g = self.gradient(x, observation)
            total += g
            v = self.direction(g, x, observation)
            x -= self.step * (unit(v) if self.normalized else v)
        return x, total / self.setting.local_steps


def resolved_step(value: float | None, default: float) -> float:
    """A constant the agent's config may set (None: the method's own value)."""
    return default if value is None else float(value)
