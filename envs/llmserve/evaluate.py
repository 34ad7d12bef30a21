"""``AgentMemoryTask``: score a scoring policy on held-out traces against LRU and the oracle."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from papergym import cache
from papergym.envs.llmserve import oracle
from papergym.envs.llmserve.env import AgentMemoryEnv, AgentMemoryEnvV1, build
from papergym.envs.llmserve.traces import generate
from papergym.problem import EnvTask, EvalResult, MetricDeclaration

PACKAGE = Path(__file__).parent
ENV_KEYS = ("workload", "N", "n_ticks", "pressure", "estimate_noise", "kv_host_tier",
            "diffusion_estimate", "bandwidth_scale", "decode_scale", "prefetch_eviction")


def trace_entry(kwargs: Mapping[str, Any], seed: int) -> cache.Entry:
    """The generated trace of ``seed`` (it depends on the workload, N, T and the noise only)."""
    config = {k: kwargs[k] for k in ("workload", "N", "n_ticks", "estimate_noise",
                                     "diffusion_estimate")}
    return cache.Entry("llmserve/trace", {**config, "seed": int(seed)},
                       build=lambda: generate(config["workload"], config["N"], config["n_ticks"],
                                              int(seed), config["estimate_noise"],
                                              config["diffusion_estimate"]),
                       code=(PACKAGE,))


def _references(kwargs: Mapping[str, Any], seed: int) -> dict[str, float]:
    """LRU (always with the host tier: the speedup's denominator), random eviction and the
    oracle (both in the cell's own mode) on trace ``seed``."""
    trace = cache.get(trace_entry(kwargs, seed))
    lru = oracle.run(build(**{**kwargs, "kv_host_tier": True}, seed=seed, trace=trace),
                     oracle.lru_scorer())
    rand = oracle.run(build(**kwargs, seed=seed, trace=trace), oracle.random_scorer(seed))
    best = oracle.run(build(**kwargs, seed=seed, trace=trace),
                      oracle.oracle_scorer(trace.next_request_ticks()))
    return {"lru_makespan": lru["makespan"], "lru_compute": lru["compute"],
            "random_makespan": rand["makespan"], "oracle_makespan": best["makespan"]}


class AgentMemoryTask(EnvTask):
    """Held-out scoring of an ``AgentMemory-v0`` policy.

    ## Description
    ``train_view(seed)`` hands the agent metered environments (``env_steps`` = ticks) on training
    trace seeds. ``evaluate`` plays the returned policy (``obs -> scores``) on ``eval_episodes``
    traces from :meth:`Task.eval_seeds` (>= 10^6, salted) and, on the same traces, the problem's
    references (``oracle.py``): LRU, random eviction and the oracle-MIN, built once per trace in
    the prepare phase (:mod:`papergym.cache`). The oracle is a metric, never an agent.

    ## Metrics
    Per trace, then averaged: ``log_speedup`` = log makespan(LRU) - log makespan(policy) (primary;
    LRU always with the host tier), ``speedup``, ``makespan`` (s), ``hit_rate`` (requests with
    no demand load), ``h2d_gb``, ``stall_frac`` (stall / makespan), ``prefetch_precision``
    (prefetched bytes used within 3 ticks / prefetched bytes; 0 without prefetch),
    ``recomputed_tokens`` (drop mode), ``gap_to_oracle`` = makespan / makespan(oracle) - 1 and its
    log, ``normalized_score`` = (T_random - T) / (T_random - T_oracle), ``oracle_speedup`` and
    ``max_speedup`` = makespan(LRU) / compute (the range the constants allow), and the sanity
    counters ``capacity_violations`` and ``window_violations`` (ticks with used > C, or prefetch
    beyond the overlap window; 0 by construction).

    ## Tiers
    As ``AgentMemory-v0``; one trace per trial by default (``eval_episodes``).

    ## Reference
    ScaleSim (arXiv 2601.21473); see ``AgentMemoryEnv``.

    ## Version History
    * v0: initial release; superseded by v1 (``AgentMemoryTaskV1``).
    """

    env_cls: ClassVar[type[AgentMemoryEnv]] = AgentMemoryEnv
    metrics: ClassVar[Mapping[str, MetricDeclaration]] = {
        "log_speedup": "max", "speedup": ("max", 0.0, None), "makespan": ("min", 0.0, None),
        "hit_rate": ("max", 0.0, 1.0), "h2d_gb": ("min", 0.0, None),
        "stall_frac": ("min", 0.0, 1.0), "prefetch_precision": ("max", 0.0, 1.0),
        "recomputed_tokens": ("min", 0.0, None), "gap_to_oracle": "min",
        "log_gap_to_oracle": "min", "normalized_score": "max",
        "oracle_speedup": ("max", 0.0, None), "max_speedup": ("max", 1.0, None),
        "capacity_violations": ("min", 0.0, None), "window_violations": ("min", 0.0, None),
        "episode_length": "max", "return": "max",
    }

    def __init__(self, tier: str = "smoke", train_steps: int = 2000, eval_episodes: int = 1,
                 **env_kwargs: Any) -> None:
        super().__init__(self.env_cls, tier=tier, train_steps=train_steps,
                         eval_episodes=eval_episodes, **env_kwargs)
        probe = self.env_cls(**env_kwargs)  # validates the kwargs now, with the env's messages
        self.cell = dict(probe.kwargs)

    def reference_entry(self, eval_seed: int) -> cache.Entry:
        cell = dict(self.cell)
        return cache.Entry("llmserve/references", {"cell": cell, "seed": int(eval_seed)},
                           build=lambda: _references(cell, int(eval_seed)), code=(PACKAGE,))

    def cache_entries(self, seeds: Sequence[int]) -> list[cache.Entry]:
        return [entry for seed in seeds for s in self.eval_seeds(int(seed), self.eval_episodes)
                for entry in (trace_entry(self.cell, s), self.reference_entry(s))]

    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        if not callable(artifact):
            raise TypeError(f"{type(self).__name__} expects a policy (observation -> scores), "
                            f"got {type(artifact).__name__}")
        units = []
        env = self.env_cls(**self.cell)
        for episode, eval_seed in enumerate(self.eval_seeds(seed, self.eval_episodes)):
            if hasattr(artifact, "reset"):
                artifact.reset()
            obs, _ = env._start(eval_seed, cache.get(trace_entry(self.cell, eval_seed)))
            total, length, done = 0.0, 0, False
            while not done:
                obs, reward, done, _, _ = env.step(artifact(obs))
                total += float(reward)
                length += 1
            ref = cache.get(self.reference_entry(eval_seed))
            units.append({"instance": episode, **self.trace_metrics(env, ref, total, length)})
        names = [k for k in units[0] if k != "instance"]
        metrics = {k: float(np.mean([u[k] for u in units])) for k in names}
        return EvalResult(metrics=metrics, units=units)

    @staticmethod
    def trace_metrics(env: AgentMemoryEnv, ref: Mapping[str, float], total: float,
                      length: int) -> dict[str, float]:
        tot = env.sim.totals
        makespan = tot["makespan"]
        spread = ref["random_makespan"] - ref["oracle_makespan"]
        return {
            "log_speedup": float(np.log(ref["lru_makespan"]) - np.log(makespan)),
            "speedup": ref["lru_makespan"] / makespan,
            "makespan": makespan,
            "hit_rate": tot["hits"] / max(tot["requests"], 1),
            "h2d_gb": (tot["demand_bytes"] + tot["prefetch_bytes"]) / 1e9,
            "stall_frac": tot["stall"] / makespan,
            "prefetch_precision": tot["prefetch_used_bytes"] / tot["prefetch_bytes"]
            if tot["prefetch_bytes"] > 0 else 0.0,
            "recomputed_tokens": tot["recomputed_tokens"],
            "gap_to_oracle": makespan / ref["oracle_makespan"] - 1.0,
            "log_gap_to_oracle": float(np.log(makespan) - np.log(ref["oracle_makespan"])),
            "normalized_score": (ref["random_makespan"] - makespan) / spread if spread > 0 else 0.0,
            "oracle_speedup": ref["lru_makespan"] / ref["oracle_makespan"],
            "max_speedup": ref["lru_makespan"] / ref["lru_compute"],
            "capacity_violations": float(env.capacity_violations),
            "window_violations": float(env.window_violations),
            "episode_length": float(length),
            "return": total,
        }


class AgentMemoryTaskV1(AgentMemoryTask):
    """Held-out scoring of an ``AgentMemory-v1`` policy.

    ## Description
    As :class:`AgentMemoryTask`, on :class:`AgentMemoryEnvV1` (the diffusion estimate from
    expected delays only); the references replay the same traces.

    ## Metrics
    As v0.

    ## Tiers
    As ``AgentMemory-v1``.

    ## Reference
    ScaleSim (arXiv 2601.21473); see ``AgentMemoryEnvV1``.

    ## Version History
    * v0: initial release (superseded: the diffusion estimate read a future event).
    * v1: the diffusion estimate from expected delays only.
    """

    env_cls: ClassVar[type[AgentMemoryEnv]] = AgentMemoryEnvV1
