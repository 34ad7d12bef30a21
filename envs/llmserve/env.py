"""``AgentMemoryEnv``: keep-priority scores for per-agent LLM state in accelerator memory."""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from papergym.actions import check_action
from papergym.envs.llmserve.costmodel import CostModel
from papergym.envs.llmserve.sim import PREFETCH_EVICTION, Simulator, capacity_for
from papergym.envs.llmserve.traces import DIFFUSION_ESTIMATES, WORKLOADS, Trace, generate

SCORE_BOUND = 1e6


def scaled_cost(bandwidth_scale: float = 1.0, decode_scale: float = 1.0) -> CostModel:
    """The default constants with the host-to-device bandwidth B_h2d and the decode cost
    (c_step and c_ctx, the weight and KV reads of one decode step) multiplied by the scales."""
    base = CostModel()
    for name, value in (("bandwidth_scale", bandwidth_scale), ("decode_scale", decode_scale)):
        if not np.isfinite(value) or value <= 0:
            raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return dataclasses.replace(base, b_h2d=base.b_h2d * bandwidth_scale,
                               c_step=base.c_step * decode_scale,
                               c_ctx=base.c_ctx * decode_scale)


def build(workload: str, N: int, n_ticks: int, pressure: float, estimate_noise: float,
          kv_host_tier: bool, seed: int, cost: CostModel | None = None,
          check: bool = False, trace: Trace | None = None,
          diffusion_estimate: str = "scheduled", bandwidth_scale: float = 1.0,
          decode_scale: float = 1.0, prefetch_eviction: str = "lower") -> Simulator:
    """The simulator of trace ``seed`` (or of ``trace``, generated from it already): what the env
    plays and what the evaluator's references replay (the same trace, capacity and constants).
    ``cost`` (if given) replaces the constants the two scales make."""
    cost = cost or scaled_cost(bandwidth_scale, decode_scale)
    if trace is None:
        trace = generate(workload, N, n_ticks, seed, estimate_noise, diffusion_estimate)
    return Simulator(trace, cost, capacity_for(trace, cost, pressure), kv_host_tier, check,
                     prefetch_eviction)


class AgentMemoryEnv(gym.Env):
    """Serve a multi-agent LLM simulation whose per-agent state exceeds accelerator memory.

    ## Description
    ScaleSim's setting (arXiv 2601.21473): N simulated agents each keep a LoRA adapter (rank
    8, 16 or 32) and a private KV prefix (512-2,048 tokens, growing by every request's prompt
    and output, capped at 4,096) in accelerator memory of capacity C = ``pressure`` x the total
    agent state at the end of the trace. Each step is one tick of a generated invocation trace
    (``traces.py``: ``independent``, ``spatial`` or ``diffusion``, about 4% of the agents active
    per tick): the active agents' items must be resident (missing ones load over PCIe on the
    critical path), the batch computes (``costmodel.py``), and a prefetch pass overlapped with
    the compute may load other agents' items. The controller scores every agent: the lowest
    scores are evicted first, scores > 0 are prefetch candidates, highest first (``sim.py``).

    ## Action Space
    ``Box(-1e6, 1e6, (N,), float32)``: a keep-priority score per agent. Values outside the
    bounds are clipped and counted in ``info["n_clipped"]``; NaN, inf or a wrong shape raise
    ``InvalidAction`` (a ``ValueError``).

    ## Observation Space
    ``Dict`` over the N agents, taken before tick t is served: ``resident_adapter``
    MultiBinary(N); ``resident_kv_frac`` Box(0, 1, (N,)) (0 or 1: prefixes are evicted whole);
    ``state_bytes`` Box(0, inf, (N,)) (adapter + prefix bytes); ``age_since_access`` Box(0, inf,
    (N,)) ticks since the agent's last request (t + 1 if none); ``dist_estimate`` Box(-1, inf,
    (N,)) the invocation-distance estimate D_hat_t in ticks (-1: unknown or >= 8); ``active_now``
    MultiBinary(N) (A_t); ``free_bytes`` Box(0, inf, (1,)). Float arrays are float64. The true
    next request ticks are never observed. ``info`` carries C and the cost constants.

    ## Rewards
    -tick_time (seconds) = -(stall_t + compute_t); the return is -makespan.

    ## Starting State
    ``reset(seed=s)`` generates trace s; every prefix exists on the host, the device is empty.

    ## Episode End
    Terminated after the trace's last tick; the env never truncates. ``n_ticks`` is the
    registered ``max_episode_steps``, so through ``gymnasium.make`` the ``TimeLimit`` also
    flags the last step as truncated.

    ## Arguments
    ``workload`` (independent | spatial | diffusion), ``N`` agents (64), ``n_ticks`` (200),
    ``pressure`` (0.3), ``estimate_noise`` sigma (0: D_hat times LogNormal(0, sigma)),
    ``kv_host_tier`` (True: write-through host copies; False: evicted KV is dropped and
    recomputed by prefill), ``bandwidth_scale`` and ``decode_scale`` (1: multiply the
    host-to-device bandwidth, and the decode cost c_step and c_ctx, of ``costmodel.py``; for
    sensitivity grids over the modelled constants), ``prefetch_eviction`` (``"lower"``: a
    prefetch may evict only items scored strictly below its candidate; ``"any"``: any unlocked
    item, as the official ``load_back``). A configuration whose active set alone exceeds C at
    some tick is refused at reset, naming the tick and the bytes.

    ## Tiers
    smoke: N = 64, 200 ticks, independent at 30%. standard: N = 1,000 (3 workloads x pressure
    {15, 30, 60}%, noise {0, 0.25, 0.5, 1} on independent, the drop mode) and N = 4,000 (the
    30% cells), 1,000 ticks, 5 trace seeds. full: N up to 16,000, 2,000 ticks, constants
    measured on the accelerator.

    ## Reference
    ScaleSim: "a memory-efficient LLM serving system for large-scale multi-agent simulations",
    ICML 2026, arXiv 2601.21473; code ``PanZaifeng/KVFlow`` (commit 7ef897eaed). The memory
    model, cost constants and trace generators are reconstructions [recon]; the eviction order
    and the prefetch pass that stops at the first failed reservation follow the code.

    ## Version History
    * v0: initial release; superseded by v1 (its ``diffusion`` estimate read each frontier
      agent's drawn future share tick).
    """

    id: ClassVar[str] = "AgentMemory-v0"
    default_diffusion_estimate: ClassVar[str] = "scheduled"
    metadata: ClassVar[dict[str, Any]] = {"render_modes": []}

    def __init__(self, workload: str = "independent", N: int = 64, n_ticks: int = 200,
                 pressure: float = 0.3, estimate_noise: float = 0.0,
                 kv_host_tier: bool = True, diffusion_estimate: str | None = None,
                 bandwidth_scale: float = 1.0, decode_scale: float = 1.0,
                 prefetch_eviction: str = "lower") -> None:
        diffusion_estimate = diffusion_estimate or self.default_diffusion_estimate
        if diffusion_estimate not in DIFFUSION_ESTIMATES:
            raise ValueError(f"{self.id}: diffusion_estimate must be one of {DIFFUSION_ESTIMATES}, "
                             f"got {diffusion_estimate!r}")
        if prefetch_eviction not in PREFETCH_EVICTION:
            raise ValueError(f"{self.id}: prefetch_eviction must be one of {PREFETCH_EVICTION}, "
                             f"got {prefetch_eviction!r}")
        if workload not in WORKLOADS:
            raise ValueError(f"{self.id}: workload must be one of {WORKLOADS}, got {workload!r}")
        if int(N) < 2 or int(n_ticks) < 1:
            raise ValueError(f"{self.id}: need N >= 2 and n_ticks >= 1, got {N}, {n_ticks}")
        if not 0 < float(pressure) <= 1:
            raise ValueError(f"{self.id}: pressure must be in (0, 1], got {pressure!r}")
        if not np.isfinite(estimate_noise) or float(estimate_noise) < 0:
            raise ValueError(f"{self.id}: estimate_noise must be >= 0, got {estimate_noise!r}")
        try:
            cost = scaled_cost(float(bandwidth_scale), float(decode_scale))
        except ValueError as err:
            raise ValueError(f"{self.id}: {err}") from None
        self.kwargs = dict(workload=workload, N=int(N), n_ticks=int(n_ticks),
                           pressure=float(pressure), estimate_noise=float(estimate_noise),
                           kv_host_tier=bool(kv_host_tier), diffusion_estimate=diffusion_estimate,
                           bandwidth_scale=float(bandwidth_scale),
                           decode_scale=float(decode_scale), prefetch_eviction=prefetch_eviction)
        self.N = n = int(N)
        self.n_ticks = int(n_ticks)  # every episode is this many steps (registered max_episode_steps)
        self.cost = cost
        vec = spaces.Box(0.0, np.inf, (n,), dtype=np.float64)
        self.observation_space = spaces.Dict({
            "resident_adapter": spaces.MultiBinary(n),
            "resident_kv_frac": spaces.Box(0.0, 1.0, (n,), dtype=np.float64),
            "state_bytes": vec,
            "age_since_access": vec,
            "dist_estimate": spaces.Box(-1.0, np.inf, (n,), dtype=np.float64),
            "active_now": spaces.MultiBinary(n),
            "free_bytes": spaces.Box(0.0, np.inf, (1,), dtype=np.float64),
        })
        self.action_space = spaces.Box(-SCORE_BOUND, SCORE_BOUND, (n,), dtype=np.float32)
        self.sim: Simulator | None = None
        self.n_clipped = 0
        self.capacity_violations = 0
        self.window_violations = 0

    @property
    def trace(self) -> Trace:
        return self._require().trace

    def _require(self) -> Simulator:
        if self.sim is None:
            raise RuntimeError(f"{self.id}: call reset() before step()")
        return self.sim

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):  # noqa: ANN201
        super().reset(seed=seed)
        trace_seed = int(self.np_random.integers(2 ** 31)) if seed is None else int(seed)
        return self._start(trace_seed, None)

    def _start(self, trace_seed: int, trace: Trace | None):  # noqa: ANN202
        """A new episode on trace ``trace_seed``; the evaluator passes the trace it generated
        (and cached) from that seed, so that the same trace is not generated twice."""
        self.sim = build(**self.kwargs, seed=trace_seed, cost=self.cost, trace=trace)
        self.n_clipped = self.capacity_violations = self.window_violations = 0
        return self._obs(), {"capacity_bytes": self.sim.capacity, "trace_seed": trace_seed,
                             **self.cost.as_dict()}

    def _obs(self) -> dict[str, np.ndarray]:
        sim, n = self._require(), self.N
        t = sim.t
        active = np.zeros(n, dtype=np.int8)
        if t < sim.trace.n_ticks:
            active[sim.trace.tick(t)[0]] = 1
            estimate = sim.trace.estimate[t].astype(np.float64)
        else:
            estimate = np.full(n, -1.0)
        last = sim.last_access
        return {
            "resident_adapter": sim.resident[:n].astype(np.int8),
            "resident_kv_frac": sim.resident[n:].astype(np.float64),
            "state_bytes": sim.size[:n] + sim.size[n:],
            "age_since_access": np.where(last >= 0, t - last, t + 1).astype(np.float64),
            "dist_estimate": estimate,
            "active_now": active,
            "free_bytes": np.array([max(0.0, sim.free)]),
        }

    def step(self, action: Any):  # noqa: ANN201
        sim = self._require()
        if sim.done:
            raise RuntimeError(f"{self.id}: the episode is over; call reset()")
        scores = check_action(self.action_space, action, self.id)
        clipped = np.abs(scores) > SCORE_BOUND
        self.n_clipped += int(clipped.sum())
        result = sim.step(np.clip(scores, -SCORE_BOUND, SCORE_BOUND))
        self.capacity_violations += int(sim.used > sim.capacity)
        self.window_violations += int(result.prefetch_bytes > result.window_bytes)
        info = {"tick_time": result.tick_time, "stall": result.stall, "compute": result.compute,
                "demand_bytes": result.demand_bytes, "prefetch_bytes": result.prefetch_bytes,
                "n_hits": result.n_hits, "n_active": result.n_active,
                "n_clipped": int(clipped.sum())}
        return self._obs(), -result.tick_time, sim.done, False, info


class AgentMemoryEnvV1(AgentMemoryEnv):
    """Serve a multi-agent LLM simulation whose per-agent state exceeds accelerator memory (v1).

    ## Description
    As ``AgentMemory-v0``, with the ``diffusion`` workload's invocation-distance estimate
    computed from past events only: a frontier agent's share is expected ``SHARE_MEAN`` ticks
    after its request and counts down from there (``traces.py``), where v0 read the share tick
    already drawn for it. The traces themselves are unchanged.

    ## Action Space
    As v0: a keep-priority score per agent.

    ## Observation Space
    As v0; ``dist_estimate`` on ``diffusion`` never depends on an event after tick t.

    ## Rewards
    As v0: -tick_time.

    ## Starting State
    As v0: ``reset(seed=s)`` generates trace s; every prefix exists on the host, the device is
    empty.

    ## Episode End
    As v0.

    ## Arguments
    As v0, plus ``diffusion_estimate`` (``"expected"``; ``"scheduled"`` replays v0's estimate).

    ## Tiers
    As v0.

    ## Reference
    As v0 (ScaleSim, arXiv 2601.21473).

    ## Version History
    * v0: initial release (superseded: the diffusion estimate read a future event).
    * v1: the diffusion estimate from expected delays only; the other workloads are unchanged.
      Later additions, comparable: ``bandwidth_scale`` and ``decode_scale`` (default 1, the
      constants of every earlier result) and ``prefetch_eviction`` (default ``"lower"``, the
      rule of every earlier result).
    """

    id: ClassVar[str] = "AgentMemory-v1"
    default_diffusion_estimate: ClassVar[str] = "expected"
