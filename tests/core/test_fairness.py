"""Fair and specific claims: matched settings are checked before a run, a claim that its
control also passes is `holds, not specific` (never a hold), every section reports its
method's margin over the trivial agent, and a baseline no better than trivial is flagged."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from papergym.benchmarks.spec import (
    BenchmarkSpec,
    ClaimSpec,
    MetricSpec,
    ProblemSection,
    SpecError,
    TierSpec,
    load_spec,
)
from papergym.benchmarks.spec_checks import check_spec
from papergym.leaderboard.claims import evaluate_claims, tally
from papergym.leaderboard.fairness import UNBEATEN, method_note, section_checks
from papergym.leaderboard.store import Row
from tests.conftest import TOY_SPEC

pytestmark = pytest.mark.usefixtures("toy_spec")  # registers the fixture problem and agents
# --- matched settings: refused before any trial, naming the file and the claim


def _toy_with(tmp_path, claim, extra_agents=()):
    data = yaml.safe_load(TOY_SPEC.read_text())
    data["imports"] = [str(TOY_SPEC.parent / "toy_problem.py")]
    data["problems"][0]["agents"] += list(extra_agents)
    data["claims"] = [{"id": "M1", "statement": "greedy beats its hot twin", "problem": "reach",
                       "kind": "compare", "agent": "greedy", **claim}]
    path = tmp_path / "bench.yaml"
    path.write_text(yaml.safe_dump(data))
    return load_spec(path, strict_power=False), path


HOT = {"id": "greedy", "label": "greedy_hot", "config": {"gain": 2.0}}


def test_a_matched_key_the_agents_set_differently_is_refused_naming_file_and_claim(tmp_path):
    spec, path = _toy_with(tmp_path, {"baseline": "greedy_hot", "matched": ["gain"]}, [HOT])
    with pytest.raises(SpecError) as err:
        check_spec(spec, path)
    message = str(err.value)
    assert str(path) in message and "claims.0.matched.0" in message and "claim M1" in message
    assert "greedy=1.0" in message and "greedy_hot=2.0" in message


def test_a_matched_key_differing_only_in_one_tiers_config_is_refused_at_that_tier(tmp_path):
    twin = {"id": "greedy", "label": "greedy_twin", "tier_config": {"standard": {"gain": 3.0}}}
    spec, path = _toy_with(tmp_path, {"baseline": "greedy_twin", "matched": ["gain"]}, [twin])
    with pytest.raises(SpecError, match="at tier standard"):
        check_spec(spec, path)
    spec, path = _toy_with(tmp_path, {"baseline": "greedy_twin", "matched": ["gain"],
                                      "tiers": ["smoke"]}, [twin])
    check_spec(spec, path)  # evaluated at smoke only, where both resolve to gain=1.0


def test_matched_keys_held_equal_pass_and_cell_kwargs_are_matched_by_the_harness(tmp_path):
    same = {"id": "greedy", "label": "greedy_same", "config": {"gain": 1.0}}
    spec, path = _toy_with(tmp_path, {"baseline": "greedy_same", "matched": ["gain", "horizon"]},
                           [same])
    check_spec(spec, path)


def test_a_matched_key_an_agent_does_not_have_is_refused(tmp_path):
    spec, path = _toy_with(tmp_path, {"baseline": "zero", "matched": ["gain"]})
    with pytest.raises(SpecError, match="agent 'zero' .* has no setting 'gain'"):
        check_spec(spec, path)


def test_a_matched_cell_kwarg_paired_across_different_cells_is_refused(tmp_path):
    spec, path = _toy_with(tmp_path, {"baseline": "zero", "matched": ["horizon"],
                                      "agent_at": {"horizon": 8}, "baseline_at": {"horizon": 16}})
    with pytest.raises(SpecError, match="claim M1: 'horizon' is matched"):
        check_spec(spec, path)


@pytest.mark.parametrize("claim, field", [
    ({"control": "none"}, "control_reason"),
    ({"control": "none", "control_reason": "two\nlines"}, "control_reason"),
    ({"control_reason": "no control named"}, "control_reason"),
    ({"control": "greedy"}, "control"),
    ({"control": "nobody", "control_reason": "x"}, "control"),
])
def test_control_fields_are_validated(tmp_path, claim, field):
    with pytest.raises(SpecError, match=field):
        _toy_with(tmp_path, {"baseline": "zero", **claim})


# --- controls: a claim its control also passes is not specific


SECTION = ProblemSection(
    name="s", problem="papergym/FixtureReach-v0", metric=MetricSpec(name="score", direction="max"),
    tiers={"smoke": TierSpec()},
    agents=[{"id": "method"}, {"id": "ablated"}, {"id": "base"}, {"id": "weak"}, {"id": "zero"},
            {"id": "oracle"}],
)
ROLES = {"method": "method", "ablated": "method", "base": "baseline", "weak": "baseline",
         "zero": "baseline", "oracle": "reference"}


def rows(agent, values):
    return [Row(key=f"{agent}-{seed}", benchmark="t", section="s", tier="smoke", problem_id="p",
                problem_kwargs={}, agent=agent, agent_id=agent, agent_role=ROLES[agent],
                agent_config={}, seed=seed, status="ok", metrics={"score": float(v)})
            for seed, v in enumerate(values)]


def spec_of(*claims, **section):
    return BenchmarkSpec(name="t", family="fixture", paper={"key": "k", "title": "t"},
                         problems=[SECTION.model_copy(update=section)], claims=list(claims))


def beats_base(**kw):
    return ClaimSpec(id="C1", statement="method beats base", problem="s", kind="compare",
                     agent="method", baseline="base", **kw)


NOISE = np.random.default_rng(7).normal(0, 0.01, size=12)
BASE = rows("base", 0.5 + NOISE)


def test_a_claim_its_control_also_passes_holds_not_specific_and_is_not_tallied_as_a_hold():
    data = BASE + rows("method", 0.8 + NOISE[::-1]) + rows("ablated", 0.75 + NOISE)
    [verdict] = evaluate_claims(spec_of(beats_base(control="ablated")), "smoke", data)
    assert verdict.verdict == "holds, not specific"
    assert verdict.control == "ablated" and verdict.control_verdict == "holds"
    assert "the control ablated passes the claim too" in verdict.detail
    counts = tally([verdict])
    assert counts["holds"] == 0 and counts["other"] == 1  # tallied beside the unevaluated
    for key in ("matched", "control", "control_reason", "control_verdict"):
        assert key in verdict.as_dict()


def test_a_claim_its_control_fails_holds_with_the_controls_verdict_beside_it():
    data = BASE + rows("method", 0.8 + NOISE[::-1]) + rows("ablated", 0.3 + NOISE)
    [verdict] = evaluate_claims(spec_of(beats_base(control="ablated", matched=["steps"])),
                                "smoke", data)
    assert verdict.verdict == "holds" and verdict.control_verdict == "fails"
    assert verdict.matched == ["steps"] and tally([verdict])["holds"] == 1


def test_control_none_carries_its_reason_and_no_control_verdict():
    data = BASE + rows("method", 0.8 + NOISE[::-1])
    claim = beats_base(control="none", control_reason="a pure comparison to a baseline")
    [verdict] = evaluate_claims(spec_of(claim), "smoke", data)
    assert verdict.verdict == "holds" and verdict.control == "none"
    assert verdict.control_reason == "a pure comparison to a baseline"
    assert verdict.control_verdict is None


# --- the method against the trivial agent; the strawman guard


def test_method_margin_over_trivial_and_a_baseline_at_trivial_is_possibly_broken():
    data = (rows("zero", NOISE) + rows("method", 0.8 + NOISE[::-1]) + rows("oracle", 1 + NOISE)
            + rows("base", 0.5 + NOISE) + rows("weak", NOISE[::-1]))
    spec = spec_of(beats_base(), trivial="zero", reference="oracle")
    check = section_checks(spec, "smoke", data)["s"]
    assert check.status == "discriminative" and check.method == "method"
    margin = check.method_vs_trivial
    assert margin["beats"] and margin["ci_low"] > 0.7 and margin["effect"] == pytest.approx(0.8, abs=0.02)
    assert check.possibly_broken_baselines == ["weak"]  # base is 0.5 above trivial: not flagged
    assert {"method_vs_trivial", "possibly_broken_baselines"} <= set(check.as_dict())


def test_paper_claims_are_marked_where_the_method_does_not_beat_trivial():
    # the reference discriminates, the method sits at the trivial agent's level
    data = (rows("zero", NOISE) + rows("method", NOISE[::-1]) + rows("oracle", 1 + NOISE)
            + rows("base", NOISE - 0.3) + rows("weak", NOISE))
    sanity = ClaimSpec(id="S", statement="x", problem="s", kind="compare", agent="method",
                       baseline="base", role="sanity")
    spec = spec_of(beats_base(), sanity, trivial="zero", reference="oracle", method="method")
    check = section_checks(spec, "smoke", data)["s"]
    assert check.method_vs_trivial["beats"] is False
    assert check.possibly_broken_baselines == []  # only judged where the method beats trivial
    paper, sanity_verdict = evaluate_claims(spec, "smoke", data)
    assert paper.verdict == "holds" and paper.detail.startswith(UNBEATEN)
    assert not sanity_verdict.detail.startswith(UNBEATEN)


def test_the_method_is_the_role_method_agent_named_most_by_the_paper_claims():
    data = rows("zero", NOISE) + rows("method", 0.8 + NOISE) + rows("ablated", 0.2 + NOISE)
    other = ClaimSpec(id="C2", statement="x", problem="s", kind="threshold", agent="method",
                      op=">", value=0.1)
    spec = spec_of(beats_base(), other, trivial="zero", reference="oracle")
    assert section_checks(spec, "smoke", data)["s"].method == "method"


def test_markdown_and_terminal_show_the_control_verdict_and_the_methods_margin():
    import io

    from papergym.leaderboard.render_markdown import render_markdown
    from papergym.leaderboard.render_terminal import print_claims, print_leaderboard
    from papergym.leaderboard.report import build_report

    data = (rows("zero", NOISE) + rows("method", 0.8 + NOISE[::-1]) + rows("oracle", 1 + NOISE)
            + rows("base", 0.5 + NOISE) + rows("weak", NOISE[::-1]) + rows("ablated", 0.75 + NOISE))
    spec = spec_of(beats_base(control="ablated", matched=["top_p"]), trivial="zero",
                   reference="oracle")
    report = build_report(spec, "smoke", data, data)
    page = render_markdown(report)
    assert "**holds, not specific**" in page and "control ablated: holds; matched: top_p" in page
    assert "Method: `method` beats `zero` by 0.8" in page and "`weak`" in page
    out = io.StringIO()
    print_leaderboard(report, out)
    print_claims(report, out)
    assert "possibly broken baseline" in out.getvalue() and "control ablated: holds" in out.getvalue()


def test_the_markdown_table_says_how_many_configs_were_tuned_and_which_sat_at_an_edge():
    from papergym.leaderboard.fairness import tuning_note

    data = rows("method", 0.8 + NOISE[:3])
    for r, edge in zip(data, (["lr"], [], ["lr", "rank"])):
        r.provenance["tuning"] = {"budget": 4, "candidates": [], "chosen": {}, "at_edge": edge,
                                  "validation_score": 0.5}
    assert tuning_note(data, "method") == ("4 configs tuned; chosen at the edge of the range "
                                           "tried in 2 of 3 trials (lr, rank)")
    assert tuning_note(data, "base") == ""


def test_check_specs_warns_of_undeclared_controls_and_matched_keys_and_tuned_edges():
    from papergym.benchmarks.matched import edge_warnings, fairness_warnings

    open_claim = beats_base()
    declared = beats_base(control="none", control_reason="a pure comparison",
                          matched=["steps"]).model_copy(update={"id": "C2"})
    warnings = fairness_warnings(spec_of(open_claim, declared))
    assert warnings == ["C1: names no control (the method without its mechanism, or `control: "
                        "none` with control_reason)",
                        "C1: a compare claim that holds no setting matched (matched: [...])"]
    rows = [{"section": "s", "agent": "nsr", "provenance": {"tuning": {"at_edge": edge}}}
            for edge in (["lr"], ["lr"], [])] + [{"section": "s", "agent": "grpo",
                                                  "provenance": {"tuning": {"at_edge": []}}}]
    assert edge_warnings(rows) == ["s/nsr: tuned value at the edge of the range tried in 2 of 3 "
                                   "trials (lr); widen the search space"]


def test_a_change_claim_holds_each_side_and_its_reference_matched_apart(tmp_path):
    hot2 = {"id": "greedy", "label": "greedy_hot2", "config": {"gain": 2.0}}
    same = {"id": "greedy", "label": "greedy_same", "config": {"gain": 1.0}}
    claim = {"baseline": "greedy_hot2", "agent": "greedy_hot", "agent_ref": "greedy",
             "baseline_ref": "greedy_same", "matched": ["gain"]}
    spec, path = _toy_with(tmp_path, claim, [HOT, hot2, same])
    check_spec(spec, path)  # hot vs hot2 at 2.0, their references at 1.0
    spec, path = _toy_with(tmp_path, {**claim, "baseline_ref": "greedy_hot2"}, [HOT, hot2, same])
    with pytest.raises(SpecError, match="greedy=1.0, greedy_hot2=2.0"):
        check_spec(spec, path)


def test_every_shipped_paper_claim_names_its_control_and_every_compare_its_matched_keys():
    from papergym.benchmarks.matched import fairness_warnings
    from papergym.benchmarks.spec import find_spec, spec_paths

    undeclared = {name: fairness_warnings(find_spec(name)) for name in spec_paths()}
    assert {name: w for name, w in undeclared.items() if w} == {}


# --- the margin over trivial follows the verdicts' design: per-trial items cluster by seed

SEED_SHIFTS = np.array([1.0, -0.8, 1.2, -0.9, 1.1, 0.9])  # the method's gain varies by seed


def item_rows(agent, per_seed):
    """One trial per seed whose 20 items carry the score (one artifact scores them all)."""
    return [Row(key=f"{agent}-{seed}", benchmark="t", section="s", tier="smoke", problem_id="p",
                problem_kwargs={}, agent=agent, agent_id=agent, agent_role=ROLES[agent],
                agent_config={}, seed=seed, status="ok", metrics={"score": float(np.mean(v))},
                units=[{"instance": i, "score": float(x)} for i, x in enumerate(v)])
            for seed, v in enumerate(per_seed)]


def item_data():
    rng = np.random.default_rng(3)
    trivial = rng.normal(0, 0.01, size=(6, 20))
    method = trivial + SEED_SHIFTS[:, None] + rng.normal(0, 0.01, size=(6, 20))
    return item_rows("zero", trivial) + item_rows("method", method), method - trivial


def test_items_of_one_artifact_per_seed_give_the_seed_clustered_margin_of_the_engine():
    data, diffs = item_data()
    over_zero = ClaimSpec(id="C1", statement="method beats zero", problem="s", kind="compare",
                          agent="method", baseline="zero", unit="instance")
    spec = spec_of(over_zero, trivial="zero",
                   reference="method", tiers={"smoke": TierSpec(units_per_trial=20)})
    margin = section_checks(spec, "smoke", data)["s"].method_vs_trivial
    assert margin["unit"] == "seed" and margin["n_units"] == 6 and margin["n_items"] == 120
    assert margin["effect"] == pytest.approx(diffs.mean(axis=1).mean())
    # two of six seeds lose about as much as the others gain: no margin at the seed level
    assert margin["ci_low"] < 0 < margin["ci_high"] and margin["beats"] is False
    # the very statistic of the section's `unit: instance` verdict on the same pair
    [verdict] = evaluate_claims(spec, "smoke", data)
    assert verdict.unit == "seed" and verdict.n_clusters == 6
    assert verdict.effect == pytest.approx(margin["effect"])
    assert verdict.ci == pytest.approx((margin["ci_low"], margin["ci_high"]))


def test_items_count_as_units_only_where_the_section_declares_them_independent():
    data, _ = item_data()
    spec = spec_of(beats_base(), trivial="zero", reference="method", independent_items=True,
                   tiers={"smoke": TierSpec(units_per_trial=20)})
    margin = section_checks(spec, "smoke", data)["s"].method_vs_trivial
    # 120 items taken as independent: 80 of them gain about 1, so Hodges-Lehmann sees a margin
    assert margin["unit"] == "item" and margin["n_units"] == 120
    assert margin["estimator"] == "Hodges-Lehmann" and margin["beats"] is True


def test_a_seed_clustered_margin_needs_five_seeds_to_beat_trivial():
    data, _ = item_data()
    four = [r for r in data if r.seed < 4]
    spec = spec_of(beats_base(), trivial="zero", reference="method",
                   tiers={"smoke": TierSpec(units_per_trial=20)})
    margin = section_checks(spec, "smoke", four)["s"].method_vs_trivial
    assert margin["n_units"] == 4 and margin["underpowered"] and not margin["beats"]
    assert margin["ci_low"] == -np.inf  # 2^-4 > alpha: the sign-flip bound cannot be finite
    # the page says why: too few seeds, not a method that lost
    check = section_checks(spec, "smoke", four)["s"]
    assert "cannot be shown (too few units) to beat" in method_note(check)
