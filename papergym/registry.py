"""The problem registry: one id, three kinds (Gymnasium Env, PettingZoo ParallelEnv, Task).

``register`` records an id with its kind, entry point, per-tier default arguments and the
Task that scores it. Gymnasium envs are also registered with gymnasium under the
``papergym`` namespace, so ``gymnasium.make("papergym:papergym/<Name>-v0")`` works.

``make(id, tier=..., **kwargs)`` builds what a user trains on (the Env, the ParallelEnv or
the Task); ``make_task(id, tier=..., **kwargs)`` builds what the runner scores with.
Tier defaults come first, explicit kwargs override them: a tier changes sizes and
budgets, never the rules.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import gymnasium
import gymnasium.wrappers

from papergym.isolation import refuse_problem_in_agent
from papergym.problem import TIERS, EnvTask, Task

Kind = Literal["env", "parallel_env", "task"]
ID_PATTERN = re.compile(r"^papergym/[A-Z][A-Za-z0-9]*-v\d+$")


@dataclass(frozen=True)
class ProblemSpec:
    id: str
    kind: Kind
    entry_point: str | Callable[..., Any]
    family: str
    paper: str
    tiers: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    task: str | Callable[..., Task] | None = None
    changelog: Mapping[str, str] = field(default_factory=dict)
    max_episode_steps: int | str | None = None

    def tier_kwargs(self, tier: str) -> dict[str, Any]:
        if tier not in TIERS:
            raise ValueError(f"unknown tier {tier!r}; choose one of {', '.join(TIERS)}")
        return dict(self.tiers.get(tier, {}))

    def preload(self) -> None:
        """Import the problem's modules now (a runner does this before forking workers, so
        each trial does not pay the imports again)."""
        for target in (self.entry_point, self.task):
            if isinstance(target, str):
                _resolve(target)

    def task_class(self) -> type[Task]:
        """The Task that scores this problem (the entry point itself for a task-kind problem)."""
        if self.kind == "task":
            return _resolve(self.entry_point)  # type: ignore[return-value]
        return _resolve(self.task) if self.task is not None else EnvTask  # type: ignore[return-value]

    def arguments(self) -> dict[str, inspect.Parameter]:
        """Every keyword argument the problem accepts, by name: the env constructor's (for a
        ``parallel_env(**kwargs)`` factory, the class it is annotated to return), the Task
        constructor's, the Task's ``task_kwargs`` and ``extra_arguments``, and ``tier``.

        A ``**kwargs`` catch-all is not an argument: it forwards to the other constructor or
        to a builder the Task names in ``extra_arguments``. A spec's cell and tier kwargs are
        checked against these names before any trial runs, so a typo is an error, not a
        silently ignored value."""
        found: dict[str, inspect.Parameter] = {}
        constructors = [self.task_class()]
        if self.kind != "task":
            constructors.insert(0, _constructor(_resolve(self.entry_point)))
        for target in constructors:
            for name, param in _keyword_parameters(target).items():
                found.setdefault(name, param)
        task_cls = constructors[-1]
        for name in (*getattr(task_cls, "task_kwargs", ()), *getattr(task_cls, "extra_arguments", ())):
            found.setdefault(name, inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY))
        found.pop("env_factory", None)  # EnvTask's, filled by make_task
        found.setdefault("tier", inspect.Parameter("tier", inspect.Parameter.KEYWORD_ONLY,
                                                   default="smoke"))
        return found

    def code_hash(self) -> str:
        """Content hash of the problem's code (its package's .py files) and tier defaults.

        Stored with every result: a silent change to a versioned problem shows in the table.
        """
        digest = hashlib.sha256(repr(sorted(self.tiers.items())).encode())
        for target in (self.entry_point, self.task):
            if target is None:
                continue
            obj = _resolve(target) if isinstance(target, str) else target
            folder = Path(inspect.getfile(obj)).parent
            for path in sorted(folder.rglob("*.py")):
                digest.update(path.name.encode())
                digest.update(path.read_bytes())
        return digest.hexdigest()[:16]


_PROBLEMS: dict[str, ProblemSpec] = {}


def _resolve(target: str | Callable[..., Any]) -> Callable[..., Any]:
    if callable(target):
        return target
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def _constructor(target: Callable[..., Any]) -> Callable[..., Any]:
    """A factory taking only ``**kwargs`` stands for the class it returns (PettingZoo's
    ``parallel_env(**kwargs) -> Env`` idiom)."""
    if inspect.isclass(target):
        return target
    params = inspect.signature(target).parameters.values()
    if all(p.kind == inspect.Parameter.VAR_KEYWORD for p in params):
        try:
            returned = inspect.signature(target, eval_str=True).return_annotation
        except (NameError, TypeError):
            return target
        if inspect.isclass(returned):
            return returned
    return target


def _keyword_parameters(target: Callable[..., Any]) -> dict[str, inspect.Parameter]:
    try:  # annotations resolved to types where they can be (the spec check validates values)
        params = inspect.signature(target, eval_str=True).parameters
    except (NameError, TypeError, SyntaxError):
        params = inspect.signature(target).parameters
    keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return {name: p for name, p in params.items() if p.kind in keyword and name != "self"}


def register(
    id: str,
    entry_point: str | Callable[..., Any],
    *,
    kind: Kind,
    family: str,
    paper: str,
    tiers: Mapping[str, Mapping[str, Any]] | None = None,
    task: str | Callable[..., Task] | None = None,
    changelog: Mapping[str, str] | None = None,
    max_episode_steps: int | str | None = None,
    vector_entry_point: str | Callable[..., Any] | None = None,
) -> ProblemSpec:
    """Register a problem. ``task`` scores an env; without one, :class:`EnvTask` is used.
    ``vector_entry_point`` (env kind) is passed to ``gymnasium.register``, so that
    ``gymnasium.make_vec(id, vectorization_mode="vector_entry_point")`` builds a natively
    batched env.

    ``max_episode_steps`` (env kind): an int is gymnasium's own (a ``TimeLimit`` at that step);
    a string names the attribute of the constructed env that holds its episode length, for an
    env whose length is an argument (``"T"``, ``"max_steps"``): ``gymnasium.make`` then adds
    the ``TimeLimit`` at the length of the env it built, so ``env.spec.max_episode_steps`` is
    right at every tier and argument, and a longer episode asked for is never cut short."""
    if vector_entry_point is not None and kind != "env":
        raise ValueError(f"{id}: vector_entry_point is for env problems only")
    if not ID_PATTERN.match(id):
        raise ValueError(f"problem id {id!r} must look like papergym/<Name>-v<N>")
    if kind not in ("env", "parallel_env", "task"):
        raise ValueError(f"kind must be env, parallel_env or task, got {kind!r}")
    unknown_tiers = set(tiers or {}) - set(TIERS)
    if unknown_tiers:
        raise ValueError(f"{id}: unknown tiers {sorted(unknown_tiers)}; use {TIERS}")
    spec = ProblemSpec(
        id=id, kind=kind, entry_point=entry_point, family=family, paper=paper,
        tiers=dict(tiers or {}), task=task, changelog=dict(changelog or {}),
        max_episode_steps=max_episode_steps,
    )
    _PROBLEMS[id] = spec
    if isinstance(max_episode_steps, str) and kind != "env":
        raise ValueError(f"{id}: max_episode_steps is for env problems only")
    if kind == "env" and id not in gymnasium.registry:
        if isinstance(max_episode_steps, str):
            gymnasium.register(id=id, entry_point=functools.partial(
                _time_limited, entry_point, max_episode_steps), vector_entry_point=vector_entry_point)
        else:
            gymnasium.register(id=id, entry_point=entry_point, max_episode_steps=max_episode_steps,
                               vector_entry_point=vector_entry_point)
    elif kind != "env" and id not in gymnasium.registry:
        # gymnasium.make on a task or parallel env says what it is and how to use it, instead
        # of "doesn't exist, did you mean ..." (the id is registered only to answer that)
        gymnasium.register(id=id, entry_point=functools.partial(_not_a_gymnasium_env, id, kind))
    return spec


def _time_limited(entry_point: str | Callable[..., Any], length_attr: str,
                  **kwargs: Any) -> gymnasium.Env:
    """The env of ``entry_point`` in a ``TimeLimit`` at its own episode length (its attribute
    ``length_attr``): the env truncates there itself; the wrapper makes gymnasium know it."""
    env = _resolve(entry_point)(**kwargs)
    length = getattr(env.unwrapped, length_attr)
    if isinstance(length, bool) or not isinstance(length, int) or length < 1:
        raise TypeError(f"{type(env.unwrapped).__name__}.{length_attr} must be a positive int "
                        f"(the episode length), got {length!r}")
    return gymnasium.wrappers.TimeLimit(env, max_episode_steps=length)


class NotAGymnasiumEnv(gymnasium.error.Error):
    """``gymnasium.make`` on the id of a papergym Task or PettingZoo parallel env."""


def _not_a_gymnasium_env(id: str, kind: str, **kwargs: Any) -> Any:
    if kind == "task":
        raise NotAGymnasiumEnv(
            f"{id} is a papergym Task, not a Gymnasium env: it has no step loop (the agent trains "
            f"on its data or generator and returns an artifact that the task scores). Use\n"
            f"    task = papergym.make_task({id!r}, tier='smoke')\n"
            f"    view = task.train_view(seed, task.budget)   # what an agent may see\n"
            f"    result = task.evaluate(artifact, seed)       # the problem's own metrics\n"
            f"or `papergym run <benchmark>` with an agent (docs/contract.md, docs/envs/).")
    raise NotAGymnasiumEnv(
        f"{id} is a PettingZoo ParallelEnv (several learners act at once), not a Gymnasium env: "
        f"use `env = papergym.make({id!r}, tier='smoke')` (a pettingzoo ParallelEnv with "
        f"reset/step over agent dicts), or papergym.make_task({id!r}) for the task that scores it.")


def spec(id: str) -> ProblemSpec:
    _load_builtin_problems()
    if id not in _PROBLEMS:
        known = ", ".join(sorted(_PROBLEMS)) or "(none registered)"
        raise KeyError(f"unknown problem {id!r}; registered problems: {known}")
    return _PROBLEMS[id]


def problems() -> list[ProblemSpec]:
    _load_builtin_problems()
    return [_PROBLEMS[k] for k in sorted(_PROBLEMS)]


def make(id: str, tier: str = "smoke", **kwargs: Any) -> Any:
    """Build a problem for direct use: a gymnasium Env, a PettingZoo ParallelEnv or a Task."""
    refuse_problem_in_agent(f"papergym.make({id!r})")
    s = spec(id)
    merged = {**s.tier_kwargs(tier), **kwargs}
    if s.kind != "task":  # tier defaults meant for the scoring Task do not reach the env
        task_cls = _resolve(s.task) if s.task is not None else EnvTask
        for name in getattr(task_cls, "task_kwargs", ()):
            if name not in kwargs:
                merged.pop(name, None)
    if s.kind == "env":
        return gymnasium.make(id, **merged)
    if s.kind == "parallel_env":
        return _resolve(s.entry_point)(**merged)
    return _resolve(s.entry_point)(tier=tier, **merged)


def make_task(id: str, tier: str = "smoke", **kwargs: Any) -> Task:
    """Build the Task that scores a problem (the Task itself for task-kind problems)."""
    refuse_problem_in_agent(f"papergym.make_task({id!r})")
    s = spec(id)
    merged = {**s.tier_kwargs(tier), **kwargs}
    if s.kind == "task":
        return _resolve(s.entry_point)(tier=tier, **merged)
    if s.task is not None:
        return _resolve(s.task)(tier=tier, **merged)
    if s.kind == "env":
        return EnvTask(lambda **kw: gymnasium.make(id, **kw), tier=tier, **merged)
    raise ValueError(f"{id} is a parallel env with no Task registered; pass task= to register")


_builtins_loaded = False


def _load_builtin_problems() -> None:
    """Import the families under papergym.envs once; each registers its problems."""
    global _builtins_loaded
    if _builtins_loaded:
        return
    _builtins_loaded = True
    import pkgutil

    import papergym.envs as envs_pkg

    for module in pkgutil.iter_modules(envs_pkg.__path__):
        if module.ispkg:
            importlib.import_module(f"papergym.envs.{module.name}")
