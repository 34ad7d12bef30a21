"""AgentMemory-v1: the diffusion estimate is a function of past events only."""

from __future__ import annotations

import numpy as np
import pytest

from papergym.envs.llmserve import traces
from papergym.envs.llmserve.evaluate import AgentMemoryTaskV1
from papergym.envs.llmserve.traces import SHARE_MEAN, generate

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
