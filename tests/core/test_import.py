"""Re-scoring without re-running: exported rows imported into a fresh store are found by
their keys, so a run over them skips every trial."""

from __future__ import annotations

import pytest

from papergym.benchmarks.runner import rows_for, run_benchmark
from papergym.cli import main
from papergym.leaderboard.store import Store, export_jsonl
from tests.conftest import TOY_SPEC


def test_imported_rows_are_skipped_by_the_next_run(tmp_path, toy_spec, capsys):
    first = tmp_path / "first.sqlite"
    run_benchmark(toy_spec, "smoke", store=first, workers=1, spec_path=TOY_SPEC)
    with Store(first) as db:
        _, rows = rows_for(toy_spec, "smoke", db)
    exported = export_jsonl(rows, tmp_path / "trials.jsonl")
    second = tmp_path / "second.sqlite"
    assert main(["import", str(exported), "--store", str(second)]) == 0
    assert f"imported {len(rows)} rows" in capsys.readouterr().out
    again = run_benchmark(toy_spec, "smoke", store=second, workers=1, spec_path=TOY_SPEC)
    assert again.ran == 0 and again.skipped == again.total == len(rows)
    with Store(second) as db:
        _, imported = rows_for(toy_spec, "smoke", db)
    assert sorted((r.key, r.metrics["return"]) for r in imported) == \
        sorted((r.key, r.metrics["return"]) for r in rows)


def test_a_line_that_is_not_a_row_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"key": "k"}\n')
    from papergym.leaderboard.store import import_jsonl

    with Store(tmp_path / "s.sqlite") as db, pytest.raises(ValueError, match=r"bad.jsonl:1"):
        import_jsonl(bad, db)
