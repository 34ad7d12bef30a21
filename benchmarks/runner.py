"""The runner: expand a spec into keyed trials, skip what is stored, run the rest.

One trial is the contract's five lines (``execute_trial``). The runner adds what makes a
suite trustworthy and survivable:

- a trial key = content hash of everything that determines its result (problem id, resolved
  kwargs, problem code hash, agent id, resolved config, agent code hash, seed, tier), so a
  stored key is never run twice (resume after Ctrl-C or a crash) and a code change re-keys;
- each trial in its own worker process, with a timeout; an exception, a non-finite metric,
  a budget overrun, a hang or a dead worker becomes a failed row with its reason, and the
  suite goes on;
- inside that worker (the problem process) the agent runs in a sandboxed child process of
  its own (``papergym.isolation``): no store, no result pipe, no Task, limits on memory,
  CPU and processes; the problem process alone evaluates and sends the row;
- rows written by the parent as each trial ends, so an interrupt loses only trials in flight.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib
import json
import os
import time
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import papergym
from papergym.agent import REGISTRY, Agent, load_agent_file
from papergym.isolation import (
    AgentDied,
    AgentProcess,
    Limits,
    default_memory_mb,
    set_memory_limit,
    unprivileged_ids,
    unreadable_import_roots,
)
from papergym.leaderboard.store import KeyConflict, Row, RunnerClaims, Store
from papergym.plugins import (
    describe_agent_file,
    plugin_marker,
    plugin_record,
    plugin_refs,
    plugin_source,
    stand_in_from_record,
)
from papergym.problem import EvalResult, Task, load_or_create_salt, salt_id, set_eval_salt
from papergym.provenance import measure, run_provenance
from papergym.registry import spec as problem_spec
from papergym.safe import term_text

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
    memory_mb: int | None = None  # per-process address-space cap (None: sized to the machine)
    store_path: str = ""  # the store this trial's row goes to (the eval salt sits beside it)

    def describe(self) -> str:
        cell = ", ".join(f"{k}={v}" for k, v in self.problem_kwargs.items())
        return f"{self.section}/{self.agent} seed={self.seed} [{cell}]"


def trial_key(fields: dict[str, Any]) -> str:
    canonical = json.dumps(fields, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:32]


def resolve_agent(ref: str, source: bytes | None = None) -> type[Agent]:
    """The agent class ``ref`` names; ``source``: a plug-in file's bytes, as the runner read them.
    Only agent processes call it for a plug-in (its import runs the submission's code)."""
    if ":" in ref and (ref.split(":")[0].endswith(".py") or "/" not in ref.split(":")[0]):
        return load_agent_file(ref, source)
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
    plugin_config: Mapping[str, Mapping[str, Any]] | None = None,
    described: Sequence[tuple[str, type[Agent]]] = (),
) -> list[Trial]:
    """Every (section, cell, agent, seed) of ``tier``, keyed.

    ``agents`` filters by name: built-in labels and plug-in ids. A plug-in given in
    ``extra_agents`` runs unless ``agents`` names other plug-ins and not it (naming only
    built-ins never drops a plug-in the command asked for). ``plugin_config`` maps a plug-in
    reference to Config overrides; ``described`` adds plug-ins already described (``(ref,
    stand-in)``, e.g. those recorded in a store)."""
    # A plug-in's file is named relative to where the run started; the agent process runs
    # elsewhere, so trials carry the absolute path.
    plugins = [(_absolute_ref(ref), describe_agent_file(ref, (plugin_config or {}).get(ref)))
               for ref in extra_agents]
    plugins += list(described)
    plugin_classes = {id(cls) for _, cls in plugins}
    named_plugins = set(agents or ()) & {cls.id for _, cls in plugins}
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
            if agents and entry_name not in agents and (
                    id(cls) not in plugin_classes or named_plugins):
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
                        memory_mb=tier_spec.memory_mb,
                    ))
    if agents:
        known = {t.agent for t in trials}
        missing = sorted(set(agents) - known)
        if missing:
            raise ValueError(f"--agents: {missing} not in benchmark {spec.name!r} at tier {tier}")
    return trials


def _absolute_ref(ref: str) -> str:
    file, sep, cls = ref.rpartition(":")
    return f"{Path(file).resolve()}{sep}{cls}" if sep and file.endswith(".py") else ref


def _section_agents(
    section: ProblemSection, tier: str, plugins: list[tuple[str, type[Agent]]]
) -> list[tuple[str, str, type[Agent], dict[str, Any]]]:
    family = problem_spec(section.problem).family
    chosen = []
    for entry in section.agents:
        if entry.tiers is not None and tier not in entry.tiers:
            continue
        cls = REGISTRY.get(entry.id, family=family)
        if not cls.can_act_on(section.problem):
            raise ValueError(f"section {section.name!r}: agent {cls.qualified_id()!r} declares "
                             f"problems {list(cls.problems)}, which do not include {section.problem}")
        # an installed plug-in's stand-in: its agent process imports module:Class
        ref = getattr(cls, "plugin_ref", None) or cls.qualified_id()
        chosen.append((entry.name, ref, cls, entry.config_at(tier)))
    for ref, cls in plugins:
        if plugin_misfit(cls, section.problem) is None:
            chosen.append((cls.id, ref, cls, {}))
    return chosen


def plugin_misfit(cls: type[Agent], problem_id: str) -> str | None:
    """Why a plug-in agent is not scheduled on ``problem_id`` (None: it fits)."""
    family = problem_spec(problem_id).family
    if cls.family != family:
        return f"a {cls.family} agent; {problem_id} is a {family} problem"
    if not cls.can_act_on(problem_id):
        return f"{problem_id} matches none of its declared problems {list(cls.problems)}"
    return None


def unscheduled_plugins(spec: BenchmarkSpec, tier: str, extra_agents: Sequence[str],
                        plugin_config: Mapping[str, Mapping[str, Any]] | None = None) -> list[str]:
    """One line per (plug-in, section of ``tier``) the runner leaves out, with the reason."""
    lines = []
    for ref in extra_agents:
        cls = describe_agent_file(ref, (plugin_config or {}).get(ref))
        for section in spec.problems:
            if tier in section.tiers:
                why = plugin_misfit(cls, section.problem)
                if why is not None:
                    lines.append(f"{cls.id} not run on section {section.name!r}: {why}")
    return lines


# ----------------------------------------------------------------------------- one trial


class NonFiniteMetric(ArithmeticError):
    pass


def execute_trial(trial: Trial, limits: Limits | None = None,
                  limit_problem_memory: bool = True) -> Row:
    """Run one trial and return its row; never raises for agent faults.

    This process is the trial's problem process: it builds the Task, the view and the
    Budget, and evaluates. ``agent.solve`` runs in a sandboxed child forked before the Task
    exists (``papergym.isolation.AgentProcess``); the view and the budget reach it as
    proxies, and a code artifact stays there and is called over the socket."""
    limits = limits or trial_limits(trial)
    status, error = "ok", None
    result = EvalResult(metrics={})
    budget_used: dict[str, Any] = {}
    privileged = False
    ref, config = trial.agent_ref, trial.agent_config
    source = plugin_source(ref, trial.agent_hash)  # this trial's plug-in only, as keyed
    sandbox = AgentProcess(lambda: resolve_agent(ref, source)(config), limits,
                           plugin_file=ref.rpartition(":")[0] if source is not None else None)
    phase = "start"
    failure: BaseException | None = None
    with measure() as usage:
        try:
            sandbox.start()
            if limit_problem_memory:  # not in a long-lived Ray worker: it outlives the trial
                set_memory_limit(limits.resolved_memory_mb())
            _set_eval_salt(trial)
            phase = "setup"
            task = papergym.make_task(trial.problem_id, tier=trial.tier, **trial.problem_kwargs)
            # oracle/privileged modes for reference agents only; shared runs keyed by the agent
            task.set_agent_role(trial.agent_role, f"{trial.agent_ref}@{trial.agent_hash}")
            budget = task.budget
            view = task.train_view(trial.seed, budget)
            phase = "solve"
            artifact = sandbox.solve(view, budget, trial.seed)
            assert sandbox.endpoint is not None
            sandbox.endpoint.revoke()  # the training view closes: nothing of it stays reachable
            budget_used = budget.as_dict()
            sandbox.endpoint.reply_timeout = limits.call_timeout_s
            phase = "evaluate"
            result = task.evaluate(artifact, trial.seed)
            privileged = bool(task.privileged_used)
            check_result(task, trial, result)
        except Exception as err:  # noqa: BLE001 - every agent fault becomes a failed row
            failure = err
            error = f"{type(err).__name__}: {err}\n{traceback.format_exc()}"
        finally:
            sandbox.close()
    if failure is not None:
        status = "failed"
        if isinstance(failure, AgentDied):
            error = (f"worker died: the agent process ended ({sandbox.died()}) during "
                     f"{phase}\n{error}")
        elif hasattr(failure, "remote_traceback"):  # raised by agent code, in its process
            error = (f"{failure.remote_type}: {failure}\n"  # type: ignore[attr-defined]
                     f"{failure.remote_traceback}\n(in the problem process)\n{error}")
    usage["cpu_s"] = usage.get("cpu_s", 0.0) + sandbox.usage.get("agent_cpu_s", 0.0)
    return make_row(trial, status, result, error,
                    {**usage, **sandbox.usage, "budget": budget_used, "privileged": privileged,
                     "isolation": {"agent_uid": os.geteuid() if unprivileged_ids() is None
                                   else unprivileged_ids()[0],  # type: ignore[index]
                                   "memory_mb": limits.resolved_memory_mb()}})


def check_result(task: Task, trial: Trial, result: Any) -> None:
    """What every evaluation must return: an EvalResult of finite metrics within their bounds."""
    if not isinstance(result, EvalResult):
        raise TypeError(f"{trial.problem_id}.evaluate returned {type(result).__name__}")
    bad = result.non_finite()
    if bad:
        raise NonFiniteMetric(f"non-finite metrics {bad}: {result.metrics}")
    task.check_metric_bounds(result.metrics)
    try:
        json.dumps(result.info, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{trial.problem_id}.evaluate returned info that is not JSON: {err}") from None


def trial_limits(trial: Trial, workers: int | None = None) -> Limits:
    return Limits(memory_mb=trial.memory_mb or default_memory_mb(workers), cpu_s=trial.timeout_s)


def _set_eval_salt(trial: Trial) -> None:
    """The secret evaluation salt, read here in the problem process (never the runner's or
    the agent's), before the Task derives any held-out seed from it."""
    set_eval_salt(load_or_create_salt(trial.store_path) if trial.store_path else None)


def execute_trial_in_process(trial: Trial) -> Row:
    """The old, unisolated path: agent and problem in one process. Only for measuring the
    cost of isolation (benchmarks/perf/isolation_overhead.py); never used by the runner."""
    status, error = "ok", None
    result = EvalResult(metrics={})
    budget_used: dict[str, Any] = {}
    privileged = False
    with measure() as usage:
        try:
            source = plugin_source(trial.agent_ref, trial.agent_hash)
            agent = resolve_agent(trial.agent_ref, source)(trial.agent_config)
            _set_eval_salt(trial)  # agent and problem share this process: measuring only
            task = papergym.make_task(trial.problem_id, tier=trial.tier, **trial.problem_kwargs)
            task.set_agent_role(trial.agent_role, f"{trial.agent_ref}@{trial.agent_hash}")
            budget = task.budget
            view = task.train_view(trial.seed, budget)
            artifact = agent.solve(view, budget, trial.seed)
            budget_used = budget.as_dict()
            result = task.evaluate(artifact, trial.seed)
            privileged = bool(task.privileged_used)
            check_result(task, trial, result)
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
    if result.info and status == "ok":
        provenance["problem_info"] = result.info
        if isinstance(result.info.get("tuning"), dict):  # papergym.tuning.TuningRecord.summary
            provenance["tuning"] = result.info["tuning"]
    plugin = plugin_marker(trial.agent_ref, trial.agent_hash)
    if plugin is not None:  # a submission: every page marks it with its own badge and hash
        provenance["plugin"] = plugin
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
    unscheduled: list[str] = field(default_factory=list)  # plug-in sections left out, and why
    # agents every one of whose trials failed this run (a CLI run then exits non-zero)
    all_failed: list[str] = field(default_factory=list)
    prepare_failures: list[str] = field(default_factory=list)  # cache entries not built ahead
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
    plugin_config: Mapping[str, Mapping[str, Any]] | None = None,
) -> RunSummary:
    """Run every trial of ``spec`` at ``tier`` that ``store`` does not hold yet.

    Resume rules: a stored key is skipped, except a failed one with ``retry_failed`` and one
    whose worker was killed on its first attempt (retried once by a plain rerun). A key
    another runner is computing on the same store (fresh claim) is skipped and counted in
    ``claimed_elsewhere``; a rerun picks up whatever is still missing.

    ``extra_agents`` are plug-ins (``"file.py:Class"`` or a class defined in a .py file), with
    Config overrides in ``plugin_config`` (reference -> fields); the store records each one's
    source and declarations, so later reports include its rows without naming it again."""
    from .executors import make_executor

    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be an integer of at least 1, got {workers!r}")
    extra_agents = plugin_refs(extra_agents)
    plugin_config = {_absolute_ref(ref): value for ref, value in (plugin_config or {}).items()}
    extra_agents = [_absolute_ref(ref) for ref in extra_agents]
    imports = resolve_imports(spec, spec_path)
    checked_imports(imports, str(spec_path) if spec_path else f"benchmark {spec.name!r}")
    check_spec(spec, spec_path, tier, [describe_agent_file(ref, plugin_config.get(ref))
                                       for ref in extra_agents])
    trials = expand_trials(spec, tier, agents=agents, seeds=seeds, extra_agents=extra_agents,
                           imports=imports, plugin_config=plugin_config)
    own_store = not isinstance(store, Store)
    db = Store(store) if own_store else store
    try:
        for ref in extra_agents:  # kept from the first run on: reports find their rows again
            record = plugin_record(ref, describe_agent_file(ref, plugin_config.get(ref)))
            if record is not None and any(t.agent_ref == ref for t in trials):
                db.put_plugin(**record)
        # the store's eval salt: created once here, read only by the problem processes
        store_salt_id = salt_id(load_or_create_salt(db.path))
        outcomes = db.outcomes()
        done = {k for k, outcome in outcomes.items() if not needs_run(outcome, retry_failed)}
        todo = list({t.key: t for t in trials if t.key not in done}.values())  # once per key
        todo = [dataclasses.replace(t, store_path=str(db.path)) for t in todo]
        summary = RunSummary(spec.name, tier, total=len(trials),
                             skipped=sum(t.key in done for t in trials),
                             unscheduled=unscheduled_plugins(spec, tier, extra_agents,
                                                             plugin_config))
        foreign = {t.key for t in trials if t.key in done and outcomes[t.key][3] != store_salt_id}
        if foreign:  # imported rows, or rows from before the salt: kept, and said
            summary.notes.append(f"{len(foreign)} stored rows were drawn under another eval "
                                 "salt than this store's (imported or older rows): their "
                                 "held-out instances differ from those of new rows")
        summary.notes += [f"section {name!r} has no tier {tier!r}; skipped"
                          for name in sections_without(spec, tier)]
        agent_oks: dict[str, list[bool]] = {}
        started = time.perf_counter()

        def record(row: Row) -> None:
            if not row.ok:  # why it failed, and which attempt (a killed worker's is retried once)
                row.provenance["failure_cause"] = failure_cause(row.error or "")
            previous = outcomes.get(row.key)
            row.provenance["attempt"] = previous[2] + 1 if previous else 1
            try:
                db.put(row)
            except KeyConflict as err:  # another agent's row under this key stays as it was
                summary.ran += 1
                summary.failed += 1
                summary.failures.append(f"{row.section}/{row.agent} seed={row.seed}: not "
                                        f"stored: {err}")
                agent_oks.setdefault(row.agent, []).append(False)
                return
            summary.ran += 1
            agent_oks.setdefault(row.agent, []).append(row.ok)
            if not row.ok:
                summary.failed += 1
                # agent text reaches the terminal: no escapes or control characters
                first = term_text((row.error or "").splitlines()[0] if row.error else "")
                summary.failures.append(f"{row.section}/{row.agent} seed={row.seed}: {first}")

        run_provenance()  # computed once here (git, versions), inherited by every worker
        for section in spec.problems:  # import problem modules before workers fork
            problem_spec(section.problem).preload()
        if unprivileged_ids() is not None:
            unreadable_import_roots()  # once here, not in every trial's agent process
        prepare = Prepare(todo, workers, progress)
        prepare.wait_claimed()  # every entry built or being built: the trials may start
        runner = make_executor(executor, workers=workers, **(executor_options or {}))
        with RunnerClaims(db, **(claim_options or {})) as claims:  # two runners, one store
            runner.run(todo, record, progress_label=f"{spec.name} [{tier}]" if progress else None,
                       claim=lambda trial: claims.claim(trial.key))
        summary.prepare_failures = prepare.finish()
        summary.claimed_elsewhere = len(claims.skipped)
        if claims.skipped:
            summary.notes.append(f"{len(claims.skipped)} trials left to another runner on this "
                                 "store (claimed with a fresh heartbeat); rerun to collect them")
        summary.wall_s = time.perf_counter() - started
        summary.all_failed = sorted(a for a, oks in agent_oks.items() if not any(oks))
        return summary
    finally:
        if own_store:
            db.close()


class Prepare:
    """The prepare phase: build, once per key, the cache entries that the trials' tasks
    declare (``Task.cache_entries``), in workers set up like trial workers.

    Entries may be keyed by held-out seeds drawn under the store's secret eval salt, so the
    phase runs in a child process that reads the salt; the runner, whose memory every trial's
    processes inherit, never holds it.

    The trials start as soon as every missing entry is built or held under its lock by a
    builder (:meth:`wait_claimed`), not when the last one is done: a worker left idle by the
    phase's tail takes a trial, and a trial that reaches an entry still being built waits for
    it (no trial builds a prepared entry). While the last builders run, up to ``workers``
    builders and ``workers`` trials share the cores.

    :meth:`finish` returns a line per task or entry that could not be prepared; nothing is
    lost by it: the trials that need the entry build it again and record their own error."""

    def __init__(self, trials: Sequence[Trial], workers: int | None = None,
                 progress: bool = False) -> None:
        import multiprocessing as mp

        from papergym import cache

        self.proc: Any = None
        self.failures: list[str] = []
        if not cache.enabled() or not trials:
            return
        ctx = mp.get_context("fork")
        self.receiver, sender = ctx.Pipe(duplex=False)
        self.proc = ctx.Process(target=_prepare_child, args=(trials, workers, progress, sender))
        self.proc.start()
        sender.close()

    def wait_claimed(self) -> None:
        """Return once every entry is built or claimed by a builder (or the phase ended)."""
        if self.proc is not None:
            with contextlib.suppress(EOFError):
                self.receiver.recv()  # the child's "claimed"

    def finish(self) -> list[str]:
        """Wait for the phase to end; its failures."""
        if self.proc is None:
            return self.failures
        try:
            self.failures = list(self.receiver.recv())
        except EOFError:
            pass
        self.proc.join()
        self.receiver.close()
        if self.proc.exitcode != 0:
            from .executors import exit_reason

            self.failures.append(f"prepare phase ended early ({exit_reason(self.proc.exitcode)}); "
                                 "trials build what they need")
        self.proc = None
        return self.failures


def _prepare_child(trials: Sequence[Trial], workers: int | None, progress: bool, sender: Any) -> None:
    _set_eval_salt(trials[0])
    # "claimed" comes once from build_missing; a child that dies first ends the wait by EOF
    failures = _prepare(trials, workers, progress, lambda: sender.send("claimed"))
    sender.send(failures)
    sender.close()


def _prepare(trials: Sequence[Trial], workers: int | None, progress: bool,
             on_claimed: Any = None) -> list[str]:
    import os
    import sys

    from papergym import cache

    from .executors import limit_threads

    seeds: dict[str, tuple[Trial, set[int]]] = {}
    for t in trials:  # one Task per (problem, tier, cell): every seed it will be asked for
        cell = json.dumps([t.problem_id, t.tier, t.problem_kwargs], sort_keys=True, default=str)
        seeds.setdefault(cell, (t, set()))[1].add(t.seed)
    entries, failures = [], []
    for t, cell_seeds in seeds.values():
        try:
            task = papergym.make_task(t.problem_id, tier=t.tier, **t.problem_kwargs)
            entries += task.cache_entries(sorted(cell_seeds))
        except Exception as err:  # noqa: BLE001 - the trials will report it with a traceback
            failures.append(f"prepare {t.problem_id} {t.problem_kwargs}: {type(err).__name__}: {err}")
    todo = cache.missing(entries)
    if progress and todo:
        print(f"preparing {len(todo)} cache entries in {cache.cache_dir()} (built once, then "
              "reused by every run; trials start as the last builds finish)", file=sys.stderr,
              flush=True)
    started, finished = time.perf_counter(), 0

    def done(entry: cache.Entry, error: str | None) -> None:
        nonlocal finished
        finished += 1
        if progress:
            state = "failed" if error else "built"
            print(f"  [{finished}/{len(todo)}, {time.perf_counter() - started:.0f} s] {state} "
                  f"{entry.namespace} {cache.canonical(entry.config)[:80]}", file=sys.stderr,
                  flush=True)

    failures += cache.build_missing(todo, workers=workers or os.cpu_count() or 1,
                                    setup=limit_threads, on_done=done, on_claimed=on_claimed)
    if progress:
        for line in failures:
            print(f"  not prepared (its trials will retry): {line.splitlines()[0]}",
                  file=sys.stderr)
    return failures


def stored_plugins(store: Store, exclude: Sequence[type[Agent]] = ()) -> list[tuple[str, type[Agent]]]:
    """``(ref, stand-in)`` of every plug-in recorded in ``store`` (rebuilt from its stored
    declarations; nothing imported), one per ``family/id``: the version run last, unless
    ``exclude`` holds a plug-in of that id (one named on the command line wins)."""
    taken = {cls.qualified_id() for cls in exclude}
    chosen = []
    for record in store.plugins():  # most recent first
        cls = stand_in_from_record(record)
        if cls.qualified_id() not in taken:
            taken.add(cls.qualified_id())
            chosen.append((record["ref"], cls))
    return chosen


def rows_for(spec: BenchmarkSpec, tier: str, store: Store,
             extra_agents: Sequence[Any] = (), include_stored_plugins: bool = True,
             ) -> tuple[list[Trial], list[Row]]:
    """The stored rows of exactly this spec's current trials (stale keys drop out).

    A key names a computation, not its place in a table: the same trial may appear in two
    sections or benchmarks, or under another label. Each returned row therefore carries the
    benchmark, section, label and role of the trial that asked for it.

    Plug-ins the store recorded count as trials of the spec where they have a stored row
    (``include_stored_plugins``), so a report written later still ranks them."""
    extra_agents = [_absolute_ref(ref) for ref in plugin_refs(extra_agents)]
    described = (stored_plugins(store, [describe_agent_file(ref) for ref in extra_agents])
                 if include_stored_plugins else [])
    trials = expand_trials(spec, tier, extra_agents=extra_agents, described=described)
    stored = {r.key: r for r in store.get_many({t.key for t in trials})}
    if described:  # a recorded plug-in with no row here is no trial of this benchmark
        with_rows = {t.agent_ref for t in trials if t.key in stored}
        recorded = {ref for ref, _ in described}
        trials = [t for t in trials if t.agent_ref not in recorded or t.agent_ref in with_rows]
    rows = [
        dataclasses.replace(stored[t.key], benchmark=t.benchmark, section=t.section,
                            agent=t.agent, agent_role=t.agent_role,
                            problem_kwargs=t.problem_kwargs)
        for t in trials if t.key in stored
    ]
    return trials, rows

