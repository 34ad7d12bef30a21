"""Rank a new agent against a benchmark's published leaderboard without re-running it.

``papergym compare <benchmark> --agent mine.py:Class`` takes the published per-trial rows of
the benchmark (``leaderboard/published/<benchmark>/trials.jsonl``), checks that they are rows
of this installation's trials (a trial key hashes the problem's code, the agent's code and
config, the cell and the seed: rows of other code would match no key and silently drop out),
puts them in the store, runs only the submitted agent, and scores everything together.

Every phase says what it does and how long it took, on stderr; the trials and the cache
builds before them report their own progress.
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from papergym.leaderboard.store import Row, Store
from papergym.registry import spec as problem_spec

from .runner import RunSummary, Trial, expand_trials, run_benchmark
from .spec import BenchmarkSpec, SpecError


class CompareError(SpecError):
    """The published rows cannot be compared with this installation's trials; the message
    says why and what to run instead."""


@contextlib.contextmanager
def phase(title: str, enabled: bool = True) -> Iterator[None]:
    """``title ...`` on stderr, then ``done in N s``."""
    started = time.perf_counter()
    if enabled:
        print(f"{title} ...", file=sys.stderr, flush=True)
    yield
    if enabled:
        print(f"  done in {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)


def published_folder(benchmark: str) -> Path:
    from papergym.leaderboard.publish import PUBLISHED

    return PUBLISHED / benchmark


def load_published(benchmark: str, tier: str, folder: Path | None = None) -> list[Row]:
    """The published rows of ``benchmark`` at ``tier``; a clear error when there are none."""
    folder = folder or published_folder(benchmark)
    path = folder / "trials.jsonl"
    if not path.is_file():
        raise CompareError(f"no published rows for benchmark {benchmark!r} ({path} is missing); "
                           f"rank your agent by running every agent: papergym run {benchmark} "
                           f"--tier {tier} --agent FILE.py:Class")
    rows = []
    with path.open() as fh:
        for number, line in enumerate(fh, 1):
            if line.strip():
                try:
                    rows.append(Row(**json.loads(line)))
                except (json.JSONDecodeError, TypeError) as err:
                    raise CompareError(f"{path}:{number}: not a stored trial row ({err})") from None
    tiers = Counter(r.tier for r in rows)
    if tier not in tiers:
        raise CompareError(f"{path} holds rows of tier(s) {', '.join(sorted(tiers))}, none of "
                           f"tier {tier!r}; compare with --tier {max(tiers, key=tiers.get)}")
    return [r for r in rows if r.tier == tier]


def check_matches(spec: BenchmarkSpec, tier: str, published: Sequence[Row],
                  trials: Sequence[Trial], stored: set[str] | frozenset[str] = frozenset()) -> None:
    """Raise :class:`CompareError` unless every trial of the spec's own agents has a published
    row (the rows were produced by this problem code, agent code and spec) or one already in
    the store (``stored``: trials the user ran after an earlier refusal)."""
    by_key = {r.key for r in published} | set(stored)
    missing = [t for t in trials if t.key not in by_key]
    if not missing:
        return
    rerun = f"papergym run {spec.name} --tier {tier} --agent FILE.py:Class"
    problems = []
    for problem_id in dict.fromkeys(t.problem_id for t in trials):
        ours = problem_spec(problem_id).code_hash()
        theirs = sorted({str(r.provenance.get("problem_code_hash")) for r in published
                         if r.problem_id == problem_id} - {ours})
        if theirs:
            problems.append(f"{problem_id}: published {', '.join(theirs)}, this installation {ours}")
    shas = sorted({str(r.provenance.get("git_sha", "?"))[:12] for r in published})
    if problems:
        raise CompareError(
            f"the published rows of {spec.name} [{tier}] were produced by other problem code "
            f"({'; '.join(problems)}), so none of their keys match this installation's trials. "
            f"Either rank your agent by running every agent here ({rerun}: "
            f"{len(trials)} built-in trials plus yours), or install the papergym version that "
            f"produced them (git {', '.join(shas)}) and compare there")
    agents = Counter(t.agent for t in missing)
    detail = ", ".join(f"{a} ({n})" for a, n in agents.most_common())
    raise CompareError(
        f"{len(missing)} of the {len(trials)} trials of {spec.name} [{tier}] have no published "
        f"row (agent code, configs or the spec changed since git {', '.join(shas)}): {detail}. "
        f"Run them first (papergym run {spec.name} --tier {tier} --agents "
        f"{','.join(agents)}), then compare again; or run every agent: {rerun}")


@dataclass
class CompareResult:
    report: Any
    summary: RunSummary
    imported: int
    already_stored: int
    pages: dict[str, Path] = field(default_factory=dict)
    phases: dict[str, float] = field(default_factory=dict)


def compare(spec: BenchmarkSpec, agent: str, tier: str = "standard",
            store: str | Path = "results/papergym.sqlite", out: str | Path = "results",
            spec_path: Path | None = None, plugin_config: Mapping[str, Any] | None = None,
            workers: int | None = None, progress: bool = True,
            published: Path | None = None) -> CompareResult:
    """Rank ``agent`` (a plug-in reference) against the published rows of ``spec`` at ``tier``:
    import them (keys already stored are kept), run the plug-in's trials only, and write the
    reports with it in place under ``out``."""
    from papergym.api import report as build
    from papergym.plugins import describe_agent_file, plugin_refs

    from .runner import import_spec_modules

    timings: dict[str, float] = {}

    def timed(name: str, title: str):
        @contextlib.contextmanager
        def block():
            started = time.perf_counter()
            with phase(title, progress):
                yield
            timings[name] = time.perf_counter() - started
        return block()

    (ref,) = plugin_refs([agent])
    config = dict(plugin_config or {})
    with timed("published", f"reading the published rows of {spec.name} [{tier}]"):
        rows = load_published(spec.name, tier, published)
    with timed("check", f"checking {len(rows)} published rows against this installation's trials"):
        import_spec_modules(spec, spec_path)
        stored_ok = set()
        if Path(store).exists():
            with Store(store) as db:
                stored_ok = {k for k, outcome in db.outcomes().items() if outcome[0] == "ok"}
        check_matches(spec, tier, rows, expand_trials(spec, tier), stored_ok)
    with timed("plugin", f"reading the declarations of {ref} in a sandbox"):
        cls = describe_agent_file(ref, config)
    with timed("import", f"storing the published rows in {store}"), Store(store) as db:
        stored = db.keys()
        fresh = [r for r in rows if r.key not in stored]
        for row in fresh:
            db.put(row)
    with timed("run", f"running {cls.id} on {spec.name} [{tier}] (the published agents are not "
                      "re-run)"):
        summary = run_benchmark(spec, tier=tier, store=store, workers=workers, agents=[cls.id],
                                extra_agents=[ref], plugin_config={ref: config},
                                progress=progress, spec_path=spec_path)
    with timed("report", "scoring the leaderboard and the claims"):
        report, _ = build(spec_path or spec.name, tier, store)
    from papergym.leaderboard.render_html import write_report
    from papergym.safe import check_name, safe_join

    pages = write_report(report, safe_join(Path(out), check_name(spec.name, "benchmark name"), tier))
    return CompareResult(report=report, summary=summary, imported=len(fresh),
                         already_stored=len(rows) - len(fresh), pages=pages, phases=timings)
