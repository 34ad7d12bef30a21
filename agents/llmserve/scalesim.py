"""ScaleSim: invocation-distance priority eviction and proactive prefetch (arXiv 2601.21473).

Read from the official code (``PanZaifeng/KVFlow`` at 7ef897eaed: ``AgentManager``,
``hiradix_cache.evict``, ``DispatchLoadTasks``, ``SScheduler/``):

    hold priority   p(a) = min(hold_step + 1, D_hat(a)); no estimate -> hold_step + 1
    eviction        passes for level = hold_step - 1 ... 1 evict unlocked items with p >= level,
                    then any: buckets in the order {p >= hold_step - 1}, ..., {1}, {0}
    prefetch        for D = 0, 1, ..., load_ahead: the adapter, then the evicted KV, of each agent
                    with D_hat = D; stop at the first failed reservation (the env's pass)

As env scores: q(a) = min(D_hat(a), hold_step - 1) (hold_step - 1 if unknown) orders the
eviction buckets (farther first); a tie term 0.1 (1 - index / N) < 0.5 never crosses a bucket
and stands in for the code's depth-first walk inside a bucket [recon] (``tiebreak: lru`` uses
recency instead). Agents with a known D_hat <= load_ahead are lifted above 0, the prefetch
candidates, nearest first. For the defaults (hold_step 4, load_ahead 2) this is the spec's
score = load_ahead + 0.5 - q + 0.1 (1 - index / N) up to a constant per side of 0: the same
order and the same prefetch set. Nothing is scaled down.

Variants: ``scalesim-noprefetch`` (every score below 0) and ``scalesim-exact`` (no buckets:
score = -D_hat, farthest first, ties by recency; the same prefetch set).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from papergym import Agent, AgentConfig

HORIZON = 8  # the estimate horizon of the traces: -1 means unknown or >= 8 ticks


class ScaleSimPolicy:
    """obs -> keep-priority scores (module docstring)."""

    def __init__(self, hold_step: int, load_ahead: int, prefetch: bool, exact: bool,
                 tiebreak: str) -> None:
        self.hold_step, self.load_ahead = hold_step, load_ahead
        self.prefetch, self.exact, self.tiebreak = prefetch, exact, tiebreak

    def __call__(self, obs: dict) -> np.ndarray:
        d = np.asarray(obs["dist_estimate"], dtype=np.float64)
        age = np.asarray(obs["age_since_access"], dtype=np.float64)
        n = d.size
        known = d >= 0
        recency = age / (1.0 + age)  # in [0, 1): older -> larger
        if self.exact:
            base = -np.where(known, d, HORIZON) - 1e-3 * recency
            lift = self.load_ahead + HORIZON + 1.0
        else:
            q = np.where(known, np.minimum(d, self.hold_step - 1), self.hold_step - 1)
            tie = 0.1 * (1.0 - np.arange(n) / n) if self.tiebreak == "index" else 0.1 * (1 - recency)
            base = -q + tie  # in (-hold_step, 0.1]
            lift = self.hold_step + 0.5
        scores = base - 1.0  # below 0: kept by bucket, never prefetched
        if self.prefetch:
            soon = known & (d <= self.load_ahead)
            scores = np.where(soon, base + lift, scores)
        return scores.astype(np.float32)


class ScaleSim(Agent):
    """ScaleSim's invocation-distance eviction and prefetch (the paper's method)."""

    id, family, role, paper = "scalesim", "llmserve", "method", "scalesim2026"

    class Config(AgentConfig):
        hold_step: int = 4  # --evict-pri-level
        load_ahead: int = 2  # --load-ahead-step
        prefetch: bool = True
        tiebreak: Literal["index", "lru"] = "index"

    exact = False

    def solve(self, view, budget, seed):
        c = self.config
        if c.hold_step < 1 or c.load_ahead < 0:
            raise ValueError(f"{self.id}: need hold_step >= 1 and load_ahead >= 0, got {c}")
        return ScaleSimPolicy(c.hold_step, c.load_ahead, c.prefetch, self.exact, c.tiebreak)


class ScaleSimNoPrefetch(ScaleSim):
    """ScaleSim's eviction buckets without the prefetch pass (the prefetch ablation)."""

    id = "scalesim-noprefetch"
    role = "baseline"

    class Config(ScaleSim.Config):
        prefetch: bool = False


class ScaleSimExact(ScaleSim):
    """Exact invocation-distance order (no buckets), ties by recency, the same prefetch set."""

    id = "scalesim-exact"
    role = "baseline"
    exact = True
