"""The notebook API: run a benchmark, read its trials and claim verdicts as DataFrames.

    import papergym
    trials = papergym.run("performative", tier="smoke", workers=2)   # one line per trial
    verdicts = papergym.claims("performative", tier="smoke")         # one line per claim

Everything heavy (the runner, scoring, pandas) is imported inside the functions, so
``import papergym`` stays light. The store is the same SQLite file the command line uses;
a run resumes, so calling ``run`` twice runs each trial once.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

DEFAULT_STORE = "results/papergym.sqlite"


def _spec_and_path(benchmark: str | Path) -> tuple[Any, Path]:
    from papergym.benchmarks.spec import find_spec, spec_paths

    name = str(benchmark)
    return find_spec(name), spec_paths().get(name) or Path(name)


def report(benchmark: str | Path, tier: str = "smoke", store: str | Path = DEFAULT_STORE,
           extra_agents: Sequence[Any] = (), include_stored_plugins: bool = True,
           ) -> tuple[Any, list[Any]]:
    """The scored :class:`~papergym.leaderboard.report.BenchmarkReport` of the stored trials of
    ``benchmark`` at ``tier``, and those rows: the spec's agents, ``extra_agents``, and every
    plug-in the store recorded a row of (``include_stored_plugins``)."""
    from papergym.benchmarks.runner import import_spec_modules, rows_for
    from papergym.leaderboard.report import build_report
    from papergym.leaderboard.store import Store

    spec, path = _spec_and_path(benchmark)
    import_spec_modules(spec, path)
    with Store(store) as db:
        trials, rows = rows_for(spec, tier, db, extra_agents=extra_agents,
                                include_stored_plugins=include_stored_plugins)
    return build_report(spec, tier, trials, rows), rows


def stored_rows(benchmark: str | Path, tier: str = "smoke", store: str | Path = DEFAULT_STORE,
                extra_agents: Sequence[Any] = ()) -> list[Any]:
    """The stored rows of the current trials of ``benchmark`` at ``tier`` (nothing scored)."""
    from papergym.benchmarks.runner import import_spec_modules, rows_for
    from papergym.leaderboard.store import Store

    spec, path = _spec_and_path(benchmark)
    import_spec_modules(spec, path)
    with Store(store) as db:
        return rows_for(spec, tier, db, extra_agents=extra_agents)[1]


def trials(benchmark: str | Path, tier: str = "smoke", store: str | Path = DEFAULT_STORE,
           extra_agents: Sequence[Any] = ()) -> Any:
    """The stored trials of ``benchmark`` at ``tier`` as a pandas DataFrame (nothing is run)."""
    from papergym.leaderboard.export import rows_frame

    return rows_frame(stored_rows(benchmark, tier, store, extra_agents))


def run(benchmark: str | Path, tier: str = "smoke", store: str | Path = DEFAULT_STORE,
        agents: Sequence[str] | None = None, workers: int | None = None, seeds: int | None = None,
        extra_agents: Sequence[Any] = (), retry_failed: bool = False,
        progress: bool = False, agent_config: dict[str, Any] | None = None) -> Any:
    """Run the trials of ``benchmark`` at ``tier`` that ``store`` lacks, then return its trials.

    ``agents`` limits the run (and the returned frame) to those agent labels or plug-in ids;
    ``extra_agents`` adds plug-ins (``"file.py:Class"``, or the class itself where a .py file
    defines it), and ``agent_config`` sets fields of the one plug-in's Config. Returns a pandas
    DataFrame, one line per trial, with ``status``/``error`` and a ``metric.<name>`` column
    per metric."""
    from papergym.agent import AgentError
    from papergym.benchmarks.runner import run_benchmark
    from papergym.plugins import describe_agent_file, plugin_refs

    spec, path = _spec_and_path(benchmark)
    refs = plugin_refs(extra_agents)
    if agent_config and len(refs) != 1:
        raise AgentError(f"agent_config sets the config of one plug-in; extra_agents has {len(refs)}")
    configs = {refs[0]: dict(agent_config)} if agent_config else {}
    run_benchmark(spec, tier=tier, store=store, workers=workers, agents=agents, seeds=seeds,
                  extra_agents=refs, retry_failed=retry_failed, progress=progress,
                  spec_path=path, plugin_config=configs)
    frame = trials(benchmark, tier=tier, store=store, extra_agents=[] if configs else refs)
    if agents:
        plugin_ids = {describe_agent_file(ref, configs.get(ref)).id for ref in refs}
        wanted = set(agents) if set(agents) & plugin_ids else set(agents) | plugin_ids
        frame = frame[frame["agent"].isin(wanted)].reset_index(drop=True)
    return frame


def claims(benchmark: str | Path, tier: str = "smoke", store: str | Path = DEFAULT_STORE,
           extra_agents: Sequence[Any] = ()) -> Any:
    """The claim verdicts of ``benchmark`` at ``tier`` from the stored trials, as a pandas
    DataFrame: one line per claim (``verdict``, ``effect``, ``ci_low``/``ci_high``, ``detail``
    and whatever else the verdict carries)."""
    import pandas as pd

    result, _ = report(benchmark, tier=tier, store=store, extra_agents=extra_agents)
    records = []
    for v in result.verdicts:
        record = v.as_dict()
        ci = record.get("ci")
        record["ci_low"], record["ci_high"] = (ci[0], ci[1]) if ci else (None, None)
        records.append(record)
    return pd.DataFrame.from_records(records)
