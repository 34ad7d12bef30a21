"""AgentMemory-v1: no invocation-distance estimate reads a future event (diffusion, independent,
spatial); the cost-constant scales and the prefetch eviction rules of the simulator."""

from __future__ import annotations

import numpy as np
import pytest

from papergym.envs.llmserve import traces
from papergym.envs.llmserve.env import build
from papergym.envs.llmserve.evaluate import AgentMemoryTaskV1
from papergym.envs.llmserve.traces import SHARE_MEAN, WORKLOADS, generate

N, T, DELAY = 300, 60, 6


def _with_late_shares(monkeypatch, mode: str, tick: int):
    """The trace, and the same trace whose requesters of ``tick`` share ``DELAY`` ticks later
    than drawn (the rng streams stay aligned). Returns both and the first tick at which the
    two histories can differ (the earliest original share of those requesters)."""
    original = traces._geometric
    calls = {"n": 0}
    first_share = {}

    def late(rng, mean, size):
        draw = original(rng, mean, size)
        if mean == SHARE_MEAN:
            if calls["n"] == tick and size:
                first_share["t"] = tick + int(draw.min())
                draw = draw + DELAY
            calls["n"] += 1
        return draw

    base = generate("diffusion", N, T, seed=3, diffusion_estimate=mode)
    monkeypatch.setattr(traces, "_geometric", late)
    moved = generate("diffusion", N, T, seed=3, diffusion_estimate=mode)
    monkeypatch.setattr(traces, "_geometric", original)
    return base, moved, first_share.get("t")


@pytest.mark.parametrize("tick", [5, 12, 20, 31])
def test_no_diffusion_estimate_reads_a_future_share(monkeypatch, tick):
    # moving a scheduled share into the future changes nothing observable before it happens,
    # so every estimate up to that tick must be the same
    base, moved, until = _with_late_shares(monkeypatch, "expected", tick)
    assert until is not None and base.ptr[tick + 1] > base.ptr[tick]  # requesters at `tick`
    np.testing.assert_array_equal(base.estimate[:until + 1], moved.estimate[:until + 1])
    np.testing.assert_array_equal(base.active[:base.ptr[until + 1]],
                                  moved.active[:moved.ptr[until + 1]])


def test_v0_estimate_read_the_scheduled_share_tick(monkeypatch):
    # the same probe catches the superseded estimate (so the test above cannot pass trivially)
    leaked = 0
    for tick in (5, 12, 20, 31):
        base, moved, until = _with_late_shares(monkeypatch, "scheduled", tick)
        leaked += int((base.estimate[:until + 1] != moved.estimate[:until + 1]).sum())
    assert leaked > 0


def test_expected_estimate_changes_diffusion_only():
    for workload in ("independent", "spatial"):
        a = generate(workload, 64, 40, seed=1, diffusion_estimate="scheduled")
        b = generate(workload, 64, 40, seed=1, diffusion_estimate="expected")
        np.testing.assert_array_equal(a.estimate, b.estimate)
    a = generate("diffusion", 200, 80, seed=1, diffusion_estimate="scheduled")
    b = generate("diffusion", 200, 80, seed=1, diffusion_estimate="expected")
    np.testing.assert_array_equal(a.active, b.active)  # the trace itself is unchanged
    assert (a.estimate != b.estimate).any()


def test_v1_task_plays_the_expected_estimate():
    task = AgentMemoryTaskV1(workload="diffusion", N=64, n_ticks=30)
    assert task.cell["diffusion_estimate"] == "expected"
    with pytest.raises(ValueError, match="diffusion_estimate"):
        generate("diffusion", 64, 30, seed=0, diffusion_estimate="oracle")


class _EditedDraws:
    """A generator whose ``method`` returns ``edit(draw)`` at the first non-empty draw from its
    ``call``-th use matching ``match`` on (the draws consumed stay the same, so the rest of the
    stream is aligned); ``edited_at`` is the count of matching uses then."""

    def __init__(self, rng, method, call, edit, match=lambda *args: True):
        self._rng, self._method, self._call, self._edit, self._match = rng, method, call, edit, match
        self.calls, self.edited_at = 0, None

    def __getattr__(self, name):
        attr = getattr(self._rng, name)
        if name != self._method:
            return attr

        def drawn(*args, **kwargs):
            out = attr(*args, **kwargs)
            if self._match(*args):
                self.calls += 1
                if self.edited_at is None and self.calls >= self._call and np.size(out):
                    out, self.edited_at = self._edit(out), self.calls
            return out
        return drawn


def _requests_of(trace, agent):
    return [t for t in range(trace.n_ticks) if agent in trace.tick(t)[0]]


def test_no_independent_estimate_reads_an_action_before_it_starts(monkeypatch):
    # lengthening one agent's third action changes nothing before that action starts (the
    # agent announces its duration when it starts it: the paper's first workload class)
    k = 1
    base = generate("independent", N, T, seed=3)
    agent = next(a for a in range(N) if len(_requests_of(base, a)) > k + 1
                 and _requests_of(base, a)[k + 1] + DELAY < T)
    start = _requests_of(base, agent)[k]
    original = traces._independent

    def longer(out):
        out = out.copy()
        out[agent, k] += DELAY
        return out

    monkeypatch.setattr(traces, "_independent", lambda rng, *a: original(
        _EditedDraws(rng, "lognormal", 1, longer), *a))
    moved = generate("independent", N, T, seed=3)
    np.testing.assert_array_equal(base.estimate[:start + 1], moved.estimate[:start + 1])
    assert (base.estimate[start + 1:, agent] != moved.estimate[start + 1:, agent]).any()
    assert _requests_of(moved, agent)[k + 1] == _requests_of(base, agent)[k + 1] + DELAY


@pytest.mark.parametrize("tick", [6, 15, 27])
def test_no_spatial_estimate_reads_a_future_destination(monkeypatch, tick):
    # the destinations drawn for the agents that arrive at `tick` are chosen after the estimate
    # of that tick: changing them changes no estimate (and no request) up to it, and later ones
    from papergym.envs.llmserve.traces import N_LANDMARKS

    base = generate("spatial", N, T, seed=3)
    original = traces._spatial
    landmark_draw = lambda low, high, *rest: high == N_LANDMARKS  # noqa: E731
    # landmark draws: every agent's first destination, then one per tick for its arrivals
    edited = _EditedDraws(None, "integers", tick + 2, lambda out: (out + 1) % N_LANDMARKS,
                          landmark_draw)

    def spatial(rng, *a):
        edited._rng = rng
        return original(edited, *a)

    monkeypatch.setattr(traces, "_spatial", spatial)
    moved = generate("spatial", N, T, seed=3)
    tick = edited.edited_at - 2  # the first tick from `tick` on with an arrival
    np.testing.assert_array_equal(base.estimate[:tick + 1], moved.estimate[:tick + 1])
    np.testing.assert_array_equal(base.active[:base.ptr[tick + 1]],
                                  moved.active[:moved.ptr[tick + 1]])
    assert (base.estimate[tick + 1:] != moved.estimate[tick + 1:]).any()


def test_cost_scales_change_bandwidth_and_decode_only_and_reach_the_references():
    from papergym.envs.llmserve.costmodel import CostModel
    from papergym.envs.llmserve.env import AgentMemoryEnvV1

    base = CostModel()
    assert AgentMemoryEnvV1().cost == base
    scaled = AgentMemoryEnvV1(bandwidth_scale=4.0, decode_scale=0.5).cost
    assert scaled.b_h2d == 4 * base.b_h2d
    assert (scaled.c_step, scaled.c_ctx) == (0.5 * base.c_step, 0.5 * base.c_ctx)
    assert (scaled.c_prefill, scaled.c_lora, scaled.kv_bytes_per_token) == (
        base.c_prefill, base.c_lora, base.kv_bytes_per_token)
    with pytest.raises(ValueError, match="bandwidth_scale"):
        AgentMemoryEnvV1(bandwidth_scale=0.0)
    # LRU through the env equals the task's LRU reference only if both use the cell's constants
    from papergym.agents.llmserve.classic_cache import LRUPolicy

    for kwargs in ({"bandwidth_scale": 0.25}, {"decode_scale": 4.0}):
        task = AgentMemoryTaskV1(N=64, n_ticks=60, **kwargs)
        assert task.evaluate(LRUPolicy(), 0).metrics["log_speedup"] == 0.0
    slow = AgentMemoryTaskV1(N=64, n_ticks=60, bandwidth_scale=0.25).evaluate(LRUPolicy(), 0)
    fast = AgentMemoryTaskV1(N=64, n_ticks=60, bandwidth_scale=4.0).evaluate(LRUPolicy(), 0)
    assert slow.metrics["makespan"] > fast.metrics["makespan"]


# --- prefetch_eviction="any": the official load_back may evict any unlocked item ----------------
def test_any_rule_evicts_an_item_scored_at_or_above_the_candidate_that_lower_keeps():
    from tests.envs.test_llmserve import prefetch_sim

    results = {}
    for rule in ("lower", "any"):
        sim = prefetch_sim(capacity=15.0)  # after agent 0 loads (11 B), agent 3's prefix (4 B) fills C
        sim.prefetch_eviction = rule
        sim.resident[4 + 3] = True
        sim.used = 4.0
        res = sim.step(np.array([0.0, 1.0, -1.0, 2.0]))  # candidate 1 (score 1) below resident 3
        results[rule] = (res.prefetch_bytes, bool(sim.resident[4 + 1]), bool(sim.resident[4 + 3]))
    assert results["lower"] == (0.0, False, True)
    assert results["any"] == (4.0, True, False)


def test_any_rule_stops_at_the_first_failed_reservation():
    from tests.envs.test_llmserve import prefetch_sim

    sim = prefetch_sim(capacity=15.0)
    sim.prefetch_eviction = "any"
    sim.size[4 + 1] = 8.0  # candidate 1 needs 8 B; free 4 B and no unlocked item to evict
    res = sim.step(np.array([0.0, 3.0, 2.0, 1.0]))
    assert res.prefetch_bytes == 0.0 and not sim.resident[4 + 2]  # 2 would fit, but the pass ended


def test_any_rule_keeps_the_accounting_on_random_scores():
    # check=True asserts after every sub-step: used = resident bytes <= C, no locked item evicted
    for seed in range(12):
        sim = build(WORKLOADS[seed % 3], 48, 80, 0.3, 0.0, True, seed=seed, check=True,
                    prefetch_eviction="any")
        rng = np.random.default_rng(seed)
        while not sim.done:
            result = sim.step(rng.normal(0, 1, sim.n))
            assert result.prefetch_bytes <= result.window_bytes + 1e-9
        assert sim.totals["prefetch_bytes"] > 0
    with pytest.raises(ValueError, match="prefetch_eviction"):
        build("independent", 48, 80, 0.3, 0.0, True, seed=0, prefetch_eviction="all")
