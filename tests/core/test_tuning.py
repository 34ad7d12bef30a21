"""The tuning protocol: the default is always a candidate (and wins when it is best, even where
the draws miss it), every agent draws its own candidates with the section's budget, a value at
the edge of those tried is flagged, and the harness keys the cache, never the agent."""

from __future__ import annotations

import math

import pytest

from papergym import cache
from papergym.tuning import (
    Choice,
    LogUniform,
    TuningRecord,
    Uniform,
    agent_stream,
    at_edge,
    cached_score,
    candidates,
    choose,
    grid_candidates,
)

SPACE = {"lr": LogUniform(1e-4, 1e-1), "momentum": Uniform(0.0, 0.9), "steps": Choice((0, 2, 4))}
DEFAULT = {"lr": 3e-3, "momentum": 0.5, "steps": 2, "width": 64}


def peaked_at_default(config):
    """A validation score that is best exactly at the default configuration."""
    return -abs(math.log(config["lr"] / DEFAULT["lr"])) - abs(config["momentum"] - 0.5) \
        - 0.1 * abs(config["steps"] - 2)


def test_the_default_is_chosen_when_it_is_best_even_where_the_draws_miss_it():
    tried = candidates(DEFAULT, SPACE, budget=8, seed=agent_stream("predcoding/deeppc"))
    assert tried[0] == DEFAULT and len(tried) == 8
    draws = tried[1:]
    best_draw = max(peaked_at_default(c) for c in draws)
    assert best_draw < -0.1  # no draw comes near the default: random search alone misses it
    scores = [peaked_at_default(c) for c in tried]
    assert tried[choose(scores)] == DEFAULT


def test_every_agent_draws_its_own_candidates_within_the_space_and_the_same_budget():
    a = candidates(DEFAULT, SPACE, 6, agent_stream("predcoding/pc"))
    b = candidates(DEFAULT, SPACE, 6, agent_stream("predcoding/deeppc"))
    assert len(a) == len(b) == 6 and a[0] == b[0] == DEFAULT
    assert [c["lr"] for c in a[1:]] != [c["lr"] for c in b[1:]]
    assert a == candidates(DEFAULT, SPACE, 6, agent_stream("predcoding/pc"))  # deterministic
    for c in a[1:] + b[1:]:
        assert 1e-4 <= c["lr"] <= 1e-1 and 0 <= c["momentum"] <= 0.9 and c["steps"] in (0, 2, 4)
        assert c["width"] == 64  # keys outside the space keep their default
    # Latin hypercube: each of the 5 strata of the log-lr axis holds exactly one draw
    strata = sorted(int(5 * math.log(c["lr"] / 1e-4) / math.log(1e3)) for c in a[1:])
    assert strata == [0, 1, 2, 3, 4]


def test_no_budget_means_the_default_alone_and_a_space_key_must_have_a_default():
    assert candidates(DEFAULT, SPACE, 1, 0) == [DEFAULT] == candidates(DEFAULT, SPACE, 0, 0)
    with pytest.raises(ValueError, match=r"\['beta'\] are not in the default"):
        candidates(DEFAULT, {"beta": Uniform(0, 1)}, 4, 0)


def test_ties_and_nan_go_to_the_earliest_candidate():
    assert choose([0.5, 0.7, 0.7]) == 1 and choose([float("nan"), 0.2]) == 1
    assert choose([0.3, 0.3]) == 0


def test_a_chosen_value_at_the_edge_of_the_values_tried_is_flagged():
    tried = [{"lr": lr, "rank": r, "name": "x"} for lr, r in [(1e-3, 4), (1e-2, 8), (3e-3, 16)]]
    assert at_edge(tried, tried[0]) == ["lr", "rank"]
    assert at_edge(tried, tried[2]) == ["rank"]
    assert at_edge(tried[:2], tried[0]) == []  # two values have no inside


def test_the_record_summarizes_budget_candidates_choice_and_edges():
    record = TuningRecord(budget=3)
    for lr, score in [(1e-3, 0.2), (3e-3, 0.9), (1e-2, 0.4)]:
        record.add({"lr": lr}, score)
    summary = record.summary()
    assert summary["budget"] == 3 and len(summary["candidates"]) == 3
    assert summary["chosen"] == {"lr": 3e-3} and summary["validation_score"] == 0.9
    assert summary["at_edge"] == []
    assert TuningRecord(budget=4).summary() is None
    with pytest.raises(TypeError, match="plain data"):
        record.add({"lr": object()}, 0.1)


def test_the_harness_keys_the_cache_by_agent_identity_and_config(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERGYM_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("PAPERGYM_CACHE", raising=False)
    setting, config = {"problem": "p"}, {"lr": 1e-3}

    def score(agent, value):
        return cached_score("test/tuning", setting, agent, config, lambda: value, code=())

    assert score("fam/victim@abc", 0.8) == 0.8
    # another agent asking for the same configuration gets its own run, not the victim's entry
    assert score("fam/cheater@def", 0.0) == 0.0
    assert score("fam/victim@abc", 0.1) == 0.8  # the victim's entry is untouched
    assert score(None, 0.3) == 0.3 == score(None, 0.3)  # no identity: never cached
    with pytest.raises(TypeError, match="mapping of settings"):
        cached_score("test/tuning", setting, "a@b", "fam/victim@abc(lr=0.001)", lambda: 0.0, ())
    assert cache.cache_dir() == tmp_path


def test_an_error_is_tuned_downwards():
    record = TuningRecord(budget=3, direction="min")
    for radius, rmse in [(2.0, 0.9), (4.0, 0.3), (8.0, 0.5)]:
        record.add({"radius": radius}, rmse)
    summary = record.summary()
    assert summary["chosen"] == {"radius": 4.0} and summary["validation_score"] == 0.3


def test_a_finite_space_is_evaluated_whole_with_the_default_first():
    options = {"width": (1, 3, 5), "theta": (0.3, 0.5)}
    grid = grid_candidates({"width": 3, "theta": 0.5, "depth": 2}, options)
    assert grid[0] == {"width": 3, "theta": 0.5, "depth": 2} and len(grid) == 6
    assert len({(c["width"], c["theta"]) for c in grid}) == 6  # no repeats, none missed
    assert all(c["depth"] == 2 for c in grid)  # keys outside the space keep the default
    # random draws from the same few values repeat some and miss others
    drawn = candidates({"width": 3, "theta": 0.5}, {k: Choice(v) for k, v in options.items()},
                       budget=6, seed=agent_stream("kgqa/tog_lite"))
    assert len({(c["width"], c["theta"]) for c in drawn}) < 6
    with pytest.raises(ValueError, match=r"\['width'\] are not among the options"):
        grid_candidates({"width": 4, "theta": 0.5}, options)
