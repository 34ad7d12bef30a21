"""Classic cache replacement as env scores, without prefetch (every score <= -1).

``lru`` is the paper's baseline: SGLang's radix cache evicts the least recently used leaf
[code: nodes compare ``last_access_time``] and has no prefetch: score = -age - 1. ``fifo``
evicts the agent whose state has been resident longest (tracked from the observed residency),
``lfu`` the least often requesting agent, ``random`` draws uniform scores every tick (the
normalization's 0 and the section's trivial agent).
"""

from __future__ import annotations

import numpy as np

from papergym import Agent


class LRUPolicy:
    def __call__(self, obs: dict) -> np.ndarray:
        return (-np.asarray(obs["age_since_access"], dtype=np.float64) - 1.0).astype(np.float32)


class FIFOPolicy:
    """Residency is observed one tick late: an agent first seen resident at obs t loaded at t - 1."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.t, self.loaded_at, self.was = 0, None, None

    def __call__(self, obs: dict) -> np.ndarray:
        now = (np.asarray(obs["resident_adapter"]) > 0) | (np.asarray(obs["resident_kv_frac"]) > 0)
        if self.loaded_at is None:
            self.loaded_at = np.full(now.size, -1.0)
            self.was = np.zeros(now.size, dtype=bool)
        self.loaded_at[now & ~self.was] = self.t - 1
        self.was = now
        self.t += 1
        return (-(self.t - self.loaded_at) - 1.0).astype(np.float32)


class LFUPolicy:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.count = None

    def __call__(self, obs: dict) -> np.ndarray:
        active = np.asarray(obs["active_now"]) > 0
        if self.count is None:
            self.count = np.zeros(active.size)
        self.count += active
        return (-2.0 + self.count / (self.count + 1.0)).astype(np.float32)


class RandomPolicy:
    def __init__(self, seed: int) -> None:
        self.seed = int(seed)
        self.reset()

    def reset(self) -> None:
        self.rng = np.random.default_rng(self.seed)

    def __call__(self, obs: dict) -> np.ndarray:
        return self.rng.uniform(-2.0, -1.0, np.asarray(obs["active_now"]).size).astype(np.float32)


class LRU(Agent):
    """Least recently used (SGLang's radix cache eviction), no prefetch."""

    id, family, role, paper = "lru", "llmserve", "baseline", "scalesim2026"

    def solve(self, view, budget, seed):
        return LRUPolicy()


class FIFO(Agent):
    """First in, first out, no prefetch."""

    id, family, role, paper = "fifo", "llmserve", "baseline", "scalesim2026"

    def solve(self, view, budget, seed):
        return FIFOPolicy()


class LFU(Agent):
    """Least frequently used (request counts), no prefetch."""

    id, family, role, paper = "lfu", "llmserve", "baseline", "scalesim2026"

    def solve(self, view, budget, seed):
        return LFUPolicy()


class RandomEviction(Agent):
    """Uniform random eviction scores, no prefetch (the trivial agent)."""

    id, family, role, paper = "random", "llmserve", "baseline", "scalesim2026"

    def solve(self, view, budget, seed):
        return RandomPolicy(seed)
