"""The problem's reference scorers: run by the evaluator on the evaluation trace itself.

- ``oracle-MIN``: Belady-style eviction by the true next request tick (farthest first) and
  prefetch of the agents whose true next request is within ``ORACLE_LOOKAHEAD`` ticks, nearest
  first. With variable sizes and prefetch it is a strong reference, not a proven optimum; with
  unit sizes and no prefetch it is Belady's MIN, optimal in demand loads (tests check it by
  brute force). It reads the future, so it is a metric of the problem, never an agent, and
  nothing of it reaches the observation.
- ``lru``: SGLang's radix cache evicts the least recently used leaf and has no prefetch
  [code: nodes compare ``last_access_time``]: score = -(ticks since the last request) - 1.
- ``random``: uniform random eviction scores, no prefetch (normalization 0).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from papergym.envs.llmserve.sim import Simulator

ORACLE_LOOKAHEAD = 3

Scorer = Callable[[Simulator], np.ndarray]


def ages(sim: Simulator) -> np.ndarray:
    """Ticks since each agent's last request (t + 1 for an agent that never requested)."""
    return np.where(sim.last_access >= 0, sim.t - sim.last_access, sim.t + 1).astype(np.float64)


def lru_scorer() -> Scorer:
    return lambda sim: -ages(sim) - 1.0


def random_scorer(seed: int) -> Scorer:
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 0x72616E64]))
    return lambda sim: rng.uniform(-2.0, -1.0, sim.n)


def oracle_scorer(next_request: np.ndarray, prefetch: bool = True) -> Scorer:
    """``next_request``: (T, N), the first tick >= t of each agent's next request."""

    def score(sim: Simulator) -> np.ndarray:
        dist = (next_request[sim.t] - sim.t).astype(np.float64)  # 0 for the active agents
        keep = -dist  # farthest next use is evicted first
        if prefetch:
            soon = dist <= ORACLE_LOOKAHEAD
            keep = np.where(soon, ORACLE_LOOKAHEAD + 0.5 - dist, keep)  # > 0: nearest first
        return keep

    return score


def run(sim: Simulator, scorer: Scorer) -> dict[str, float]:
    """Play the whole trace with ``scorer``; the simulator's totals."""
    while not sim.done:
        sim.step(scorer(sim))
    return dict(sim.totals)
