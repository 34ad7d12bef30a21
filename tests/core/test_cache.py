"""papergym.cache: one build per key across processes, keys from code and config, the off
switch, ls / clear, and the runner's prepare phase."""

from __future__ import annotations

import multiprocessing as mp
from pathlib import Path

import pytest

from papergym import cache

FIXTURE = Path(__file__).parents[1] / "fixtures" / "cached_problem.py"


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERGYM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PAPERGYM_CACHE", raising=False)
    cache.forget()
    yield tmp_path / "cache"
    cache.forget()


def logged_entry(log: Path, value: float, namespace: str = "test/value") -> cache.Entry:
    def build() -> float:
        with log.open("a") as handle:
            handle.write("built\n")
        import time

        time.sleep(0.3)  # the second process asks while the first is still building
        return value

    return cache.Entry(namespace, {"value": value}, build=build, code=(Path(__file__),))


def _get_in_child(entry: cache.Entry, out: Path) -> None:
    out.write_text(repr(cache.get(entry)))


def test_two_processes_build_an_entry_once(cache_dir, tmp_path):
    log = tmp_path / "builds.log"
    entry = logged_entry(log, 4.25)
    ctx = mp.get_context("fork")
    procs = [ctx.Process(target=_get_in_child, args=(entry, tmp_path / f"out{i}")) for i in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    assert log.read_text().splitlines() == ["built"]  # the lock made the second one wait
    assert [(tmp_path / f"out{i}").read_text() for i in range(2)] == ["4.25", "4.25"]
    cache.forget()
    assert cache.get(entry) == 4.25 and log.read_text().count("built") == 1  # read from disk


def test_key_changes_with_config_and_code(cache_dir, tmp_path):
    source = tmp_path / "recipe.py"
    source.write_text("STEPS = 10\n")
    base = cache.Entry("test/key", {"seed": 1}, build=lambda: 1, code=(source,))
    assert cache.Entry("test/key", {"seed": 1}, build=lambda: 2, code=(source,)).key == base.key
    assert cache.Entry("test/key", {"seed": 2}, build=lambda: 1, code=(source,)).key != base.key
    assert cache.Entry("test/other", {"seed": 1}, build=lambda: 1, code=(source,)).key != base.key
    # config order does not matter; a default written out is the caller's business
    assert (cache.Entry("test/key", {"a": 1, "b": 2}, build=int).key
            == cache.Entry("test/key", {"b": 2, "a": 1}, build=int).key)
    source.write_text("STEPS = 11\n")
    cache._source_digest.cache_clear()  # a new process sees the edited file
    assert cache.Entry("test/key", {"seed": 1}, build=lambda: 1, code=(source,)).key != base.key


def test_a_changed_entry_is_built_again_and_the_old_one_never_read(cache_dir, tmp_path):
    log = tmp_path / "builds.log"
    assert cache.get(logged_entry(log, 1.0)) == 1.0
    assert cache.get(logged_entry(log, 2.0)) == 2.0
    assert log.read_text().count("built") == 2
    assert len(cache.listing("test/value")) == 2


def test_off_builds_in_memory_and_writes_nothing(cache_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERGYM_CACHE", "off")
    log = tmp_path / "builds.log"
    entry = logged_entry(log, 7.0)
    assert cache.get(entry) == 7.0 and cache.get(entry) == 7.0  # memory within a process
    assert not cache_dir.exists()
    assert cache.missing([entry]) == [] and cache.build_missing([entry]) == []
    cache.forget()
    assert cache.get(entry) == 7.0
    assert log.read_text().count("built") == 2  # no disk: a fresh process builds again


def test_a_bad_switch_value_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("PAPERGYM_CACHE", "/tmp/somewhere")
    with pytest.raises(ValueError, match="PAPERGYM_CACHE_DIR"):
        cache.enabled()


def test_a_damaged_entry_is_rebuilt(cache_dir, tmp_path):
    log = tmp_path / "builds.log"
    entry = logged_entry(log, 3.0)
    cache.get(entry)
    entry.path().write_bytes(b"not a pickle")
    cache.forget()
    assert cache.get(entry) == 3.0 and log.read_text().count("built") == 2


def test_cli_ls_and_clear(cache_dir, tmp_path, capsys):
    from papergym.cli import main

    cache.get(logged_entry(tmp_path / "log", 1.0, namespace="fam/a"))
    cache.get(logged_entry(tmp_path / "log", 2.0, namespace="fam/b"))
    assert main(["cache", "ls"]) == 0
    out = capsys.readouterr().out
    assert "2 entries" in out and "fam/a" in out and "fam/b" in out and '{"value":2.0}' in out
    assert main(["cache", "clear", "fam/a"]) == 0
    assert "removed 1 entries" in capsys.readouterr().out
    assert [e.namespace for e in cache.listing()] == ["fam/b"]
    assert main(["cache", "clear"]) == 0
    assert cache.listing() == []


def cached_spec(tmp_path: Path, cell: str, agents: str) -> Path:
    """A benchmark of FixtureCached-v0 at smoke: 3 seeds, ``cell`` added to the tier."""
    spec_path = tmp_path / "cached.yaml"
    spec_path.write_text(f"""
name: cached
family: fixture_cache
paper: {{key: fixture, title: "cache fixture"}}
imports: [{FIXTURE}]
problems:
  - name: ref
    problem: papergym/FixtureCached-v0
    metric: {{name: score, direction: max}}
    tiers:
      smoke: {{seeds: 3, timeout_s: 30{", " + cell if cell else ""}}}
    agents: [{agents}]
claims: []
""")
    return spec_path


def test_prepare_builds_each_entry_once_before_the_trials(cache_dir, tmp_path, monkeypatch):
    from papergym.benchmarks.runner import run_benchmark
    from papergym.benchmarks.spec import load_spec
    from papergym.leaderboard.store import Store

    log = tmp_path / "builds.log"
    monkeypatch.setenv("PAPERGYM_TEST_BUILD_LOG", str(log))
    spec_path = cached_spec(tmp_path, "grid: {offset: [0.0, 0.5]}", "exact, off_by_one")
    spec = load_spec(spec_path)
    with Store(tmp_path / "results.sqlite") as store:
        summary = run_benchmark(spec, "smoke", store=store, workers=2, spec_path=spec_path)
        rows = store.all(benchmark="cached")
    assert summary.ran == 12 and summary.failed == 0 and summary.prepare_failures == []
    # 3 seeds x 2 offsets: six references, each built once, none of them inside a trial
    assert len(log.read_text().splitlines()) == 6
    assert all(r.metrics["builds_in_trial"] == 0 for r in rows)
    assert sorted({r.metrics["score"] for r in rows}) == [-1.0, 0.0]
    assert len(cache.listing("fixture/reference")) == 6


def test_trials_start_while_the_last_entries_are_built_and_wait_for_them(cache_dir, tmp_path,
                                                                        monkeypatch):
    """3 entries of 2.5 s on 2 workers: the third builds alone, and the trials start meanwhile
    (a worker would idle otherwise); a trial that needs it waits for the builder. (At 1 s a
    trial's process start on a busy machine could outlast the third build.)"""
    from papergym.benchmarks.runner import run_benchmark
    from papergym.benchmarks.spec import load_spec
    from papergym.leaderboard.store import Store

    builds, evals = tmp_path / "builds.log", tmp_path / "evals.log"
    monkeypatch.setenv("PAPERGYM_TEST_BUILD_LOG", str(builds))
    monkeypatch.setenv("PAPERGYM_TEST_EVAL_LOG", str(evals))
    monkeypatch.setenv("PAPERGYM_TEST_BUILD_S", "2.5")
    spec_path = cached_spec(tmp_path, "", "exact")
    with Store(tmp_path / "results.sqlite") as store:
        summary = run_benchmark(load_spec(spec_path), "smoke", store=store, workers=2,
                                spec_path=spec_path)
        rows = store.all(benchmark="cached")
    assert summary.ran == 3 and summary.failed == 0 and summary.prepare_failures == []
    built = [line.split() for line in builds.read_text().splitlines()]
    assert sorted(int(b[0]) for b in built) == [0, 1, 2]  # each once
    assert all(r.metrics["builds_in_trial"] == 0 for r in rows) and \
        {r.metrics["score"] for r in rows} == {0.0}
    last_end = max(float(b[3]) for b in built)
    first_eval = min(float(line.split()[1]) for line in evals.read_text().splitlines())
    assert first_eval < last_end  # a trial ran before the phase ended


def test_the_cache_folder_and_its_entries_are_private(cache_dir, tmp_path):
    cache_dir.mkdir(mode=0o755)  # as an older version left it
    cache_dir.chmod(0o755)
    entry = cache.Entry("test/private", {"v": 1}, build=lambda: 1.0, code=(Path(__file__),))
    assert cache.get(entry) == 1.0
    assert cache_dir.stat().st_mode & 0o077 == 0  # no group/other access to the root
    assert entry.path().stat().st_mode & 0o077 == 0


def test_a_tuning_score_is_built_once_per_problem_agent_and_config(cache_dir):
    from papergym.tuning import cached_score

    calls = []

    def run(value):
        calls.append(value)
        return value

    problem, code, agent = {"width": 8, "seed": 900000}, (Path(__file__),), "fam/agent@abc"
    assert cached_score("test/tuning", problem, agent, {"lr": 0.1}, lambda: run(0.5), code) == 0.5
    cache.forget()  # from disk now
    assert cached_score("test/tuning", problem, agent, {"lr": 0.1}, lambda: run(0.9), code) == 0.5
    assert cached_score("test/tuning", problem, agent, {"lr": 0.2}, lambda: run(0.7), code) == 0.7
    assert cached_score("test/tuning", {**problem, "width": 16}, agent, {"lr": 0.1},
                        lambda: run(0.3), code) == 0.3
    assert calls == [0.5, 0.7, 0.3]
    with pytest.raises(TypeError, match="mapping of settings"):
        cached_score("test/tuning", problem, agent, "fam/agent@abc(lr=0.1)", lambda: 0.0, code)
