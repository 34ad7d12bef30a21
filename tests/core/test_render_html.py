"""The HTML leaderboard from its templates: the claims board first, every per-claim key the
claims carry (and none required), submissions marked with their source hash on every page,
agents tied within rounding sharing a rank, each agent's metered budgets, and the index page
with paper titles, tiers and dates."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import textwrap

import pytest

from papergym.benchmarks.runner import rows_for, run_benchmark
from papergym.leaderboard.render_html import claim_view, render_html, render_index_html, verdict_class
from papergym.leaderboard.report import build_report
from papergym.leaderboard.store import Store
from papergym.leaderboard.summary import summarize
from tests.conftest import TOY_SPEC

# the greedy agent's policy with another name: its scores equal greedy's to the last digit
PLUGIN = textwrap.dedent("""
    import numpy as np
    from papergym import Agent

    class Twin(Agent):
        id, family, role, paper = "twin", "fixture", "method", "mine"

        def solve(self, view, budget, seed):
            env = view.make_env()
            env.reset(seed=seed)
            for _ in range(4):
                env.step(env.action_space.sample())
            return lambda obs: np.array([1.0 * (obs[1] - obs[0])], dtype=np.float32)
""")

FULL_CLAIM = {
    "id": "C1", "statement": "greedy beats zero on every horizon", "kind": "compare",
    "verdict": "holds, not specific", "role": "paper", "effect": 0.4891, "ci": (0.2321, 0.8972),
    "effect_name": "Hodges-Lehmann shift", "ci_level": 0.9, "p_value": 0.0031, "n_units": 6,
    "n_declared": 8, "requires": ["T0"], "detail": "greedy > zero; Wilcoxon signed-rank",
    "family": "headline-1", "sesoi": 0.1, "power": 0.83, "unit": "seed", "n_clusters": 3,
    "icc": 0.12, "design_effect": 1.24, "post_hoc": True, "matched": ["train_steps", "horizon"],
    "control": "greedy_no_lookahead", "control_reason": "greedy without its lookahead",
    "control_verdict": "holds",
}


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory):
    """The toy benchmark at smoke with the plug-in ``twin`` beside its built-in agents."""
    from papergym.benchmarks.spec import load_spec

    tmp = tmp_path_factory.mktemp("render")
    plugin = tmp / "twin.py"
    plugin.write_text(PLUGIN)
    ref = f"{plugin}:Twin"
    spec = load_spec(TOY_SPEC)
    store = tmp / "s.sqlite"
    run_benchmark(spec, "smoke", store=store, workers=2, extra_agents=[ref], spec_path=TOY_SPEC)
    with Store(store) as db:
        trials, rows = rows_for(spec, "smoke", db, extra_agents=[ref])
    return spec, trials, rows, hashlib.sha256(PLUGIN.encode()).hexdigest()


def _with_claim_keys(report):
    """The report with every optional key the claims, checks and rows may carry."""
    first = report.verdicts[0]
    for key, value in FULL_CLAIM.items():
        if key != "id":
            setattr(first, key, value)
    from papergym.leaderboard.claims import SectionCheck

    check = SectionCheck("reach", trivial="zero", reference="oracle", status="discriminative",
                         effect=2.0, ci=(1.5, 2.5), ci_level=0.9, n_units=6)
    report.sections[0].check = check
    # the dict papergym.leaderboard.fairness.margin_over returns
    check.method_vs_trivial = {"agent": "greedy", "trivial": "zero", "ci_level": 0.9,
                               "effect": 1.5, "ci_low": 1.1, "ci_high": 1.9, "beats": True,
                               "unit": "trial", "estimator": "Hodges-Lehmann", "n_units": 6,
                               "n_items": None, "underpowered": False}
    check.possibly_broken_baselines = ["random"]
    return report


def test_plugin_rows_carry_their_source_hash(toy_run):
    _, _, rows, sha = toy_run
    twin = [r for r in rows if r.agent == "twin"]
    assert len(twin) == 6 and all(r.provenance["plugin"] == {"source_sha256": sha} for r in twin)
    assert not any("plugin" in r.provenance for r in rows if r.agent != "twin")


def test_only_a_sha256_marks_a_submission():
    from types import SimpleNamespace

    from papergym.leaderboard.entrants import submission_hashes

    def row(agent, plugin):
        return SimpleNamespace(agent=agent, provenance={"plugin": plugin})

    sha = "ab" * 32
    rows = [row("a", {"source_sha256": sha}), row("b", {"source_sha256": '"><script>'}),
            row("c", "not a dict"), SimpleNamespace(agent="d", provenance={})]
    assert submission_hashes(rows) == {"a": sha}


def test_agents_tied_within_rounding_share_a_rank(toy_run):
    spec, trials, rows, _ = toy_run
    scores = {s.agent: s for s in build_report(spec, "smoke", trials, rows).sections[0].scores}
    assert scores["twin"].iqm == scores["greedy"].iqm
    assert scores["twin"].rank == scores["greedy"].rank == 1
    # competition ranking: the next agent is third, not second
    assert sorted(s.rank for s in scores.values() if s.rank is not None)[:3] == [1, 1, 3]


def test_page_puts_the_claims_board_first_and_marks_the_submission(toy_run):
    spec, trials, rows, sha = toy_run
    report = _with_claim_keys(build_report(spec, "smoke", trials, rows))
    page = render_html(report)
    bh_holds = summarize(report).bh_holds  # the engine's count (papergym.leaderboard.families)
    assert bh_holds is not None
    assert page.index('id="claims"') < page.index('id="section-reach"') < page.index('id="failed"')
    # the submission: its badge and hash in the headline, its table row and its budget row
    assert page.count('class="badge submission"') >= 3
    assert page.count(f'<span class="hash" title="sha256 of the plug-in\'s source">{sha[:12]}') >= 3
    assert 'class="method tied submission"' in page
    # budgets: what the toy problem meters (env_steps, 64 at smoke) and the most used (4)
    assert "env_steps ≤ 64 (used ≤ 4)" in page
    # the optional per-claim, per-check and per-benchmark keys
    for text in ("holds-not-specific", "headline-1", "smallest effect of interest", "0.83",
                 "seed", "intra-cluster correlation", "1.24", "train_steps, horizon",
                 "greedy without its lookahead", "greedy_no_lookahead",
                 "p = 0.0031 toward the claim", "0.489 [0.232, 0.897]", "1.5 [1.1, 1.9] (beats it)",
                 "Possibly broken baselines (not above the trivial agent): random",
                 f"Benjamini–Hochberg over the paper claims: <b>{bh_holds}</b>"):
        assert text in page, text


def test_claim_view_shows_every_key_and_needs_none_but_three():
    view = claim_view(FULL_CLAIM)
    assert view["verdict"] == "holds, not specific" and view["cls"] == "holds-not-specific"
    assert view["effect"] == "0.489 [0.232, 0.897]"
    assert view["effect_label"] == "Hodges-Lehmann shift, 90% CI"
    assert view["p"] == "p = 0.0031 toward the claim"
    assert view["units"] == "6 of 8 seeds"
    assert view["control"] == {"verdict": "holds", "cls": "holds", "id": "greedy_no_lookahead"}
    assert view["reason"] == "greedy > zero"
    details = dict(view["details"])
    assert details["post hoc"] == "yes" and details["clusters"] == "3"
    assert details["matched settings"] == "train_steps, horizon"
    assert details["reason"] == "greedy > zero; Wilcoxon signed-rank"
    assert "control" not in details  # shown in its column
    bare = claim_view({"id": "X", "statement": "s", "verdict": "inconclusive"})
    assert bare["effect"] == "–" and bare["p"] == "" and bare["control"] is None
    assert bare["details"] == [] and bare["role"] == "paper"
    assert verdict_class("<script>") == "other"


def test_a_long_reason_is_cut_to_one_line_with_the_whole_text_in_details():
    long = "x" * 400 + "; rest"
    view = claim_view({"id": "X", "statement": "s", "verdict": "fails", "detail": long})
    assert len(view["reason"]) == 160 and view["reason"].endswith("…")
    assert dict(view["details"])["reason"] == long


def test_index_lists_title_tier_date_and_tally(tmp_path):
    counts = {"holds": 2, "fails": 1, "inconclusive": 0, "underpowered": 0, "not evaluable": 0,
              "other": 1}
    meta = {"title": "<b>A paper</b>", "tier": "standard", "last_trial": 1796195489.5}
    page = render_index_html([{"name": "aero", "counts": counts, "meta": meta},
                              {"name": "bare", "counts": counts}])
    assert "&lt;b&gt;A paper&lt;/b&gt;" in page and "<b>A paper</b>" not in page
    assert "<td>standard</td><td>2026-12-02</td>" in page
    assert '<td class="num holds">2</td><td class="num fails">1</td>' in page
    # a verdict the tally learns later gets its own column instead of vanishing
    newer = render_index_html([{"name": "x", "counts": {**counts, "holds, not specific": 4}}])
    assert '<th class="holds-not-specific">holds, not specific</th>' in newer
    assert '<td class="num holds-not-specific">4</td>' in newer
    # a throughput table that misses current problems is left out, not shown stale
    stale = tmp_path / "throughput.json"
    stale.write_text(json.dumps({"problems": {"papergym/FedRounds-v0": {"steps_per_second": 9.0}},
                                 "provenance": {}}))
    assert "Environment throughput" not in render_index_html([], stale)


def test_written_report_folder_feeds_the_index(toy_run, tmp_path):
    from papergym.leaderboard.publish import report_folders
    from papergym.leaderboard.render_html import write_report

    spec, trials, rows, _ = toy_run
    report = build_report(spec, "smoke", trials, [dataclasses.replace(r) for r in rows])
    write_report(report, tmp_path / "toy")
    (entry,) = report_folders(tmp_path)
    assert entry["meta"]["title"] == "Harness fixture" and entry["meta"]["tier"] == "smoke"
    page = render_index_html([entry])
    assert "Harness fixture" in page and "<td>smoke</td>" in page


def test_text_pages_mark_the_submission_and_list_budgets(toy_run):
    import io

    from papergym.leaderboard.render_markdown import render_markdown
    from papergym.leaderboard.render_terminal import print_leaderboard

    spec, trials, rows, sha = toy_run
    report = build_report(spec, "smoke", trials, rows)
    md = render_markdown(report)
    assert f"| 1 | twin [submission {sha[:12]}] | method |" in md
    assert f"- twin [submission {sha[:12]}]: env_steps ≤ 64 (used ≤ 4)" in md
    out = io.StringIO()
    print_leaderboard(report, out)
    assert f"twin [submission {sha[:12]}]" in out.getvalue()
    assert "budget of zero: env_steps ≤ 64 (used ≤ 0)" in out.getvalue()
