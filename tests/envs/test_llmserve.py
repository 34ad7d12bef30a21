"""AgentMemory-v0: memory accounting, hand-computed costs, textbook paging, the oracle against
brute force, the prefetch pass, the estimates and the env contract (family spec, tests 1-10)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from papergym.actions import InvalidAction
from papergym.envs.llmserve import oracle
from papergym.envs.llmserve.costmodel import CostModel
from papergym.envs.llmserve.env import AgentMemoryEnv, build
from papergym.envs.llmserve.sim import Simulator, capacity_for
from papergym.envs.llmserve.traces import HORIZON, WORKLOADS, Trace, generate

UNIT = CostModel(kv_bytes_per_token=1.0, lora_bytes_per_rank=1.0, b_h2d=1.0, c_prefill=0.0,
                 c_step=0.0, c_ctx=0.0, c_lora=0.0)


def make_trace(requests, n_agents, init_len, rank, new=None, out=None) -> Trace:
    """A hand-made trace: ``requests[t]`` lists the agents active at tick t."""
    counts = [len(r) for r in requests]
    active = np.array([a for r in requests for a in sorted(r)], dtype=np.int64)
    size = active.size
    return Trace("independent", n_agents, len(requests), np.concatenate([[0], np.cumsum(counts)]),
                 active, np.zeros(size, np.int64) if new is None else np.asarray(new),
                 np.zeros(size, np.int64) if out is None else np.asarray(out),
                 np.asarray(init_len, np.int64), np.asarray(rank, np.int64),
                 np.full((len(requests), n_agents), -1, np.int16))


def paging_sim(reference, slots) -> Simulator:
    """Unit-size prefixes, no adapters, zero compute: one request per tick."""
    n = max(reference) + 1
    return Simulator(make_trace([[p] for p in reference], n, np.ones(n), np.zeros(n)), UNIT, slots)


TEXTBOOK = [7, 0, 1, 2, 0, 3, 0, 4, 2, 3, 0, 3, 2, 1, 2, 0, 1, 7, 0, 1]


# --- 1. accounting --------------------------------------------------------------------------
def test_accounting_is_conserved_on_random_traces_and_scores():
    rng = np.random.default_rng(0)
    for i in range(100):
        workload = WORKLOADS[i % 3]
        sim = build(workload, 16, 40, float(rng.choice([0.5, 0.7, 1.0])), 0.0,
                    bool(i % 4), seed=i, check=True)  # check: invariants after every sub-step
        while not sim.done:
            ids, new, out = sim.trace.tick(sim.t)
            before_used, before_evicted = sim.used, sim.totals["evicted_bytes"]
            old_len = sim.length[ids].copy()
            kv_was = sim.resident[ids + sim.n].copy()
            res = sim.step(rng.normal(0, 2, sim.n))
            grown = np.minimum(old_len + new + out, sim.cost.max_kv_tokens)
            growth = sim.cost.kv_bytes_per_token * (grown - old_len)
            # in drop mode a missing prefix is allocated (recomputed), not loaded
            allocated = 0.0 if sim.kv_host_tier else \
                sim.cost.kv_bytes_per_token * float(old_len[~kv_was].sum())
            delta = sim.used - before_used
            evicted = sim.totals["evicted_bytes"] - before_evicted
            assert delta == pytest.approx(res.demand_bytes + allocated + growth.sum()
                                          + res.prefetch_bytes - evicted, abs=1e-6)
            assert sim.used <= sim.capacity
            assert sim.resident[ids + sim.n].all()  # the active set is served
            assert res.prefetch_bytes <= res.window_bytes
        assert sim.totals["demand_bytes"] + sim.totals["prefetch_bytes"] >= 0


# --- 2. a trace computed by hand --------------------------------------------------------------
def test_hand_computed_trace_with_lru():
    cost = CostModel(kv_bytes_per_token=1.0, lora_bytes_per_rank=1.0, b_h2d=10.0, c_prefill=0.01,
                     c_step=0.1, c_ctx=0.001, c_lora=0.01)
    trace = make_trace([[0], [1], [0]], 3, [100, 50, 20], [10, 10, 10], new=[10, 10, 10],
                       out=[2, 1, 1])
    sim = Simulator(trace, cost, capacity=150.0, check=True)
    ticks = [sim.step(oracle.lru_scorer()(sim)) for _ in range(3)]
    # t0: load adapter 0 (10 B) + prefix 0 (100 B); compute 0.1 + (0.1 + 0.111 + 0.01) + (0.1 + 0.112 + 0.01)
    # t1: prefix 0 (112 B) evicted for agent 1 (needs 10 + 61, free 28); load 10 + 50 B
    # t2: prefix 1 (61 B) evicted (needs 123, free 69); load prefix 0 (112 B)
    assert [t.demand_bytes for t in ticks] == [110.0, 60.0, 112.0]
    assert [t.stall for t in ticks] == pytest.approx([11.0, 6.0, 11.2], rel=1e-12)
    assert [t.compute for t in ticks] == pytest.approx([0.543, 0.271, 0.333], rel=1e-12)
    assert sim.totals["makespan"] == pytest.approx(29.347, rel=1e-12)
    assert sim.used == 143.0 and sim.resident.tolist() == [True, True, False, True, False, False]


# --- 3. textbook paging -----------------------------------------------------------------------
def test_textbook_reference_string_lru_and_oracle():
    sim = paging_sim(TEXTBOOK, 3)
    assert oracle.run(sim, oracle.lru_scorer())["demand_loads"] == 12
    sim = paging_sim(TEXTBOOK, 3)
    best = oracle.oracle_scorer(sim.trace.next_request_ticks(), prefetch=False)
    assert oracle.run(sim, best)["demand_loads"] == 9


# --- 4. the oracle against brute force ------------------------------------------------------------
def brute_force_min_faults(reference, slots) -> int:
    states = {frozenset(): 0}
    for page in reference:
        nxt: dict[frozenset, int] = {}
        for cache, faults in states.items():
            if page in cache:
                options, cost = [cache], 0
            elif len(cache) < slots:
                options, cost = [cache | {page}], 1
            else:
                options, cost = [(cache - {v}) | {page} for v in cache], 1
            for o in options:
                nxt[o] = min(nxt.get(o, 10 ** 9), faults + cost)
        states = nxt
    return min(states.values())


def test_oracle_demand_loads_equal_brute_force_on_tiny_traces():
    rng = np.random.default_rng(1)
    for _ in range(200):
        reference = rng.integers(0, 4, int(rng.integers(1, 13))).tolist()
        sim = paging_sim(reference + [3], 2)  # a last request of agent 3 fixes N = 4
        best = oracle.oracle_scorer(sim.trace.next_request_ticks(), prefetch=False)
        assert oracle.run(sim, best)["demand_loads"] == brute_force_min_faults(reference + [3], 2)


# --- 5. prefetch ------------------------------------------------------------------------------
def prefetch_sim(capacity, b_h2d=1.0):
    cost = CostModel(kv_bytes_per_token=1.0, lora_bytes_per_rank=0.0, b_h2d=b_h2d, c_prefill=1.0,
                     c_step=0.0, c_ctx=0.0, c_lora=0.0)
    # agent 0 computes 10 tokens at t0 (window = b_h2d * 10 s); agents 1-3 have 4-byte prefixes
    trace = make_trace([[0], [1], [2]], 4, [1, 4, 4, 4], [0, 0, 0, 0], new=[10, 1, 1], out=[0, 0, 0])
    return Simulator(trace, cost, capacity, check=True)


def test_a_prefetched_item_used_next_tick_causes_no_stall():
    sim = prefetch_sim(capacity=100.0)
    first = sim.step(np.array([0.0, 2.0, -1.0, -1.0]))
    assert first.prefetch_bytes == 4.0 and first.window_bytes == 10.0
    assert sim.step(np.array([0.0, 0.0, -1.0, -1.0])).stall == 0.0


def test_prefetch_stops_at_the_first_misfit_and_respects_the_window():
    sim = prefetch_sim(capacity=100.0, b_h2d=0.5)  # window 5 bytes: agent 1 (4 B) fits, then 2 not
    res = sim.step(np.array([0.0, 3.0, 2.0, 1.0]))
    assert res.prefetch_bytes == 4.0 and sim.resident[4 + 1] and not sim.resident[4 + 2]
    sim = prefetch_sim(capacity=100.0, b_h2d=0.5)
    big = prefetch_sim(capacity=100.0, b_h2d=0.5)
    big.size[4 + 1] = 6.0  # the first candidate does not fit the window: nothing after it loads
    res = big.step(np.array([0.0, 3.0, 2.0, 1.0]))
    assert res.prefetch_bytes == 0.0


def test_prefetch_never_evicts_an_item_scored_at_or_above_the_candidate():
    sim = prefetch_sim(capacity=15.0)  # t0 needs 11 + 0 (agent 0: 1 + 10 tokens): 4 bytes left
    sim.resident[4 + 3] = True  # agent 3's prefix resident (4 B): free is 0 after agent 0 loads
    sim.used = 4.0
    res = sim.step(np.array([0.0, 1.0, -1.0, 1.0]))  # candidate 1 (score 1) vs resident 3 (score 1)
    assert res.prefetch_bytes == 0.0 and sim.resident[4 + 3]
    sim = prefetch_sim(capacity=15.0)
    sim.resident[4 + 3] = True
    sim.used = 4.0
    res = sim.step(np.array([0.0, 1.0, -1.0, 0.5]))  # strictly lower: evicted for the candidate
    assert res.prefetch_bytes == 4.0 and not sim.resident[4 + 3] and sim.resident[4 + 1]


def test_the_vectorized_prefetch_pass_equals_the_candidate_loop():
    for seed in range(20):
        a = build(WORKLOADS[seed % 3], 48, 80, 0.6, 0.0, True, seed=seed, check=True)
        b = build(WORKLOADS[seed % 3], 48, 80, 0.6, 0.0, True, seed=seed, check=True)
        b.vectorized_prefetch = False
        rng = np.random.default_rng(seed)
        while not a.done:
            scores = rng.normal(0, 1, a.n)
            assert a.step(scores) == b.step(scores)
            assert (a.resident == b.resident).all()


# --- 7. estimates -----------------------------------------------------------------------------
def test_independent_exact_estimates_are_the_true_distance():
    trace = generate("independent", 200, 300, seed=3)
    nxt = trace.next_request_ticks()
    dist = nxt - np.arange(trace.n_ticks)[:, None]
    seen = nxt < trace.n_ticks
    expected = np.where(dist < HORIZON, dist, -1)
    assert (trace.estimate[seen] == expected[seen]).all()


def test_estimates_count_down_between_updates_and_noise_changes_only_them():
    exact = generate("independent", 200, 300, seed=4)
    noisy = generate("independent", 200, 300, seed=4, estimate_noise=0.5)
    for field in ("ptr", "active", "new_tokens", "out_tokens", "init_len", "rank"):
        assert np.array_equal(getattr(exact, field), getattr(noisy, field))
    assert not np.array_equal(exact.estimate, noisy.estimate)
    for trace in (noisy, generate("spatial", 200, 300, seed=4)):
        e = trace.estimate.astype(int)
        active = np.zeros_like(e, dtype=bool)
        for t in range(trace.n_ticks):
            active[t, trace.tick(t)[0]] = True
        # between updates (no request at t), a known estimate > 0 drops by exactly one
        both = (e[:-1] > 0) & (e[1:] >= 0) & ~active[:-1] & ~active[1:]
        assert both.sum() > 100
        assert (e[1:][both] == e[:-1][both] - 1).all()


def test_activity_is_sparse_in_every_workload():
    for workload in WORKLOADS:
        share = generate(workload, 1000, 300, seed=0).activity()
        assert 0.01 < share.mean() < 0.07 and share.max() <= 0.12, workload


# --- 8. drop mode -----------------------------------------------------------------------------
def test_drop_mode_adds_prefill_of_the_recomputed_tokens():
    host = build("independent", 64, 120, 0.3, 0.0, True, seed=5, check=True)
    drop = build("independent", 64, 120, 0.3, 0.0, False, seed=5, check=True)
    lru = oracle.lru_scorer()
    while not host.done:  # no prefetch: both modes keep the same items resident
        a, b = host.step(lru(host)), drop.step(lru(drop))
        assert a.recomputed_tokens == 0.0
        assert b.compute == pytest.approx(a.compute + host.cost.c_prefill * b.recomputed_tokens)
    assert drop.totals["recomputed_tokens"] > 0 and host.totals["recomputed_tokens"] == 0


# --- 9. the env -------------------------------------------------------------------------------
def test_env_passes_the_checker_and_is_deterministic_by_seed():
    check_env(AgentMemoryEnv(N=16, n_ticks=50, pressure=0.6), skip_render_check=True)

    def rollout(seed):
        env = AgentMemoryEnv(N=64, n_ticks=200)
        obs, _ = env.reset(seed=seed)
        rng = np.random.default_rng(0)
        rewards, done = [], False
        while not done:
            obs, r, done, _, _ = env.step(rng.normal(0, 1, 64).astype(np.float32))
            rewards.append(r)
        return np.array(rewards), env

    a, env = rollout(7)
    b, _ = rollout(7)
    c, _ = rollout(8)
    assert np.array_equal(a, b) and len(a) == 200 and not np.array_equal(a, c)
    assert -a.sum() == pytest.approx(env.sim.totals["makespan"], rel=1e-12)  # return = -makespan


def test_env_rejects_bad_actions_and_clips_out_of_bounds():
    env = AgentMemoryEnv(N=16, n_ticks=20, pressure=0.6)
    env.reset(seed=0)
    with pytest.raises(InvalidAction):
        env.step(np.zeros(15))
    bad = np.zeros(16)
    bad[3] = np.nan
    with pytest.raises(InvalidAction, match="non-finite"):
        env.step(bad)
    _, _, _, _, info = env.step(np.full(16, 5e6))
    assert info["n_clipped"] == 16


def test_the_observation_carries_no_future():
    env = AgentMemoryEnv(N=32, n_ticks=50, pressure=0.6)
    obs, info = env.reset(seed=0)
    assert set(obs) == {"resident_adapter", "resident_kv_frac", "state_bytes", "age_since_access",
                        "dist_estimate", "active_now", "free_bytes"}
    assert "next" not in " ".join(info)


# --- 10. capacity check ---------------------------------------------------------------------------
def test_a_capacity_below_the_active_footprint_is_refused():
    trace = generate("independent", 64, 200, seed=0)
    with pytest.raises(ValueError, match=r"tick \d+"):
        capacity_for(trace, CostModel(), 0.02)
    with pytest.raises(ValueError, match="tick"):
        AgentMemoryEnv(N=64, n_ticks=200, pressure=0.02).reset(seed=0)


def test_unknown_workload_and_bad_kwargs_are_refused():
    with pytest.raises(ValueError, match="workload"):
        AgentMemoryEnv(workload="bursty")
    with pytest.raises(ValueError, match="pressure"):
        AgentMemoryEnv(pressure=1.5)
    assert list(itertools.islice(WORKLOADS, 3)) == ["independent", "spatial", "diffusion"]


@pytest.mark.parametrize("workload", ["spatial", "diffusion"])
def test_check_passes_on_other_workloads_and_the_drop_mode(workload):
    from papergym.check import check_problem

    report = check_problem("papergym/AgentMemory-v0", tier="smoke", throughput_steps=10,
                           make_kwargs={"workload": workload, "N": 32, "n_ticks": 60,
                                        "pressure": 0.6, "kv_host_tier": False})
    assert report.ok, report.summary()
