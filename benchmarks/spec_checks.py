"""A loaded spec checked against the registries, before any trial runs.

``load_spec`` validates a spec's shape; :func:`check_spec` validates what it refers to, once
the spec's ``imports:`` are imported: every section's problem is registered, every tier and
cell kwarg is an argument the problem declares (``ProblemSpec.arguments()``), every metric
named (primary, secondary, claims) is one the problem's Task declares in ``metrics``, every
agent is registered, accepts its config and can act on the problem, every claim's ``where:``
and ``axis`` name a cell argument, and the requested tier exists. A run that would otherwise
ignore a typo, or fail in every trial, fails here with one line naming the file and field.
"""

from __future__ import annotations

import fnmatch
import importlib
import inspect
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from papergym.agent import REGISTRY, Agent, AgentError
from papergym.problem import metric_direction
from papergym.registry import ProblemSpec
from papergym.registry import spec as problem_spec

from . import spec as _spec_module
from .spec import BenchmarkSpec, ProblemSection, SpecError, margin_test_refusal, power_errors


def import_targets(targets: Sequence[str], origin: str, fields: Sequence[str] | None = None) -> None:
    """Import each module or ``.py`` file; a failure is a :class:`SpecError` naming the field."""
    from .runner import load_python_file

    for i, target in enumerate(targets):
        field = fields[i] if fields is not None else f"imports.{i}"
        try:
            if target.endswith(".py"):
                load_python_file(Path(target))
            else:
                importlib.import_module(target)
        except SpecError:
            raise
        except Exception as err:  # noqa: BLE001 - any import failure is the spec's to report
            detail = " ".join(str(err).split()) or type(err).__name__
            raise SpecError(f"{origin}: field {field}: cannot import {target!r} "
                            f"({type(err).__name__}: {detail})") from None


def can_act_on(cls: type[Agent], problem: ProblemSpec) -> bool:
    """Whether the agent declares it can act on ``problem`` (``Agent.can_act_on`` where the
    agent base class has it; else its ``problems`` patterns, or its family)."""
    method = getattr(cls, "can_act_on", None)
    if callable(method):
        return bool(method(problem.id))
    patterns = tuple(getattr(cls, "problems", ()) or ())
    if patterns:
        return any(fnmatch.fnmatchcase(problem.id, p) for p in patterns)
    return cls.family == problem.family


def check_spec(spec: BenchmarkSpec, path: str | Path | None = None, tier: str | None = None,
               extra_agents: Sequence[type[Agent]] = ()) -> None:
    """Raise :class:`SpecError` (one line: file, field, what is wrong) at the first problem.

    ``tier``: the tier about to run; it must exist in at least one section (sections without
    it are skipped by the runner, and :func:`sections_without` names them)."""
    origin = str(path) if path is not None else f"benchmark {spec.name!r}"

    def fail(field: str, message: str) -> None:
        raise SpecError(f"{origin}: field {field}: {message}")

    for i, section in enumerate(spec.problems):
        where = f"problems.{i}"
        try:
            problem = problem_spec(section.problem)
        except KeyError:
            fail(f"{where}.problem", f"unknown problem {section.problem!r}; registered problems "
                 "are listed by `papergym list problems` (does `imports:` name its module?)")
        _check_kwargs(section, problem, where, fail)
        _check_metrics(section, problem, where, fail)
        _check_agents(section, problem, where, fail)
    # A plug-in runs on the sections it can act on and skips the others (the runner says
    # which and why); one that fits no section at all is a mistake.
    for cls in extra_agents:
        if not any(can_act_on(cls, problem_spec(s.problem)) for s in spec.problems):
            fail("--agent", f"{cls.qualified_id()} can act on none of this benchmark's problems "
                 f"({', '.join(sorted({s.problem for s in spec.problems}))}); see its `family` "
                 "and `problems`")
    _check_claims(spec, fail)
    _check_matched(spec, fail)
    if tier is not None and not any(tier in s.tiers for s in spec.problems):
        tiers = sorted({t for s in spec.problems for t in s.tiers})
        fail("problems.*.tiers", f"no section defines tier {tier!r}; this benchmark has {tiers}")
    # Last: a claim that cannot reach its alpha at standard or full (checked after everything
    # above, so that a misnamed field is reported as that, not as a unit count of zero).
    if _spec_module.STRICT_POWER:  # read at call time: a test may switch it off
        errors = power_errors(spec)
        if errors:
            more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
            raise SpecError(f"{origin}: claim {errors[0]}{more}")


def sections_without(spec: BenchmarkSpec, tier: str) -> list[str]:
    """Sections that do not define ``tier`` (the runner skips them and says so)."""
    return [s.name for s in spec.problems if tier not in s.tiers]


def _check_kwargs(section: ProblemSection, problem: ProblemSpec, where: str, fail) -> None:
    arguments = problem.arguments()
    known = sorted(a for a in arguments if a != "tier")
    for tier, tier_spec in section.tiers.items():
        sources: list[tuple[str, dict[str, Any]]] = [(f"tiers.{tier}.kwargs", tier_spec.kwargs)]
        sources.append((f"tiers.{tier}.grid", tier_spec.grid))
        sources += [(f"tiers.{tier}.cells.{j}", c) for j, c in enumerate(tier_spec.cells)]
        for field, kwargs in sources:
            for name in kwargs:
                if name == "tier":
                    fail(f"{where}.{field}.tier", "the tier is chosen by the run (--tier), not "
                         "a kwarg")
                if name not in arguments:
                    fail(f"{where}.{field}.{name}", f"{problem.id} has no argument {name!r}; "
                         f"its arguments are {', '.join(known)}")
                grid = field.endswith(".grid") and isinstance(kwargs[name], list)
                for j, value in enumerate(kwargs[name] if grid else [kwargs[name]]):
                    why = _bad_value(arguments[name], value)
                    if why:
                        at = f"{where}.{field}.{name}" + (f".{j}" if grid else "")
                        fail(at, f"{problem.id} argument {name!r}: {why}")


def _bad_value(param: inspect.Parameter, value: Any) -> str | None:
    """Why ``value`` does not fit the argument's annotation (None: it fits, or the annotation
    is not one a value can be checked against). Lax, as a constructor would take it: 1 is a
    valid float and a list a valid tuple; "1e5" is no int (YAML reads it as a string)."""
    hint = param.annotation
    if hint is inspect.Parameter.empty or isinstance(hint, str) or hint is Any:
        return None
    try:
        adapter = TypeAdapter(hint)
    except Exception:  # noqa: BLE001 - arrays, callables, classes: not checkable from YAML
        return None
    try:
        adapter.validate_python(value)
    except ValidationError as err:
        first = err.errors()[0]
        return f"{value!r} is not {_hint_name(hint)} ({first['msg'][0].lower()}{first['msg'][1:]})"
    return None


def _hint_name(hint: Any) -> str:
    name = getattr(hint, "__name__", None)
    return f"a {name}" if name and not getattr(hint, "__args__", None) else f"of type {hint}"


def _check_metrics(section: ProblemSection, problem: ProblemSpec, where: str, fail) -> None:
    # name -> "max" | "min" (a declaration may carry bounds: (direction, low, high))
    declared = {name: metric_direction(d) for name, d in
                (getattr(problem.task_class(), "metrics", {}) or {}).items()}
    if not declared:
        return  # a Task that declares no metrics cannot be checked by name
    names = [("metric.name", section.metric.name)]
    names += [(f"secondary.{j}", m) for j, m in enumerate(section.secondary)]
    for field, name in names:
        if name not in declared:
            fail(f"{where}.{field}", f"{problem.id} reports no metric {name!r}; its metrics are "
                 f"{', '.join(sorted(declared))}")
    if section.metric.direction != declared[section.metric.name]:
        fail(f"{where}.metric.direction", f"{problem.id} declares {section.metric.name!r} as "
             f"{declared[section.metric.name]!r}, the spec says {section.metric.direction!r}")


def _check_agents(section: ProblemSection, problem: ProblemSpec, where: str, fail) -> None:
    for j, entry in enumerate(section.agents):
        field = f"{where}.agents.{j}"
        try:
            cls = REGISTRY.get(entry.id, family=problem.family)
            cls.validate_config(entry.config)
            for tier in entry.tier_config:
                cls.validate_config(entry.config_at(tier))
        except AgentError as err:
            fail(field, " ".join(str(err).split()))
        if not can_act_on(cls, problem):
            fail(f"{field}.id", f"agent {cls.qualified_id()} cannot act on {problem.id} "
                 "(see its `problems` declaration)")
        if section.independent_items and cls.seed_artifact:
            fail(f"{where}.independent_items", f"agent {cls.qualified_id()} trains or samples a "
                 "per-seed artifact (Agent.seed_artifact), so the items of one seed share it "
                 "and are not independent; remove independent_items (the seed is then the "
                 "unit) or set seed_artifact = False on a deterministic rule agent")


def _check_claims(spec: BenchmarkSpec, fail) -> None:
    sections = {s.name: s for s in spec.problems}
    for i, claim in enumerate(spec.claims):
        section = sections[claim.problem]  # BenchmarkSpec already checked it resolves
        problem = problem_spec(section.problem)
        declared = dict(getattr(problem.task_class(), "metrics", {}) or {})
        # instance-unit claims may read per-instance metrics (EvalResult.units), not declared
        named = [("metric", claim.metric)] + [
            (f"{side}.metric", getattr(claim, side).metric) for side in ("x", "y")
            if getattr(claim, side) is not None]
        for field, metric in named:
            if metric is not None and declared and claim.unit == "trial" \
                    and metric not in declared:
                fail(f"claims.{i}.{field}", f"{problem.id} reports no metric {metric!r}; its "
                     f"metrics are {', '.join(sorted(declared))}")
        refused = margin_test_refusal(claim, section)
        if refused:
            fail(f"claims.{i}.margin", refused)
        cells = _resolved_cells(section, problem, claim.tiers)
        if not cells:
            continue  # the claim is evaluated at no tier this section has
        keys = {k for cell in cells for k in cell}
        filters = {"where": claim.where, "agent_at": claim.agent_at,
                   "baseline_at": claim.baseline_at, "larger_at": claim.larger_at,
                   "than_at": claim.than_at}
        for name, cell_filter in filters.items():
            for key, wanted in cell_filter.items():
                if key not in keys:
                    fail(f"claims.{i}.{name}.{key}", f"no cell of section {section.name!r} sets "
                         f"{key!r}; cells set {sorted(keys)}")
                options = wanted if isinstance(wanted, list) else [wanted]
                if not any(cell.get(key) in options for cell in cells):
                    seen = sorted({repr(c.get(key)) for c in cells})
                    fail(f"claims.{i}.{name}.{key}", f"no cell has {key}={wanted!r}; cells "
                         f"have {', '.join(seen)}")
        if claim.axis is not None and claim.axis not in keys:
            fail(f"claims.{i}.axis", f"no cell of section {section.name!r} sets {claim.axis!r}; "
                 f"cells set {sorted(keys)}")


def _resolved_cells(section: ProblemSection, problem: ProblemSpec,
                    tiers: Sequence[str]) -> list[dict[str, Any]]:
    """The resolved kwargs (tier defaults + cell) of every cell at the given tiers."""
    cells = []
    for tier, tier_spec in section.tiers.items():
        if tier in tiers:
            defaults = problem.tier_kwargs(tier)
            cells += [{**defaults, **cell} for cell in tier_spec.expand_cells()]
    return cells


def _check_matched(spec: BenchmarkSpec, fail) -> None:
    """Each claim's ``matched`` keys hold equal across the agents it compares
    (papergym.benchmarks.matched)."""
    from .matched import matched_errors

    def resolve(section: ProblemSection, entry: Any, tier: str) -> dict[str, Any]:
        family = problem_spec(section.problem).family
        cls = REGISTRY.get(entry.id, family=family)
        return cls.validate_config(entry.config_at(tier)).model_dump()

    def arguments(section: ProblemSection) -> set[str]:
        return {a for a in problem_spec(section.problem).arguments() if a != "tier"}

    errors = matched_errors(spec, resolve, arguments)
    if errors:
        fail(*errors[0])
