"""ScaleSim's eviction and prefetch without invocation-distance estimates (the mechanism's control).

ScaleSim (arXiv 2601.21473) keeps and prefetches per-agent state by each agent's *invocation
distance*, an estimate the simulation supplies from what the agent is doing (an action's
remaining time, a walk's remaining path, a cascade's hop distance). This baseline runs the
same policy (``scalesim.ScaleSimPolicy``: the same eviction buckets, the same prefetch set
D <= load_ahead, the same defaults) with that estimate replaced by one that any cache can make
from the request history alone:

    D_tilde(a) = max(0, round(mean_gap(a) - age(a)))     once a has requested twice
    D_tilde(a) = unknown                                 before (or when >= the horizon)

where mean_gap(a) is the mean of a's observed inter-request gaps (no free parameter) and age(a)
is the ticks since its last request, counting down between requests like the simulator's
estimates. What ScaleSim gains over this agent is what the invocation-distance estimate adds;
what this agent gains over LRU is what prefetching into the compute's overlap window adds.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from papergym import Agent, AgentConfig
from papergym.agents.llmserve.scalesim import HORIZON, ScaleSimPolicy


class HistoryPrefetchPolicy:
    """obs -> ScaleSim's scores, with ``dist_estimate`` replaced by the history estimate."""

    def __init__(self, policy: ScaleSimPolicy) -> None:
        self.policy = policy
        self.reset()

    def reset(self) -> None:
        self.t = 0
        self.last = self.gap_sum = self.gaps = None

    def __call__(self, obs: dict) -> np.ndarray:
        active = np.flatnonzero(np.asarray(obs["active_now"]) > 0)
        if self.last is None:
            n = np.asarray(obs["active_now"]).size
            self.last = np.full(n, -1, dtype=np.int64)
            self.gap_sum, self.gaps = np.zeros(n), np.zeros(n, dtype=np.int64)
        seen = active[self.last[active] >= 0]
        self.gap_sum[seen] += self.t - self.last[seen]
        self.gaps[seen] += 1
        self.last[active] = self.t
        age = np.where(self.last >= 0, self.t - self.last, 0)
        mean_gap = self.gap_sum / np.maximum(self.gaps, 1)
        estimate = np.maximum(0.0, np.round(mean_gap - age))
        estimate = np.where((self.gaps > 0) & (estimate < HORIZON), estimate, -1.0)
        estimate[active] = 0.0  # requesting now, as the simulator's own estimate says
        self.t += 1
        return self.policy({**obs, "dist_estimate": estimate})


class HistoryPrefetch(Agent):
    """ScaleSim's policy on request-history estimates instead of invocation distances."""

    id, family, role, paper = "history-prefetch", "llmserve", "baseline", "scalesim2026"

    class Config(AgentConfig):
        hold_step: int = 4  # as ScaleSim's --evict-pri-level
        load_ahead: int = 2  # as ScaleSim's --load-ahead-step
        tiebreak: Literal["index", "lru"] = "index"

    def solve(self, view, budget, seed):
        c = self.config
        if c.hold_step < 1 or c.load_ahead < 0:
            raise ValueError(f"{self.id}: need hold_step >= 1 and load_ahead >= 0, got {c}")
        return HistoryPrefetchPolicy(ScaleSimPolicy(c.hold_step, c.load_ahead, True, False,
                                                    c.tiebreak))
