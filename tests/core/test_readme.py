"""The README's benchmarks table is generated from the registry, never typed."""

from __future__ import annotations

from papergym.cli import benchmarks_markdown
from papergym.readme import README, current_table


def test_readme_table_matches_registry():
    assert current_table(README.read_text()) == benchmarks_markdown().strip(), (
        "README.md's benchmarks table is stale: run `make readme`"
    )
