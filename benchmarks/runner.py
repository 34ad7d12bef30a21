"""The runner: expand a spec into keyed trials, skip what is stored, run the rest.

One trial is the contract's five lines (``execute_trial``). The runner adds what makes a
suite trustworthy and survivable:

- a trial key = content hash of everything that determines its result (problem id, resolved
  kwargs, problem code hash, agent id, resolved config, agent code hash, seed, tier), so a
  stored key is never run twice (resume after Ctrl-C or a crash) and a code change re-keys;
- each trial in its own worker process, with a timeout; an exception, a non-finite metric,
  a budget overrun, a hang or a dead worker becomes a failed row with its reason, and the
  suite goes on;
- rows written by the parent as each trial ends, so an interrupt loses only trials in flight.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import papergym
from papergym.agent import REGISTRY, Agent, load_agent_file
from papergym.leaderboard.store import Row, RunnerClaims, Store
from papergym.problem import EvalResult, load_or_create_salt, salt_id, set_eval_salt
from papergym.provenance import measure, run_provenance
from papergym.registry import spec as problem_spec

from .spec import BenchmarkSpec, ProblemSection, SpecError, check_seeds
from .spec_checks import check_spec, sections_without
from .spec_checks import import_targets as checked_imports


@dataclass(frozen=True)
class Trial:
    benchmark: str
    section: str
    tier: str
    problem_id: str
    problem_kwargs: dict[str, Any]
    agent: str  # display name (label or id)
    agent_ref: str  # registry id "family/id", or "path/file.py:Class" for a plug-in
    agent_role: str
    agent_config: dict[str, Any]
    seed: int
    timeout_s: float
    problem_hash: str
    agent_hash: str
    key: str = ""
    # Modules or .py files the spec imports (its own problems/agents); executors whose
    # workers do not inherit the runner's memory (Ray) import them before the trial.
    imports: tuple[str, ...] = ()
    # The results store: the process that builds the Task reads the eval salt beside it.
    store_path: str = ""

    def describe(self) -> str:
        cell = ", ".join(f"{k}={v}" for k, v in self.problem_kwargs.items())
        return f"{self.section}/{self.agent} seed={self.seed} [{cell}]"


def trial_key(fields: dict[str, Any]) -> str:
    canonical = json.dumps(fields, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def resolve_agent(ref: str) -> type[Agent]:
    if ":" in ref and (ref.split(":")[0].endswith(".py") or "/" not in ref.split(":")[0]):
        return load_agent_file(ref)
    return REGISTRY.get(ref)


def resolve_imports(spec: BenchmarkSpec, spec_path: Path | None) -> tuple[str, ...]:
    """The spec's imports with .py paths made absolute (relative to the spec file)."""
    resolved = []
    for target in spec.imports:
        if target.endswith(".py"):
            path = Path(target)
            if not path.is_absolute() and spec_path is not None:
                path = spec_path.parent / path
            target = str(path.resolve())
        resolved.append(target)
    return tuple(resolved)


def import_targets(targets: Sequence[str]) -> None:
    for target in targets:
        if target.endswith(".py"):
            load_python_file(Path(target))
        else:
            importlib.import_module(target)


def import_spec_modules(spec: BenchmarkSpec, spec_path: Path | None) -> None:
    """Import the modules or files a user spec names (its own problems and agents); a module
    that fails to import is a SpecError naming the spec file and its ``imports.N`` field."""
    checked_imports(resolve_imports(spec, spec_path), spec_path or f"benchmark {spec.name!r}")


def load_python_file(path: Path) -> None:
    import importlib.util
    import sys

    name = f"papergym_user_{hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]}"
    if name in sys.modules:
        return
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        raise FileNotFoundError(f"cannot import {path}")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]  # a failed import is not "already imported" next time
        raise


def expand_trials(
    spec: BenchmarkSpec,
    tier: str,
    agents: Sequence[str] | None = None,
    seeds: int | None = None,
    extra_agents: Sequence[str] = (),
    imports: tuple[str, ...] = (),
) -> list[Trial]:
    """Every (section, cell, agent, seed) of ``tier``, keyed. ``agents`` filters by name."""
    plugins = [(ref, load_agent_file(ref)) for ref in extra_agents]
    if seeds is not None:
        try:
            check_seeds(seeds)
        except ValueError as err:
            raise SpecError(f"--seeds: {err}") from None
    trials: list[Trial] = []
    for section in spec.problems:
        if tier not in section.tiers:
            continue
        tier_spec = section.tiers[tier]
        seed_list = list(range(seeds)) if seeds is not None else tier_spec.seed_list()
        pspec = problem_spec(section.problem)
        problem_hash = pspec.code_hash()
        tier_defaults = pspec.tier_kwargs(tier)
        for entry_name, ref, cls, raw_config in _section_agents(section, tier, plugins):
            if agents and entry_name not in agents:
                continue
            config = cls.validate_config(raw_config).model_dump(mode="json")
            agent_hash = cls.code_hash()
            for cell in tier_spec.expand_cells():
                resolved = {**tier_defaults, **cell}
                for seed in seed_list:
                    key = trial_key({
                        "problem_id": section.problem, "problem_kwargs": resolved,
                        "problem_hash": problem_hash, "agent": cls.qualified_id(),
                        "agent_config": config, "agent_hash": agent_hash,
                        "seed": seed, "tier": tier,
                    })
                    trials.append(Trial(
                        benchmark=spec.name, section=section.name, tier=tier,
                        problem_id=section.problem, problem_kwargs=cell, agent=entry_name,
                        agent_ref=ref, agent_role=cls.role, agent_config=config, seed=seed,
                        timeout_s=tier_spec.timeout_s, problem_hash=problem_hash,
                        agent_hash=agent_hash, key=key, imports=imports,
                    ))
    if agents:
        known = {t.agent for t in trials}
        missing = sorted(set(agents) - known)
        if missing:
            raise ValueError(f"--agents: {missing} not in benchmark {spec.name!r} at tier {tier}")
    return trials


def _section_agents(
    section: ProblemSection, tier: str, plugins: list[tuple[str, type[Agent]]]
) -> list[tuple[str, str, type[Agent], dict[str, Any]]]:
    family = problem_spec(section.problem).family
    chosen = []
    for entry in section.agents:
        if entry.tiers is not None and tier not in entry.tiers:
            continue
        cls = REGISTRY.get(entry.id, family=family)
        chosen.append((entry.name, cls.qualified_id(), cls, entry.config))
    for ref, cls in plugins:
        if cls.family == family:
            chosen.append((cls.id, ref, cls, {}))
    return chosen


# ----------------------------------------------------------------------------- one trial


class NonFiniteMetric(ArithmeticError):
    pass


def execute_trial(trial: Trial) -> Row:
    """Run one trial in this process and return its row; never raises for agent faults."""
    status, error = "ok", None
    result = EvalResult(metrics={})
    budget_used: dict[str, Any] = {}
    privileged = False
    with measure() as usage:
        try:
            agent = resolve_agent(trial.agent_ref)(trial.agent_config)
            # Sealed held-out data: the salt must live only in the process that builds the
            # Task and evaluates. Until the agent runs in a process of its own, this worker
            # is both; the problem-side process of the split sets it here instead.
            set_eval_salt(load_or_create_salt(trial.store_path) if trial.store_path else None)
            task = papergym.make_task(trial.problem_id, tier=trial.tier, **trial.problem_kwargs)
            task.set_agent_role(trial.agent_role)  # privileges for reference agents only
            budget = task.budget
            view = task.train_view(trial.seed, budget)
            artifact = agent.solve(view, budget, trial.seed)
            budget_used = budget.as_dict()
            result = task.evaluate(artifact, trial.seed)
            privileged = bool(task.privileged_used)
            if not isinstance(result, EvalResult):
                raise TypeError(f"{trial.problem_id}.evaluate returned {type(result).__name__}")
            bad = result.non_finite()
            if bad:
                raise NonFiniteMetric(f"non-finite metrics {bad}: {result.metrics}")
            task.check_metric_bounds(result.metrics)
        except Exception as err:  # noqa: BLE001 - every agent fault becomes a failed row
            status = "failed"
            error = f"{type(err).__name__}: {err}\n{traceback.format_exc()}"
    return make_row(trial, status, result, error,
                    {**usage, "budget": budget_used, "privileged": privileged})


def make_row(
    trial: Trial, status: str, result: EvalResult, error: str | None, usage: dict[str, Any]
) -> Row:
    provenance = {
        **run_provenance(), **usage,
        "problem_code_hash": trial.problem_hash, "agent_code_hash": trial.agent_hash,
        "agent_ref": trial.agent_ref, "timeout_s": trial.timeout_s,
        "eval_salt_id": salt_id(load_or_create_salt(trial.store_path)) if trial.store_path
        else salt_id(None),
        "resolved_problem_kwargs": {
            **problem_spec(trial.problem_id).tier_kwargs(trial.tier), **trial.problem_kwargs
        },
    }
    return Row(
        key=trial.key, benchmark=trial.benchmark, section=trial.section, tier=trial.tier,
        problem_id=trial.problem_id, problem_kwargs=trial.problem_kwargs, agent=trial.agent,
        agent_id=trial.agent_ref, agent_role=trial.agent_role, agent_config=trial.agent_config,
        seed=trial.seed, status=status, metrics=result.metrics,
        curves={k: [list(p) for p in v] for k, v in result.curves.items()},
        units=result.units if status == "ok" else [], error=error, provenance=provenance,
    )


KILLED_MARKERS = ("worker died", "worker exited", "WorkerCrashedError", "NodeDiedError")


def failure_cause(error: str) -> str:
    """``killed`` (the worker died: a signal, the OOM killer, a crash), ``timeout`` or
    ``error`` (an exception in the trial, recorded with its traceback)."""
    first = error.splitlines()[0] if error else ""
    if first.startswith("TimeoutError"):
        return "timeout"
    if any(marker in first for marker in KILLED_MARKERS):
        return "killed"
    return "error"


def needs_run(outcome: tuple[str, str | None, int, str | None], retry_failed: bool) -> bool:
    """Whether a stored row's key runs again: a failure under ``retry_failed``, or a killed
    worker's first attempt."""
    status, cause, attempt, _ = outcome
    if status == "ok":
        return False
    return retry_failed or (cause == "killed" and attempt < 2)


def failed_row(trial: Trial, reason: str, wall_s: float) -> Row:
    return make_row(trial, "failed", EvalResult(metrics={}), reason, {"wall_s": wall_s})


# ----------------------------------------------------------------------------- a suite


@dataclass
class RunSummary:
    benchmark: str
    tier: str
    total: int
    skipped: int
    ran: int = 0
    failed: int = 0
    wall_s: float = 0.0
    failures: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # e.g. sections without the tier
    claimed_elsewhere: int = 0  # keys another runner on the store was computing


def run_benchmark(
    spec: BenchmarkSpec,
    tier: str = "smoke",
    store: str | Path | Store = "results/papergym.sqlite",
    workers: int | None = None,
    agents: Sequence[str] | None = None,
    seeds: int | None = None,
    extra_agents: Sequence[str] = (),
    retry_failed: bool = False,
    executor: str = "local",
    progress: bool = False,
    spec_path: Path | None = None,
    executor_options: dict[str, Any] | None = None,
    claim_options: dict[str, float] | None = None,
) -> RunSummary:
    """Run every trial of ``spec`` at ``tier`` that ``store`` does not hold yet.

    Resume rules: a stored key is skipped, except a failed one with ``retry_failed`` and one
    whose worker was killed on its first attempt (retried once by a plain rerun). A key
    another runner is computing on the same store (fresh claim) is skipped and counted in
    ``claimed_elsewhere``; a rerun picks up whatever is still missing."""
    from .executors import make_executor

    imports = resolve_imports(spec, spec_path)
    checked_imports(imports, str(spec_path) if spec_path else f"benchmark {spec.name!r}")
    check_spec(spec, spec_path, tier, [load_agent_file(ref) for ref in extra_agents])
    trials = expand_trials(spec, tier, agents=agents, seeds=seeds, extra_agents=extra_agents,
                           imports=imports)
    own_store = not isinstance(store, Store)
    db = Store(store) if own_store else store
    try:
        # the store's eval salt: created once here, read only by the problem processes
        store_salt_id = salt_id(load_or_create_salt(db.path))
        outcomes = db.outcomes()
        done = {k for k, outcome in outcomes.items() if not needs_run(outcome, retry_failed)}
        todo = list({t.key: t for t in trials if t.key not in done}.values())  # once per key
        todo = [dataclasses.replace(t, store_path=str(db.path)) for t in todo]
        summary = RunSummary(spec.name, tier, total=len(trials),
                             skipped=sum(t.key in done for t in trials))
        foreign = {t.key for t in trials if t.key in done and outcomes[t.key][3] != store_salt_id}
        if foreign:  # imported rows, or rows from before the salt: kept, and said
            summary.notes.append(f"{len(foreign)} stored rows were drawn under another eval "
                                 "salt than this store's (imported or older rows): their "
                                 "held-out instances differ from those of new rows")
        summary.notes += [f"section {name!r} has no tier {tier!r}; skipped"
                          for name in sections_without(spec, tier)]
        started = time.perf_counter()

        def record(row: Row) -> None:
            if not row.ok:  # why it failed, and which attempt (a killed worker's is retried once)
                row.provenance["failure_cause"] = failure_cause(row.error or "")
            previous = outcomes.get(row.key)
            row.provenance["attempt"] = previous[2] + 1 if previous else 1
            db.put(row)
            summary.ran += 1
            if not row.ok:
                summary.failed += 1
                summary.failures.append(f"{row.section}/{row.agent} seed={row.seed}: "
                                        f"{(row.error or '').splitlines()[0]}")

        run_provenance()  # computed once here (git, versions), inherited by every worker
        for section in spec.problems:  # import problem modules before workers fork
            problem_spec(section.problem).preload()
        runner = make_executor(executor, workers=workers, **(executor_options or {}))
        with RunnerClaims(db, **(claim_options or {})) as claims:  # two runners, one store
            runner.run(todo, record, progress_label=f"{spec.name} [{tier}]" if progress else None,
                       claim=lambda trial: claims.claim(trial.key))
        summary.claimed_elsewhere = len(claims.skipped)
        if claims.skipped:
            summary.notes.append(f"{len(claims.skipped)} trials left to another runner on this "
                                 "store (claimed with a fresh heartbeat); rerun to collect them")
        summary.wall_s = time.perf_counter() - started
        return summary
    finally:
        if own_store:
            db.close()


def rows_for(spec: BenchmarkSpec, tier: str, store: Store,
             extra_agents: Sequence[str] = ()) -> tuple[list[Trial], list[Row]]:
    """The stored rows of exactly this spec's current trials (stale keys drop out).

    A key names a computation, not its place in a table: the same trial may appear in two
    sections or benchmarks, or under another label. Each returned row therefore carries the
    benchmark, section, label and role of the trial that asked for it."""
    trials = expand_trials(spec, tier, extra_agents=extra_agents)
    stored = {r.key: r for r in store.get_many({t.key for t in trials})}
    rows = [
        dataclasses.replace(stored[t.key], benchmark=t.benchmark, section=t.section,
                            agent=t.agent, agent_role=t.agent_role,
                            problem_kwargs=t.problem_kwargs)
        for t in trials if t.key in stored
    ]
    return trials, rows

