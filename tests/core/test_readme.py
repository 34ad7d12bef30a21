"""The README's generated blocks come from the registry and the published verdicts, never typed."""

from __future__ import annotations

from papergym.cli import benchmarks_markdown
from papergym.readme import README, VERDICT_BLOCK, current_table, verdicts_markdown


def test_readme_table_matches_registry():
    assert current_table(README.read_text()) == benchmarks_markdown().strip(), (
        "README.md's benchmarks table is stale: run `make readme`"
    )


def test_readme_verdict_tally_matches_the_published_claims():
    assert current_table(README.read_text(), VERDICT_BLOCK) == verdicts_markdown().strip(), (
        "README.md's verdict tally is stale: run `make readme` after `papergym publish`"
    )


def test_tally_counts_paper_claims_only(tmp_path):
    folder = tmp_path / "bench"
    folder.mkdir()
    (folder / "claims.json").write_text(
        '[{"verdict": "holds", "role": "paper"}, {"verdict": "holds", "role": "sanity"},'
        ' {"verdict": "fails"}, {"verdict": "not evaluable", "role": "paper"},'
        ' {"verdict": "fails", "role": "diagnostic"}]')
    row = verdicts_markdown(tmp_path).splitlines()[-1]
    assert row == ("| [`bench`](leaderboard/published/bench/README.md) | 3 | 1 | 1 | 0 | 0 | 1 | "
                   "1 of 3 | 1 | not split (published before roles) |")
    (folder / "claims.json").write_text(
        '[{"verdict": "holds", "role": "paper"}, {"verdict": "holds", "role": "sanity"},'
        ' {"verdict": "fails", "role": "diagnostic"}, {"verdict": "not evaluable", "role": "paper"}]')
    row = verdicts_markdown(tmp_path).splitlines()[-1]
    assert row == ("| [`bench`](leaderboard/published/bench/README.md) | 2 | 1 | 0 | 0 | 0 | 1 | "
                   "1 of 2 | 1 | 1 / 1 |")
