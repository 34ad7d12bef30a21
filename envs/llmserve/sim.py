"""The tick-based accelerator-memory simulator (pure NumPy).

Items: agent a owns two, its LoRA adapter (item a) and its KV prefix (item N + a), each
resident whole or not at all. The shared system prompt and the base model are pinned and not
counted in the capacity C. One :meth:`Simulator.step` serves one tick t given a keep-priority
score per agent (lowest evicted first; score > 0 marks a prefetch candidate, highest first):

1. Demand: the active agents' items are locked; they need their adapter, their KV and room for
   new_a + out_a tokens of growth. If memory is short, unlocked resident items are evicted in
   increasing (score, agent index, KV before adapter). Missing items load on the critical path
   (one copy engine): stall_t = bytes / B_h2d. Without the host tier (``kv_host_tier=False``) a
   missing KV has no host copy and is recomputed by prefill (rec_a = len_a).
2. Compute: the batch cost of :class:`CostModel`.
3. Prefetch, overlapped with compute: non-active agents with score > 0 and a missing item, by
   decreasing score (ties: lower index), load if their bytes fit in what is left of the window
   B_h2d * compute_t and in memory, where memory may be freed only by evicting unlocked items
   of strictly lower score (``prefetch_eviction="lower"``, the default) or, as the official
   ``load_back`` does through the demand path's ``evict``, any unlocked item other than the
   candidate's own and those loaded earlier in the pass, lowest score first
   (``prefetch_eviction="any"``). The pass stops at the first candidate that does not fit
   (ScaleSim stops at the first failed reservation [code]).
4. tick_time = stall_t + compute_t; prefixes grow (capped); the trace advances.

Invariant after every sub-step: used = sum of resident sizes <= C (checked with ``check=True``).
New KV is written through to the host during its own compute, so in host-tier mode the host
always holds a valid copy and an eviction frees memory at once.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from papergym.envs.llmserve.costmodel import CostModel
from papergym.envs.llmserve.traces import Trace

PREFETCH_USE_WINDOW = 3  # prefetched bytes count as used if accessed within load_ahead + 1 ticks
PREFETCH_EVICTION = ("lower", "any")  # what a prefetch may evict (module docstring, step 3)


@dataclass(frozen=True)
class TickResult:
    tick_time: float
    stall: float
    compute: float
    demand_bytes: float
    prefetch_bytes: float
    window_bytes: float  # B_h2d * compute_t: the overlap window
    n_active: int
    n_hits: int
    demand_loads: int  # items loaded on the critical path (or recomputed)
    recomputed_tokens: float


def final_lengths(trace: Trace, cost: CostModel) -> np.ndarray:
    """Every agent's prefix length at the end of the trace (policy-independent)."""
    length = trace.init_len.astype(np.float64).copy()
    for t in range(trace.n_ticks):
        ids, new, out = trace.tick(t)
        length[ids] = np.minimum(length[ids] + new + out, cost.max_kv_tokens)
    return length


def footprints(trace: Trace, cost: CostModel) -> tuple[float, np.ndarray]:
    """(total agent state at the end of the trace, its peak; the bytes the active set needs
    at each tick, growth included): both depend on the trace alone."""
    adapter = cost.adapter_bytes(trace.rank)
    length = trace.init_len.astype(np.float64).copy()
    active_bytes = np.zeros(trace.n_ticks)
    for t in range(trace.n_ticks):
        ids, new, out = trace.tick(t)
        length[ids] = np.minimum(length[ids] + new + out, cost.max_kv_tokens)
        active_bytes[t] = adapter[ids].sum() + cost.kv_bytes_per_token * length[ids].sum()
    return float(adapter.sum() + cost.kv_bytes_per_token * length.sum()), active_bytes


def capacity_for(trace: Trace, cost: CostModel, pressure: float) -> float:
    """C = pressure x total agent state at the end of the trace; refuses a C below the peak
    active footprint (the tick and the bytes in the message)."""
    if not 0 < pressure <= 1:
        raise ValueError(f"pressure must be in (0, 1], got {pressure!r}")
    total, active_bytes = footprints(trace, cost)
    capacity = float(np.floor(pressure * total))
    worst = int(np.argmax(active_bytes)) if active_bytes.size else 0
    if active_bytes.size and active_bytes[worst] > capacity:
        raise ValueError(
            f"capacity {capacity:.4g} B (pressure {pressure}) is below the active set's footprint "
            f"at tick {worst}: {active_bytes[worst]:.4g} B; raise the pressure or lower the activity")
    return capacity


class Simulator:
    """Accelerator memory for ``trace`` with ``capacity`` bytes (module docstring)."""

    vectorized_prefetch = True  # False: the candidate-by-candidate pass (tests compare both)

    def __init__(self, trace: Trace, cost: CostModel, capacity: float, kv_host_tier: bool = True,
                 check: bool = False, prefetch_eviction: str = "lower") -> None:
        if prefetch_eviction not in PREFETCH_EVICTION:
            raise ValueError(f"prefetch_eviction must be one of {PREFETCH_EVICTION}, "
                             f"got {prefetch_eviction!r}")
        self.prefetch_eviction = prefetch_eviction
        n = trace.n_agents
        self.trace, self.cost, self.capacity = trace, cost, float(capacity)
        self.kv_host_tier, self.check, self.n = bool(kv_host_tier), bool(check), n
        self.adapter_bytes = cost.adapter_bytes(trace.rank)
        self.length = trace.init_len.astype(np.float64).copy()
        self.size = np.concatenate([self.adapter_bytes, cost.kv_bytes_per_token * self.length])
        self.resident = np.zeros(2 * n, dtype=bool)
        self.locked = np.zeros(2 * n, dtype=bool)
        self.agent_of = np.arange(2 * n) % n
        self.kind_key = np.concatenate([np.ones(n, np.int8), np.zeros(n, np.int8)])  # KV first
        self.used = 0.0
        self.t = 0
        self.last_access = np.full(n, -1, dtype=np.int64)
        self.prefetch_tick = np.full(2 * n, -1, dtype=np.int64)
        self.totals = dict(makespan=0.0, stall=0.0, compute=0.0, demand_bytes=0.0,
                           prefetch_bytes=0.0, prefetch_used_bytes=0.0, requests=0, hits=0,
                           demand_loads=0, recomputed_tokens=0.0, evicted_bytes=0.0)

    @property
    def done(self) -> bool:
        return self.t >= self.trace.n_ticks

    @property
    def free(self) -> float:
        return self.capacity - self.used

    # --- helpers --------------------------------------------------------------------------
    def _evict_order(self, items: np.ndarray, scores: np.ndarray) -> np.ndarray:
        agents = self.agent_of[items]
        return items[np.lexsort((self.kind_key[items], agents, scores[agents]))]

    def _evict(self, items: np.ndarray) -> None:
        if self.check:
            assert not self.locked[items].any(), "a locked item was evicted"
            assert self.resident[items].all(), "evicting an item that is not resident"
        freed = float(self.size[items].sum())
        self.resident[items] = False
        self.prefetch_tick[items] = -1
        self.used -= freed
        self.totals["evicted_bytes"] += freed

    def _check(self, where: str) -> None:
        if not self.check:
            return
        resident_bytes = float(self.size[self.resident].sum())
        assert abs(self.used - resident_bytes) <= 1e-6 * max(1.0, resident_bytes), \
            f"{where}: used {self.used} != resident {resident_bytes}"
        assert self.used <= self.capacity + 1e-6, f"{where}: used {self.used} > C {self.capacity}"

    # --- one tick -------------------------------------------------------------------------
    def step(self, scores: np.ndarray) -> TickResult:
        if self.done:
            raise RuntimeError("the trace is over; reset the simulator")
        scores = np.asarray(scores, dtype=np.float64)
        n, t, cost = self.n, self.t, self.cost
        ids, new, out = self.trace.tick(t)
        kv = ids + n
        # 1. demand
        self.locked[:] = False
        self.locked[ids] = True
        self.locked[kv] = True
        ad_miss = ~self.resident[ids] & (self.adapter_bytes[ids] > 0)
        kv_miss = ~self.resident[kv]
        old_len = self.length[ids]
        new_len = np.minimum(old_len + new + out, cost.max_kv_tokens)
        new_kv_bytes = cost.kv_bytes_per_token * new_len
        need = float(self.adapter_bytes[ids][ad_miss].sum() + new_kv_bytes[kv_miss].sum()
                     + (new_kv_bytes - self.size[kv])[~kv_miss].sum())
        deficit = self.used + need - self.capacity
        if deficit > 0:
            order = self._evict_order(np.flatnonzero(self.resident & ~self.locked), scores)
            cum = np.cumsum(self.size[order])
            if cum.size == 0 or cum[-1] < deficit:
                raise RuntimeError(f"tick {t}: the active set does not fit in C = {self.capacity}")
            self._evict(order[:int(np.searchsorted(cum, deficit, side="left")) + 1])
        self._check("demand eviction")
        # prefetched bytes that are used now (within the use window) count toward precision
        hit_items = np.concatenate([ids[~ad_miss], kv[~kv_miss]])
        pf = self.prefetch_tick[hit_items]
        used_pf = hit_items[(pf >= 0) & (t - pf <= PREFETCH_USE_WINDOW)]
        self.totals["prefetch_used_bytes"] += float(self.size[used_pf].sum())
        self.prefetch_tick[np.concatenate([ids, kv])] = -1
        load = float(self.adapter_bytes[ids][ad_miss].sum())
        recomputed = np.zeros(ids.size)
        if self.kv_host_tier:
            load += float(self.size[kv][kv_miss].sum())
        else:
            recomputed[kv_miss] = old_len[kv_miss]  # no host copy: prefill again
        self.resident[ids[ad_miss]] = True
        self.resident[kv] = True
        self.size[kv] = new_kv_bytes
        self.used += need
        self._check("demand load")
        stall = load / cost.b_h2d
        # 2. compute
        compute = cost.compute_time(old_len, new, out, recomputed)
        self.length[ids] = new_len
        self.last_access[ids] = t
        # 3. prefetch, overlapped with compute
        window = cost.b_h2d * compute
        prefetched = self._prefetch(scores, window)
        self._check("prefetch")
        # 4. bookkeeping
        n_miss = ad_miss | kv_miss
        result = TickResult(tick_time=stall + compute, stall=stall, compute=compute,
                            demand_bytes=load, prefetch_bytes=prefetched, window_bytes=window,
                            n_active=int(ids.size), n_hits=int((~n_miss).sum()),
                            demand_loads=int(ad_miss.sum() + kv_miss.sum()),
                            recomputed_tokens=float(recomputed.sum()))
        tot = self.totals
        tot["makespan"] += result.tick_time
        tot["stall"] += stall
        tot["compute"] += compute
        tot["demand_bytes"] += load
        tot["prefetch_bytes"] += prefetched
        tot["requests"] += result.n_active
        tot["hits"] += result.n_hits
        tot["demand_loads"] += result.demand_loads
        tot["recomputed_tokens"] += result.recomputed_tokens
        self.t += 1
        return result

    def _prefetch(self, scores: np.ndarray, window: float) -> float:
        n = self.n
        self._scores = scores
        missing = ~self.resident[:n] & (self.adapter_bytes > 0)
        if self.kv_host_tier:
            missing |= ~self.resident[n:]
        candidates = np.flatnonzero((scores > 0) & missing & ~self.locked[:n])
        if candidates.size == 0 or window <= 0:
            return 0.0
        candidates = candidates[np.lexsort((candidates, -scores[candidates]))]
        victims = self._evict_order(np.flatnonzero(self.resident & ~self.locked), scores)
        victim_scores = scores[self.agent_of[victims]]
        cum = np.concatenate([[0.0], np.cumsum(self.size[victims])])
        if self.prefetch_eviction == "any":
            return self._prefetch_evict_any(candidates, victims, window)
        if self.vectorized_prefetch:
            fast = self._prefetch_vectorized(candidates, victims, victim_scores, cum, window)
            if fast is not None:
                return fast
        return self._prefetch_loop(candidates, victims, victim_scores, cum, window)

    def _missing_bytes(self, agents: np.ndarray) -> np.ndarray:
        n = self.n
        nbytes = np.where(self.resident[agents], 0.0, self.size[agents])
        if self.kv_host_tier:
            nbytes = nbytes + np.where(self.resident[agents + n], 0.0, self.size[agents + n])
        return nbytes

    def _prefetch_vectorized(self, candidates, victims, victim_scores, cum, window) -> float | None:
        """The sequential pass in closed form. With m_j the candidates' missing bytes in order,
        need_j = sum_{i <= j} m_i - free and victims taken lowest first, candidate j fits iff
        sum_{i <= j} m_i <= window and need_j <= max(bytes of victims scored below s_j, the
        victim bytes already freed for need_{j-1}). None when an eviction would hit a
        candidate's own item (the loop handles that case)."""
        m = self._missing_bytes(candidates)
        total = np.cumsum(m)
        need = total - self.free
        lower = np.searchsorted(victim_scores, self.scores_of(candidates), side="left")
        below = cum[lower]
        freed_before = np.zeros(candidates.size)
        positive = need[:-1] > 0
        idx = np.minimum(np.searchsorted(cum, need[:-1], side="left"), cum.size - 1)
        freed_before[1:] = np.where(positive, cum[idx], 0.0)
        fits = (total <= window) & ((need <= 0) | (need <= np.maximum(below, freed_before)))
        k = int(np.argmin(fits)) if not fits.all() else candidates.size
        if k == 0:
            return 0.0
        stop = int(np.searchsorted(cum, need[k - 1], side="left")) if need[k - 1] > 0 else 0
        evicted = victims[:stop]
        chosen = candidates[:k]
        if stop:
            is_chosen = np.zeros(self.n, dtype=bool)
            is_chosen[chosen] = True
            if is_chosen[self.agent_of[evicted]].any():
                return None
        if stop:
            self._evict(evicted)
        items = np.concatenate([chosen, chosen + self.n]) if self.kv_host_tier else chosen
        items = items[~self.resident[items] & (self.size[items] > 0)]
        self.resident[items] = True
        self.prefetch_tick[items] = self.t
        loaded = float(total[k - 1])
        self.used += loaded
        return loaded

    def scores_of(self, agents: np.ndarray) -> np.ndarray:
        return self._scores[agents]

    def _prefetch_loop(self, candidates, victims, victim_scores, cum, window) -> float:
        n, scores = self.n, self._scores
        pointer, left, loaded = 0, window, 0.0
        for a in candidates:
            items = [i for i in (a, a + n) if not self.resident[i] and self.size[i] > 0
                     and (i < n or self.kv_host_tier)]
            if not items:
                continue
            nbytes = float(self.size[items].sum())
            if nbytes > left:
                break  # does not fit in the overlap window
            short = nbytes - self.free
            if short > 0:
                # memory only from unlocked items of strictly lower score, lowest first
                lower = int(np.searchsorted(victim_scores, scores[a], side="left"))
                if lower <= pointer or cum[lower] - cum[pointer] < short:
                    break  # the first failed reservation ends the pass
                stop = int(np.searchsorted(cum, cum[pointer] + short, side="left"))
                self._evict(victims[pointer:stop])
                pointer = stop
            self.resident[items] = True
            self.prefetch_tick[items] = self.t
            self.used += nbytes
            left -= nbytes
            loaded += nbytes
        return loaded

    def _prefetch_evict_any(self, candidates, victims, window) -> float:
        """The pass with the official reservation: a candidate loads if its bytes fit in the
        window and in free memory plus every unlocked resident item that is neither its own nor
        an agent's loaded earlier in this pass (locked while it loads, as in the official
        ``load_back``), evicted lowest score first; the first candidate that does not fit ends
        the pass."""
        n, left, loaded = self.n, window, 0.0
        loading = np.zeros(n, dtype=bool)  # agents loaded in this pass: locked while they load
        for a in candidates:
            items = [i for i in (a, a + n) if not self.resident[i] and self.size[i] > 0
                     and (i < n or self.kv_host_tier)]
            if not items:
                continue
            nbytes = float(self.size[items].sum())
            if nbytes > left:
                break  # does not fit in the overlap window
            short = nbytes - self.free
            if short > 0:
                owner = self.agent_of[victims]
                pool = victims[self.resident[victims] & (owner != a) & ~loading[owner]]
                cum = np.cumsum(self.size[pool])
                if cum.size == 0 or cum[-1] < short:
                    break  # the first failed reservation ends the pass
                self._evict(pool[:int(np.searchsorted(cum, short, side="left")) + 1])
            self.resident[items] = True
            self.prefetch_tick[items] = self.t
            loading[a] = True
            self.used += nbytes
            left -= nbytes
            loaded += nbytes
        return loaded
