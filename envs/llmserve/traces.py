"""Invocation traces of simulated LLM agents, with the invocation-distance estimates.

A trace fixes, per tick t, the agents A_t that call the LLM, their request sizes (new prompt
tokens, output tokens), every agent's adapter rank and initial prefix length, and the estimate
D_hat_t(a) of how many ticks until agent a calls next (-1: unknown or >= ``HORIZON``). The true
next request tick is a function of the trace (:meth:`Trace.next_request_ticks`) for the
problem's oracle only; the environment shows ``estimate``, never the future.

Three workload classes (the paper's; the generators are ours [recon]):

- ``independent``: request -> an action of LogNormal duration (>= 1 tick) -> request. D_hat is
  the remaining action time (the paper's first class: exact when ``estimate_noise`` = 0).
- ``spatial``: agents walk on a W x W plane to one of ``N_LANDMARKS`` destinations at speed v;
  they request on arrival and on unplanned encounters within radius rho (both agents), then stay
  for a cooldown. D_hat = remaining cooldown + ceil(distance / v) (0 when arrived): the code's
  SpaceManager estimate of the planned path; encounters make it wrong.
- ``diffusion``: information spreads on a Barabasi-Albert graph (m = 3). An activated agent
  requests once, then after a Geometric delay shares with each neighbour with probability beta;
  a neighbour that is not refractory activates after its own Geometric delay; exogenous seeds
  start new cascades. D_hat = the BFS hop distance from the current frontier in mean delays
  (the paper's "predefined activation paths"; the conversion to ticks is [recon]). The frontier
  is the requesters whose share has not happened yet. With ``diffusion_estimate="expected"``
  (AgentMemory-v1) a frontier agent's share is expected at its request tick + ``SHARE_MEAN``,
  counting down like every other estimate, so D_hat is a function of past events only;
  ``"scheduled"`` (v0, superseded) read each frontier agent's drawn future share tick.

Estimates count down by one per tick between updates [code]. ``estimate_noise`` sigma
multiplies each new estimate by LogNormal(0, sigma) (rounded), drawn from a stream of its own,
so the noise changes D_hat only, never the trace.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import networkx as nx
import numpy as np

WORKLOADS = ("independent", "spatial", "diffusion")
DIFFUSION_ESTIMATES = ("scheduled", "expected")  # v0 (reads the drawn share tick), v1
HORIZON = 8  # estimates >= HORIZON ticks are reported as unknown (-1)
NEW_TOKENS = (32, 128)  # U{32..128} new prompt tokens per request
OUT_TOKENS = (16, 64)  # U{16..64} output tokens per request
INIT_LEN = (512, 2048)  # U{512..2048} initial private prefix tokens
RANKS = (8, 16, 32)  # heterogeneous LoRA ranks
MEAN_GAP = 25.0  # independent: mean action duration (ticks): ~4% of agents active per tick
GAP_SIGMA = 0.8  # independent: LogNormal shape of the action duration
N_LANDMARKS = 16  # spatial: shared destinations
COOLDOWN = 5  # spatial: ticks an agent stays after a request
JITTER = 3.0  # spatial: half-width of a landmark's square
ENCOUNTER_RADIUS = 0.4  # spatial: in units where the plane is 10 sqrt(N) wide
SHARE_MEAN, ACT_MEAN = 3.0, 2.0  # diffusion: Geometric mean delays (ticks)
REFRACTORY = 20  # diffusion: ticks after a request during which an agent ignores shares
BETA = 0.4  # diffusion: share probability per neighbour
SEED_RATE = 0.008  # diffusion: exogenous activations per agent per tick


@dataclass
class Trace:
    """One generated trace (CSR over ticks: ``active[ptr[t]:ptr[t+1]]`` are A_t, ascending)."""

    workload: str
    n_agents: int
    n_ticks: int
    ptr: np.ndarray  # (T + 1,) int64
    active: np.ndarray  # agent ids, ascending within a tick
    new_tokens: np.ndarray  # aligned with ``active``
    out_tokens: np.ndarray
    init_len: np.ndarray  # (N,) initial prefix tokens
    rank: np.ndarray  # (N,) LoRA rank
    estimate: np.ndarray = field(repr=False)  # (T, N) int16 D_hat, -1 unknown

    def tick(self, t: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        lo, hi = self.ptr[t], self.ptr[t + 1]
        return self.active[lo:hi], self.new_tokens[lo:hi], self.out_tokens[lo:hi]

    def next_request_ticks(self) -> np.ndarray:
        """(T, N) int64: the first tick >= t at which each agent requests (``n_ticks`` if none).
        The future: for the problem's oracle only."""
        nxt = np.full(self.n_agents, self.n_ticks, dtype=np.int64)
        out = np.empty((self.n_ticks, self.n_agents), dtype=np.int64)
        for t in range(self.n_ticks - 1, -1, -1):
            ids = self.active[self.ptr[t]:self.ptr[t + 1]]
            nxt[ids] = t
            out[t] = nxt
        return out

    def activity(self) -> np.ndarray:
        """The share of agents active at each tick."""
        return np.diff(self.ptr) / self.n_agents


def generate(workload: str, n_agents: int, n_ticks: int, seed: int,
             estimate_noise: float = 0.0, diffusion_estimate: str = "scheduled") -> Trace:
    """The trace of ``workload`` for ``seed`` (the noise has a stream of its own).
    ``diffusion_estimate`` changes the ``diffusion`` estimates only, never the trace."""
    if workload not in WORKLOADS:
        raise ValueError(f"workload must be one of {WORKLOADS}, got {workload!r}")
    if diffusion_estimate not in DIFFUSION_ESTIMATES:
        raise ValueError(f"diffusion_estimate must be one of {DIFFUSION_ESTIMATES}, "
                         f"got {diffusion_estimate!r}")
    if n_agents < 2 or n_ticks < 1:
        raise ValueError(f"need n_agents >= 2 and n_ticks >= 1, got {n_agents}, {n_ticks}")
    if not np.isfinite(estimate_noise) or estimate_noise < 0:
        raise ValueError(f"estimate_noise must be finite and >= 0, got {estimate_noise!r}")
    trace_ss, noise_ss = np.random.SeedSequence([int(seed), WORKLOADS.index(workload)]).spawn(2)
    rng, noise_rng = np.random.default_rng(trace_ss), np.random.default_rng(noise_ss)
    init_len = rng.integers(INIT_LEN[0], INIT_LEN[1] + 1, n_agents)
    rank = rng.choice(np.array(RANKS), n_agents)
    make = {"independent": _independent, "spatial": _spatial,
            "diffusion": partial(_diffusion, expected=diffusion_estimate == "expected")}[workload]
    per_tick, estimate = make(rng, noise_rng, float(estimate_noise), n_agents, n_ticks)
    counts = np.array([len(ids) for ids in per_tick], dtype=np.int64)
    active = np.concatenate(per_tick).astype(np.int64) if counts.sum() else np.zeros(0, np.int64)
    ptr = np.concatenate([[0], np.cumsum(counts)])
    new = rng.integers(NEW_TOKENS[0], NEW_TOKENS[1] + 1, active.size)
    out = rng.integers(OUT_TOKENS[0], OUT_TOKENS[1] + 1, active.size)
    estimate = np.where(estimate >= HORIZON, -1, estimate).astype(np.int16)
    return Trace(workload, n_agents, n_ticks, ptr, active, new, out, init_len, rank, estimate)


def _noisy(noise_rng: np.random.Generator, sigma: float, value: np.ndarray) -> np.ndarray:
    """D_hat * LogNormal(0, sigma), rounded (sigma = 0: unchanged); one draw per agent."""
    value = np.asarray(value, dtype=np.float64)
    if sigma == 0:
        return np.round(value)
    return np.round(value * noise_rng.lognormal(0.0, sigma, value.shape))


def _independent(rng, noise_rng, sigma, n, n_ticks):
    mu = np.log(MEAN_GAP) - GAP_SIGMA ** 2 / 2  # E[duration] = MEAN_GAP
    next_tick = rng.integers(0, int(2 * MEAN_GAP), n)  # first requests spread over two gaps
    per_tick: list[list[int]] = [[] for _ in range(n_ticks)]
    gaps = np.maximum(1, np.round(rng.lognormal(mu, GAP_SIGMA, (n, n_ticks // 4 + 8)))).astype(np.int64)
    ticks = next_tick[:, None] + np.concatenate([np.zeros((n, 1), np.int64), np.cumsum(gaps, 1)], 1)
    while (ticks[:, -1] < n_ticks).any():  # rare: extend the rows whose requests do not reach T
        more = np.maximum(1, np.round(rng.lognormal(mu, GAP_SIGMA, (n, 64)))).astype(np.int64)
        ticks = np.concatenate([ticks, ticks[:, -1:] + np.cumsum(more, 1)], 1)
    agent_of = np.broadcast_to(np.arange(n)[:, None], ticks.shape)
    keep = ticks < n_ticks
    order = np.lexsort((agent_of[keep], ticks[keep]))
    flat_t, flat_a = ticks[keep][order], agent_of[keep][order]
    bounds = np.searchsorted(flat_t, np.arange(n_ticks + 1))
    per_tick = [flat_a[bounds[t]:bounds[t + 1]] for t in range(n_ticks)]
    # estimates: updated at each request to the (noisy) action duration, then count down
    k = np.zeros(n, dtype=np.int64)  # index of each agent's next request in its row
    estimate = np.empty((n_ticks, n), dtype=np.int64)
    current = _noisy(noise_rng, sigma, ticks[:, 0])  # before the first request: the offset
    since = np.zeros(n, dtype=np.int64)
    for t in range(n_ticks):
        estimate[t] = np.maximum(0, current - since)
        ids = per_tick[t]
        estimate[t, ids] = 0
        k[ids] += 1
        current[ids] = _noisy(noise_rng, sigma, ticks[ids, k[ids]] - t)
        since += 1
        since[ids] = 1
    return per_tick, estimate


def _spatial(rng, noise_rng, sigma, n, n_ticks):
    from scipy.spatial import cKDTree

    width = 10.0 * np.sqrt(n)  # constant density: encounters per agent do not grow with N
    speed = width / 40.0 * rng.uniform(0.7, 1.3, n)  # heterogeneous walkers diverge
    landmarks = rng.uniform(0, width, (N_LANDMARKS, 2))
    pos = rng.uniform(0, width, (n, 2))
    dest = rng.integers(0, N_LANDMARKS, n)
    cool = rng.integers(0, COOLDOWN + 1, n)  # staggered start
    factor = np.ones(n)
    walked = np.zeros(n, dtype=np.int64)  # steps since the last request
    per_tick, estimate = [], np.empty((n_ticks, n), dtype=np.int64)
    for t in range(n_ticks):
        dist = np.linalg.norm(landmarks[dest] - pos, axis=1)
        raw = cool + np.ceil(dist / speed - 1e-9)
        estimate[t] = np.round(raw * factor)
        moving = cool == 0
        arrived = moving & (dist <= 1e-9)
        walkers = np.flatnonzero(moving & ~arrived & (walked > 0))  # left the last meeting place
        met = np.zeros(n, dtype=bool)
        if walkers.size > 1:
            pairs = cKDTree(pos[walkers]).query_pairs(ENCOUNTER_RADIUS, output_type="ndarray")
            met[walkers[pairs.ravel()]] = True
        requesting = arrived | met
        ids = np.flatnonzero(requesting)
        per_tick.append(ids)
        estimate[t, ids] = 0
        # arrivals pick a new destination; requesters stay for the cooldown; the rest walk
        dest[arrived] = rng.integers(0, N_LANDMARKS, int(arrived.sum()))
        cool = np.maximum(cool - 1, 0)
        cool[ids] = COOLDOWN
        go = moving & ~requesting  # a cooldown ending at t starts the walk at t + 1
        walked[go] += 1
        walked[ids] = 0
        delta = landmarks[dest[go]] - pos[go]
        d = np.linalg.norm(delta, axis=1, keepdims=True)
        step = np.minimum(1.0, speed[go, None] / np.maximum(d, 1e-12))
        pos[go] = np.where(d <= speed[go, None], landmarks[dest[go]], pos[go] + delta * step)
        # an arrival stands somewhere on the landmark's square (agents do not stack)
        pos[arrived] += rng.uniform(-JITTER, JITTER, (int(arrived.sum()), 2))
        if sigma > 0 and ids.size:
            factor[ids] = noise_rng.lognormal(0.0, sigma, ids.size)
    return per_tick, estimate


def _geometric(rng, mean, size):
    return rng.geometric(1.0 / mean, size)


def _diffusion(rng, noise_rng, sigma, n, n_ticks, expected=False):
    graph = nx.barabasi_albert_graph(n, 3, seed=int(rng.integers(2 ** 31)))
    adj = nx.to_scipy_sparse_array(graph, format="csr", dtype=np.int8)
    indptr, indices = adj.indptr, adj.indices
    request_at = np.full(n, -1, dtype=np.int64)  # scheduled request tick (-1 none)
    received_at = np.full(n, -1, dtype=np.int64)
    share_at = np.full(n, -1, dtype=np.int64)  # scheduled share tick of a requester
    last_request = np.full(n, -10 ** 9, dtype=np.int64)
    factor = np.ones(n)
    per_tick, estimate = [], np.empty((n_ticks, n), dtype=np.int64)

    def receive(ids, t):
        ids = np.unique(ids)
        ok = (request_at[ids] < 0) & (t - last_request[ids] >= REFRACTORY)
        ids = ids[ok]
        request_at[ids] = t + _geometric(rng, ACT_MEAN, ids.size)
        received_at[ids] = t

    def neighbours(ids):
        starts, stops = indptr[ids], indptr[ids + 1]
        lengths = stops - starts
        if lengths.sum() == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        src = np.repeat(ids, lengths)
        offs = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        return src, indices[np.repeat(starts, lengths) + offs]

    receive(rng.choice(n, max(1, int(0.02 * n)), replace=False), 0)  # initial cascades
    for t in range(n_ticks):
        # D_hat before serving t: pending requests count down from the mean delay; agents one
        # or two hops from the frontier (requesters whose share is pending) in mean delays;
        # "expected": the share counts down from the mean delay since the request (observed),
        # "scheduled" (v0): the drawn share tick, an event of the future
        raw = np.full(n, 10 ** 6, dtype=np.int64)
        frontier = np.flatnonzero(share_at >= t)  # not shared before t: a past fact
        if frontier.size:
            if expected:
                left = np.maximum(0, int(SHARE_MEAN) - (t - last_request[frontier]))
            else:
                left = np.maximum(0, share_at[frontier] - t)
            src_idx, nb = neighbours(frontier)
            lut = np.zeros(n, dtype=np.int64)
            lut[frontier] = left
            hop1 = np.full(n, 10 ** 6, dtype=np.int64)
            np.minimum.at(hop1, nb, lut[src_idx] + int(ACT_MEAN))
            first = np.flatnonzero(hop1 < HORIZON)
            src2, nb2 = neighbours(first)
            hop2 = np.full(n, 10 ** 6, dtype=np.int64)
            np.minimum.at(hop2, nb2, hop1[src2] + int(SHARE_MEAN + ACT_MEAN))
            raw = np.minimum(hop1, hop2)
        eligible = (request_at < 0) & (t - last_request >= REFRACTORY)
        raw = np.where(eligible, raw, 10 ** 6)
        pending = request_at >= 0
        raw[pending] = np.maximum(0, int(ACT_MEAN) - (t - received_at[pending]))
        ids = np.flatnonzero(request_at == t)
        raw[ids] = 0
        estimate[t] = np.where(raw >= 10 ** 6, 10 ** 6, np.round(raw * factor))
        per_tick.append(ids)
        request_at[ids] = -1
        last_request[ids] = t
        share_at[ids] = t + _geometric(rng, SHARE_MEAN, ids.size)
        if sigma > 0 and ids.size:
            factor[ids] = noise_rng.lognormal(0.0, sigma, ids.size)
        sharers = np.flatnonzero(share_at == t)
        if sharers.size:
            _, nb = neighbours(sharers)
            receive(nb[rng.random(nb.size) < BETA], t)
        seeds = rng.choice(n, rng.poisson(SEED_RATE * n), replace=False) if n else []
        receive(np.asarray(seeds, dtype=np.int64), t)
    return per_tick, estimate
