"""The agent side of the contract and the agent registry.

An agent is a class with four declarations and one method::

    class RepeatedRiskMinimization(Agent):
        id = "rrm"                      # unique within its family
        family = "performative"
        role = "baseline"               # "method" (the paper's own) | "baseline" | "reference"
        paper = "anagnostides2026"
        problems = ("papergym/PerformativeAffine-v0", "papergym/StrategicCredit-v0")

        class Config(AgentConfig):      # validated, with the paper's defaults
            damping: float = 1.0

        def solve(self, view, budget, seed):
            ...                         # train / tune on the view, within the budget
            return artifact             # a policy, a solution or a model

``problems`` lists the problem ids the agent can act on (``fnmatch`` patterns); empty means
every problem of its ``family``. The runner schedules an agent only on the sections whose
problem it fits and says which it skipped and why.

Subclasses register themselves when their module is imported. Third-party agents come
from the ``papergym.agents`` entry-point group or from ``path/to/file.py:ClassName``;
both end up in the same registry and run exactly like built-in ones.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import linecache
import pkgutil
import sys
import types
from abc import ABC, abstractmethod
from collections.abc import Sequence
from fnmatch import fnmatchcase
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from papergym.safe import NAME_PATTERN

ROLES = ("method", "baseline", "reference")
Role = Literal["method", "baseline", "reference"]


class AgentConfig(BaseModel):
    """Base of every agent Config: unknown fields are errors, not silently ignored."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class AgentError(ValueError):
    """A bad agent id, declaration or config; the message names the agent and the fix."""


class Agent(ABC):
    id: ClassVar[str] = ""
    family: ClassVar[str] = ""
    role: ClassVar[Role] = "baseline"
    paper: ClassVar[str] = ""
    Config: ClassVar[type[AgentConfig]] = AgentConfig
    problems: ClassVar[tuple[str, ...]] = ()  # fnmatch patterns of problem ids; () = whole family
    # Whether solve() trains or samples an artifact that depends on the seed (a model, a
    # sampled policy). True unless the agent is a deterministic rule: then a trial's items are
    # scored by the same artifact at every seed, and a section of such agents may declare
    # ``independent_items: true`` (the items, not the seeds, are the independent units).
    seed_artifact: ClassVar[bool] = True

    def __init__(self, config: AgentConfig | dict[str, Any] | None = None) -> None:
        self.config = self.validate_config(config)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.id and not inspect.isabstract(cls):
            _check_declarations(cls)
            REGISTRY.add(cls)

    @classmethod
    def validate_config(cls, config: AgentConfig | dict[str, Any] | None) -> AgentConfig:
        if isinstance(config, cls.Config):
            return config
        try:
            return cls.Config(**(config or {}))
        except ValidationError as err:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'config'}: {e['msg']}"
                for e in err.errors()
            )
            fields = ", ".join(cls.Config.model_fields) or "(none)"
            raise AgentError(
                f"agent {cls.qualified_id()!r}: bad config ({problems}); its fields are {fields}"
            ) from None

    @classmethod
    def can_act_on(cls, problem_id: str) -> bool:
        """Whether the agent can act on ``problem_id``: a problem of its family matching one
        of its ``problems`` patterns (every problem of the family when it declares none)."""
        from papergym.registry import spec

        try:
            family = spec(problem_id).family
        except KeyError:
            return False
        if family != cls.family:
            return False
        return not cls.problems or any(fnmatchcase(problem_id, p) for p in cls.problems)

    @classmethod
    def qualified_id(cls) -> str:
        return f"{cls.family}/{cls.id}"

    @classmethod
    def code_hash(cls) -> str:
        """Hash of the agent's code: its module and, for a packaged agent, every .py file of
        its family package (helpers shared by several agents), so a change re-keys trials."""
        module = sys.modules[cls.__module__]
        digest = hashlib.sha256(inspect.getsource(module).encode())
        if module.__package__ and module.__package__.startswith("papergym.agents."):
            family_root = module.__package__.split(".")[:3]
            folder = Path(sys.modules[".".join(family_root)].__file__).parent
            for path in sorted(folder.rglob("*.py")):
                digest.update(path.relative_to(folder).as_posix().encode())
                digest.update(path.read_bytes())
        return digest.hexdigest()[:16]

    @abstractmethod
    def solve(self, view: Any, budget: Any, seed: int) -> Any:
        """Train or tune on ``view`` within ``budget``; return the artifact to be scored."""


def _check_declarations(cls: type[Agent]) -> None:
    where = f"{cls.__module__}.{cls.__qualname__}"
    if not cls.family:
        raise AgentError(f"{where} declares id={cls.id!r} but no family")
    for what, value in (("id", cls.id), ("family", cls.family)):
        if not NAME_PATTERN.match(str(value)):  # ids name rows, folders and links
            raise AgentError(f"{where}: {what} {value!r} must be 1-64 letters, digits, '_', '.' "
                             "or '-', starting with a letter or digit")
    if cls.role not in ROLES:
        raise AgentError(f"{where}: role must be one of {ROLES}, got {cls.role!r}")
    if not (isinstance(cls.Config, type) and issubclass(cls.Config, AgentConfig)):
        raise AgentError(f"{where}: Config must subclass papergym.AgentConfig")
    if isinstance(cls.problems, str) or not all(isinstance(p, str) and p for p in cls.problems):
        raise AgentError(f"{where}: problems must be a tuple of problem-id patterns, "
                         f"e.g. ('papergym/PerformativeAffine-v0',), got {cls.problems!r}")


class AgentRegistry:
    """Agents by qualified id ``family/id``; a bare ``id`` works when it is unambiguous."""

    ENTRY_POINT_GROUP = "papergym.agents"

    def __init__(self) -> None:
        self._agents: dict[str, type[Agent]] = {}
        self._entry_points_loaded = False
        self._families_loaded: set[str] = set()

    def add(self, cls: type[Agent]) -> None:
        key = cls.qualified_id()
        existing = self._agents.get(key)
        if existing is not None and getattr(existing, "plugin_ref", None) is not None \
                and _refers_to(existing.plugin_ref, cls):
            existing = None  # the real class of an entry point's stand-in (agent process)
        if existing is not None and existing.__module__ != cls.__module__:
            raise AgentError(
                f"agent id {key!r} is taken by {existing.__module__}.{existing.__qualname__}; "
                f"{cls.__module__}.{cls.__qualname__} needs another id"
            )
        self._agents[key] = cls

    def load_family(self, family: str) -> None:
        """Import the built-in agents of one family (papergym.agents.<family>), if any."""
        if family in self._families_loaded:
            return
        self._families_loaded.add(family)
        if importlib.util.find_spec(f"papergym.agents.{family}") is not None:
            importlib.import_module(f"papergym.agents.{family}")

    def load_entry_points(self) -> None:
        """Import every built-in family under papergym.agents, then third-party plug-ins."""
        if self._entry_points_loaded:
            return
        self._entry_points_loaded = True
        import papergym.agents as builtin_agents

        for module in pkgutil.iter_modules(builtin_agents.__path__):
            if module.ispkg:
                self.load_family(module.name)
        from papergym.isolation import in_agent_process

        if in_agent_process():  # where a submission's code may run
            for ep in entry_points(group=self.ENTRY_POINT_GROUP):
                obj = ep.load()  # importing the module registers its Agent subclasses
                if isinstance(obj, type) and issubclass(obj, Agent) and obj.id:
                    self.add(obj)
            return
        from papergym.plugins import entry_point_stand_ins

        # Elsewhere (the runner, a listing) an entry point is never imported: a sandbox reads
        # its declarations, and the registry holds a stand-in that trials resolve by its
        # ``plugin_ref`` in their agent process.
        points = list(entry_points(group=self.ENTRY_POINT_GROUP))
        for stand_in in entry_point_stand_ins(points, self.ENTRY_POINT_GROUP):
            self.add(stand_in)

    def builtins(self, family: str | None = None) -> list[type[Agent]]:
        """The registered agents that papergym ships (``papergym.agents.*``)."""
        return [c for c in self._agents.values()
                if c.__module__.startswith("papergym.agents.")
                and (family is None or c.family == family)]

    def get(self, name: str, family: str | None = None) -> type[Agent]:
        family_hint = family or (name.split("/")[0] if "/" in name else None)
        if family_hint is not None:
            self.load_family(family_hint)
        if not self._resolvable(name, family):
            self.load_entry_points()
        if "/" in name:
            if name in self._agents:
                return self._agents[name]
        else:
            matches = [
                c for c in self._agents.values()
                if c.id == name and (family is None or c.family == family)
            ]
            if len(matches) == 1:
                return matches[0]
            if len(matches) > 1:
                options = ", ".join(sorted(c.qualified_id() for c in matches))
                raise AgentError(f"agent id {name!r} is ambiguous; use one of {options}")
        known = ", ".join(sorted(self.ids(family))) or "(none registered)"
        scope = f" in family {family!r}" if family else ""
        raise AgentError(f"unknown agent {name!r}{scope}; known agents: {known}")

    def _resolvable(self, name: str, family: str | None) -> bool:
        if "/" in name:
            return name in self._agents
        return any(c.id == name and family in (None, c.family) for c in self._agents.values())

    def ids(self, family: str | None = None) -> list[str]:
        self.load_entry_points()
        return [k for k, c in self._agents.items() if family is None or c.family == family]

    def all(self) -> list[type[Agent]]:
        self.load_entry_points()
        return sorted(self._agents.values(), key=lambda c: c.qualified_id())


REGISTRY = AgentRegistry()


def _refers_to(ref: str, cls: type) -> bool:
    module, _, qualname = ref.rpartition(":")
    return cls.__module__ == module and cls.__qualname__ == qualname


def plugin_module_name(path: Path) -> str:
    """The module name a plug-in file is imported under (one per absolute path)."""
    return f"papergym_user_agent_{hashlib.sha256(str(path).encode()).hexdigest()[:12]}"


def load_agent_file(spec: str, source: bytes | None = None) -> type[Agent]:
    """Import ``path/to/file.py:ClassName`` (or ``module.path:ClassName``) and register it.

    ``source``: the file's bytes as the runner read them (a trial's agent process gets them
    from its problem process, so the file need not be readable by the agent's user).
    This runs the plug-in's code: the runner never calls it (it reads a plug-in's declarations
    through :func:`papergym.plugins.describe_agent_file`); sandboxed agent processes do."""
    target, sep, class_name = spec.rpartition(":")
    if not sep or not target or not class_name:
        raise AgentError(f"--agent expects path/to/file.py:ClassName, got {spec!r}")
    if target.endswith(".py"):
        path = Path(target).resolve()
        module_name = plugin_module_name(path)
        if module_name in sys.modules:  # loaded once per process
            module = sys.modules[module_name]
        else:
            for key, existing in list(REGISTRY._agents.items()):
                if _same_file(existing, path):  # imported here from this file (a notebook's
                    del REGISTRY._agents[key]  # MyAgent): this import's classes replace them
            module = _import_source(module_name, path, spec, source)
    else:
        module = importlib.import_module(target)
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, Agent)):
        raise AgentError(f"--agent {spec!r}: {class_name!r} is not a papergym.Agent subclass")
    if not cls.id:
        raise AgentError(f"--agent {spec!r}: {class_name} must declare an id")
    REGISTRY.add(cls)
    return cls


def _same_file(cls: type[Agent] | None, target: str | Path) -> bool:
    try:
        return cls is not None and Path(inspect.getfile(cls)).resolve() == \
            Path(target).resolve()
    except TypeError:
        return False


def add_plugin_folders(paths: Sequence[str | Path]) -> None:
    """Put the folders of the plug-in files ``paths`` on sys.path, so helper modules beside a
    plug-in import as they would in a script; appended, so they never shadow an installed
    module. Only agent processes call this, each for its own trial's plug-in alone: they run
    that plug-in's code anyway, and no other submitter's folder is any of theirs."""
    for path in paths:
        folder = str(Path(path).resolve().parent)
        if folder not in sys.path:
            sys.path.append(folder)


def _import_source(module_name: str, path: Path, spec: str,
                   source: bytes | None) -> types.ModuleType:
    if source is None:
        if not path.is_file():
            raise AgentError(f"--agent {spec!r}: no such file {path}")
        source = path.read_bytes()
    module = types.ModuleType(module_name)
    module.__file__ = str(path)
    add_plugin_folders([path])
    # inspect.getsource (the code hash, tracebacks) reads the lines from here, not the file
    linecache.cache[str(path)] = (len(source), None, source.decode().splitlines(True), str(path))
    sys.modules[module_name] = module
    try:
        exec(compile(source, str(path), "exec"), module.__dict__)  # noqa: S102 - the plug-in
    except BaseException:
        del sys.modules[module_name]
        raise
    return module
