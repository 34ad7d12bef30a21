"""Plug-in agents (``--agent path/to/file.py:ClassName``): their code runs only in sandboxed
agent processes, never in the runner.

The runner needs a plug-in's declarations (id, family, problems, role, default config, code
hash) to schedule and key its trials. Importing the file in the runner would run its top-level
code there, and every trial's problem process is forked from the runner: a module that patched
a metric function or opened the results store at import would reach the evaluator. Instead the
runner reads the file's bytes without running them, a sandboxed agent process
(:class:`papergym.isolation.AgentProcess`: another user when the runner is root, resource
limits) imports them and sends the declarations back as plain data, and the runner schedules a
stand-in class that carries only those. Each trial's agent process imports the same bytes.

Entry-point plug-ins (the ``papergym.agents`` group of an installed package) are described the
same way: one sandbox loads every entry point and returns each agent's declarations, and the
registry holds stand-ins whose ``plugin_ref`` (``module:Class``) the trial's agent process
imports. Nothing a submission ships is imported by the runner, a problem process, or a listing.

A plug-in's source is its own: the runner reads a file plug-in's bytes once, keys its trials by
them (so a plug-in that copies a built-in's module name and code hash gets keys of its own),
keeps a copy that only the runner's user can read, and forgets the bytes; each trial's problem
process reads its own plug-in's copy and hands it to its agent process alone.
"""

from __future__ import annotations

import atexit
import hashlib
import inspect
import json
import os
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import create_model

from papergym.agent import Agent, AgentConfig, AgentError, _check_declarations, plugin_module_name

DESCRIBE_CPU_S = 60.0  # importing a plug-in file and reading its declarations
_described: dict[tuple[str, str, str], type[Agent]] = {}  # (ref, sha256, config) -> stand-in
_private_dir: str | None = None  # mode 0700: the runner's copies of plug-in files
_copies: dict[str, str] = {}  # absolute plug-in path -> its private copy (the last described)
_keyed_copies: dict[tuple[str, str], str] = {}  # (path, the trials' code hash) -> private copy


def source_hash(source: bytes | bytearray) -> str:
    return hashlib.sha256(source).hexdigest()


def _read_into_bytearray(path: Path) -> bytearray:
    """The file's bytes in one buffer that the caller can wipe (no other copy is made)."""
    with open(path, "rb", buffering=0) as handle:
        source = bytearray(os.fstat(handle.fileno()).st_size)
        view = memoryview(source)
        filled = 0
        while filled < len(source):
            n = handle.readinto(view[filled:])
            if not n:
                del source[filled:]
                break
            filled += n
        view.release()
    return source


def _keep_private_copy(path: Path, source: bytearray) -> str:
    """Write the bytes to a file only this user can read (the problem process of a trial reads
    its own plug-in from there; the agent's user cannot)."""
    global _private_dir
    if _private_dir is None:
        _private_dir = tempfile.mkdtemp(prefix="papergym-plugins-")  # mode 0700
        atexit.register(shutil.rmtree, _private_dir, True)
    copy = os.path.join(_private_dir, source_hash(source) + ".py")
    fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        written = 0
        while written < len(source):  # unbuffered: no copy of the bytes stays behind
            written += os.write(fd, memoryview(source)[written:])
    finally:
        os.close(fd)
    _copies[str(path)] = copy
    return copy


def _private_copy(ref: str, code_hash: str | None) -> tuple[str, str | None] | None:
    """(absolute path, private copy or None) of the plug-in file ``ref``; the copy of the
    bytes its trials keyed by ``code_hash`` are, when this process described them."""
    target = ref.rpartition(":")[0]
    if not target.endswith(".py"):
        return None
    path = str(Path(target).resolve())
    copy = _keyed_copies.get((path, code_hash)) if code_hash else None
    return path, copy or _copies.get(path)


def plugin_source(ref: str, code_hash: str | None = None) -> bytes | None:
    """The bytes of the plug-in file ``ref`` names, for this trial's agent process only: the
    runner's private copy of the bytes the trial's ``code_hash`` keys (the file may have
    changed or be unreadable since), else the file; ``None`` for a reference that is not a
    file."""
    found = _private_copy(ref, code_hash)
    if found is None:
        return None
    path, copy = found
    if copy is not None and os.path.exists(copy):
        return Path(copy).read_bytes()
    return Path(path).read_bytes() if os.path.isfile(path) else None


def describe_agent_file(ref: str, config: Mapping[str, Any] | None = None) -> type[Agent]:
    """The stand-in class of the plug-in ``ref``: its declarations, read in a sandbox.

    ``config`` overrides fields of the plug-in's Config; its own ``Config`` validates them in
    the sandbox, and the stand-in's defaults are the validated config. The stand-in cannot be
    instantiated (``solve`` stays abstract) and is not registered; the trial's agent process
    loads the real class from ``ref``."""
    if not isinstance(ref, str):
        raise AgentError(f"--agent expects path/to/file.py:ClassName, got {ref!r} "
                         "(a class object: pass it through papergym.plugins.plugin_refs)")
    target, sep, class_name = ref.rpartition(":")
    if not sep or not target or not class_name:
        raise AgentError(f"--agent expects path/to/file.py:ClassName, got {ref!r}")
    if not target.endswith(".py"):
        raise AgentError(f"--agent {ref!r}: name a file (path/to/file.py:ClassName); an "
                         "installed agent comes in through the papergym.agents entry points")
    path = Path(target).resolve()
    if not path.is_file():
        raise AgentError(f"--agent {ref!r}: no such file {path}")
    overrides = dict(config or {})
    source = _read_into_bytearray(path)
    try:
        fingerprint = source_hash(source)
        key = (ref, fingerprint, json.dumps(overrides, sort_keys=True, default=str))
        if key not in _described:
            copy = _keep_private_copy(path, source)
            absolute = f"{path}:{class_name}"  # the sandbox runs in a folder of its own
            info = _declarations_in_sandbox(
                lambda: declarations(absolute, bytes(source), overrides), ref,
                plugin_file=str(path))
            _check_own_module(info, plugin_module_name(path), ref)
            # the key covers the file's own bytes, whatever code hash its import reported
            info["code_hash"] = hashlib.sha256(
                f"plugin|{fingerprint}|{info.get('code_hash')}".encode()).hexdigest()[:16]
            stand_in = _stand_in(info, ref)
            _refuse_builtin_collisions(stand_in, ref)
            stand_in.plugin_sha256 = fingerprint  # what the store and every row mark it by
            _keyed_copies[(str(path), info["code_hash"])] = copy
            _described[key] = stand_in
    finally:
        source[:] = bytes(len(source))  # the runner keeps no plug-in's bytes in its memory
    return _described[key]


def _check_own_module(info: dict[str, Any], module: str, ref: str) -> None:
    if info.get("module") != module:
        raise AgentError(f"--agent {ref!r}: class {info.get('class')!r} says it is defined in "
                         f"module {info.get('module')!r}; a plug-in's classes must keep the "
                         "module their file defines (do not set __module__)")


def _refuse_builtin_collisions(cls: type[Agent], ref: str) -> None:
    """A plug-in may not take a built-in agent's id or class name in its family."""
    from papergym.agent import REGISTRY

    REGISTRY.load_family(cls.family)
    for builtin in REGISTRY.builtins(cls.family):
        if cls.id == builtin.id or cls.__qualname__ == builtin.__qualname__:
            what = "id" if cls.id == builtin.id else "class name"
            raise AgentError(f"--agent {ref!r}: its {what} collides with the built-in agent "
                             f"{builtin.qualified_id()} ({builtin.__module__}."
                             f"{builtin.__qualname__}); rename the plug-in's {what}")


def _declarations_in_sandbox(factory: Any, ref: str, plugin_file: str | None = None) -> Any:
    from papergym.isolation import AgentProcess, Limits, default_memory_mb

    sandbox = AgentProcess(factory,
                           Limits(memory_mb=default_memory_mb(), cpu_s=DESCRIBE_CPU_S,
                                  call_timeout_s=DESCRIBE_CPU_S), plugin_file=plugin_file)
    try:
        sandbox.start()
        info = sandbox.produce()
    except Exception as err:  # noqa: BLE001 - any failure of the plug-in's import is its own
        kind = getattr(err, "remote_type", type(err).__name__)
        message = " ".join(str(err).split())
        if kind.rpartition(".")[2] != "AgentError":
            message = f"--agent {ref!r}: importing it raised {kind.rpartition('.')[2]}: {message}"
        died = sandbox.died()
        if died and died != "running":
            message += f" (its process ended: {died})"
        raise AgentError(message) from None
    finally:
        sandbox.close()
    if not isinstance(info, (dict, list)):
        raise AgentError(f"--agent {ref!r}: its declarations did not come back as data")
    return info


def declarations(ref: str, source: bytes | None = None,
                 overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run in the sandbox: import the plug-in and return its declarations as plain data (its
    config: the defaults with ``overrides``, validated by the plug-in's own Config)."""
    from papergym.agent import load_agent_file

    return _declare(load_agent_file(ref, source), overrides)


def _declare(cls: type[Agent], overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"class": cls.__qualname__, "module": cls.__module__, "id": cls.id,
            "family": cls.family, "role": cls.role, "paper": cls.paper,
            "problems": list(cls.problems),
            "config": cls.validate_config(overrides or {}).model_dump(mode="json"),
            "code_hash": cls.code_hash()}


# ----------------------------------------------------------------------------- entry points


def entry_point_stand_ins(points: list[Any], group: str) -> list[type[Agent]]:
    """Stand-ins for the agents of the entry points ``points`` (of ``group``), read in one
    sandbox.

    The runner lists the entry points (metadata only) and hashes each one's distribution
    files; the sandbox imports them. A declaration whose class lives in a ``papergym.``
    module (a copy of a built-in's name) is refused."""
    if not points:
        return []
    values = [ep.value for ep in points]
    infos = _declarations_in_sandbox(lambda: entry_point_declarations(values),
                                     f"entry points of {group}")
    if not isinstance(infos, list):
        raise AgentError(f"entry points of {group}: declarations did not come back as a list")
    stand_ins = []
    for ep in points:
        for info in [i for i in infos if isinstance(i, dict) and i.get("entry_point") == ep.value]:
            ref = f"{info.get('module')}:{info.get('class')}"
            where = f"entry point {ep.name} = {ep.value!r}"
            module = str(info.get("module"))
            if module.startswith("papergym.") or module == "papergym" \
                    or module.split(".")[0] != ep.value.split(":")[0].split(".")[0]:
                raise AgentError(f"{where}: class {info.get('class')!r} says it is defined in "
                                 f"module {module!r}, outside the package it ships; a plug-in's "
                                 "classes must keep their own module (do not set __module__)")
            info["code_hash"] = hashlib.sha256(
                f"entry|{_distribution_hash(ep)}|{info.get('code_hash')}".encode()
            ).hexdigest()[:16]
            stand_in = _stand_in(info, ref)
            _refuse_builtin_collisions(stand_in, where)
            stand_ins.append(stand_in)
    return stand_ins


def entry_point_declarations(values: list[str]) -> list[dict[str, Any]]:
    """Run in the sandbox: load each entry point; the declarations of every agent it registers
    (the object itself when it is an Agent class, else the classes its import registered)."""
    import importlib
    from importlib.metadata import EntryPoint

    from papergym.agent import REGISTRY, AgentRegistry

    found = []
    for value in values:
        before = set(REGISTRY._agents.values())
        obj = EntryPoint(name="", value=value, group=AgentRegistry.ENTRY_POINT_GROUP).load()
        classes = [c for c in REGISTRY._agents.values() if c not in before]
        if isinstance(obj, type) and issubclass(obj, Agent) and obj.id and obj not in classes:
            classes.append(obj)
        for cls in classes:
            info = _declare(cls)
            home = importlib.import_module(cls.__module__)
            if getattr(home, cls.__qualname__, None) is not cls:  # __module__ names another
                info["module"] = f"?{cls.__module__}"  # refused by the runner
            info["entry_point"] = value
            found.append(info)
    return found


def _distribution_hash(ep: Any) -> str:
    """sha256 of the source files of the distribution that ships ``ep`` (read, not run)."""
    digest = hashlib.sha256(ep.value.encode())
    dist = getattr(ep, "dist", None)
    for file in sorted(getattr(dist, "files", None) or [], key=str):
        if str(file).endswith(".py"):
            try:
                data = Path(file.locate()).read_bytes()
            except OSError:
                continue
            digest.update(str(file).encode() + b"\0" + data)
    return digest.hexdigest()


def _stand_in(info: dict[str, Any], ref: str) -> type[Agent]:
    expected = {"class": str, "module": str, "id": str, "family": str, "role": str,
                "paper": str, "problems": list, "config": dict, "code_hash": str}
    for name, kind in expected.items():
        if not isinstance(info.get(name), kind):
            raise AgentError(f"--agent {ref!r}: declaration {name!r} did not come back as "
                             f"{kind.__name__}")
    if not re.fullmatch(r"[0-9a-f]{16}", info["code_hash"]):
        raise AgentError(f"--agent {ref!r}: malformed code hash")
    defaults = dict(info["config"])
    config = create_model(f"{info['class']}Config", __base__=AgentConfig,
                          **{name: (Any, value) for name, value in defaults.items()})
    code_hash = info["code_hash"]
    namespace = {
        "__module__": __name__, "__qualname__": info["class"], "id": "", "family": info["family"],
        "role": info["role"], "paper": info["paper"], "problems": tuple(info["problems"]),
        "Config": config, "plugin_ref": ref, "plugin_module": info["module"],
        "code_hash": classmethod(lambda cls: code_hash),
    }
    stand_in = type(info["class"], (Agent,), namespace)  # id empty: not registered here
    stand_in.id = info["id"]
    _check_declarations(stand_in)  # the same rules as for a class defined in this process
    return stand_in


def plugin_marker(agent_ref: str, code_hash: str | None = None) -> dict[str, str] | None:
    """``{"source_sha256": ...}`` of the plug-in file behind ``agent_ref`` (the bytes the
    trial keyed by ``code_hash`` imported: the runner's private copy, named by the hash its
    description computed); ``None`` for a built-in or installed agent. Rows carry it as
    ``provenance["plugin"]``, so every page can mark a submission as such."""
    found = _private_copy(agent_ref, code_hash)
    if found is None:
        return None
    copy = found[1]
    if copy is not None and os.path.exists(copy):
        return {"source_sha256": Path(copy).stem}
    try:
        source = plugin_source(agent_ref, code_hash)
    except OSError:
        return None
    return None if source is None else {"source_sha256": source_hash(source)}


# ----------------------------------------------------------------------------- references


def plugin_refs(agents: Sequence[Any]) -> list[str]:
    """``"file.py:Class"`` references from references or Agent subclasses (the notebook API
    accepts ``extra_agents=[MyAgent]``). A class is referenced by the file that defines it: the
    agent processes import that file, not the object of this process."""
    refs = []
    for item in agents:
        if isinstance(item, str):
            path, sep, class_name = item.rpartition(":")
            # absolute: the agent processes run elsewhere, and one plug-in is described once
            refs.append(f"{Path(path).resolve()}:{class_name}" if sep and path.endswith(".py")
                        else item)
            continue
        if not (isinstance(item, type) and issubclass(item, Agent)):
            raise AgentError(f"extra_agents: {item!r} is neither 'path/to/file.py:ClassName' nor "
                             "a papergym.Agent subclass")
        try:
            source_file = inspect.getsourcefile(item)
        except TypeError:
            source_file = None
        if not source_file or not source_file.endswith(".py") or not Path(source_file).is_file():
            raise AgentError(f"extra_agents: {item.__qualname__} is not defined in a .py file (a "
                             "notebook cell or the interpreter); agents run in processes of their "
                             "own, which import it from its file: save it as my_agent.py and pass "
                             f"'my_agent.py:{item.__name__}' or the class imported from there")
        if item.__qualname__ != item.__name__:
            raise AgentError(f"extra_agents: {item.__qualname__} is nested; define the agent class "
                             f"at the top level of {source_file}")
        refs.append(f"{Path(source_file).resolve()}:{item.__name__}")
    return refs


def parse_agent_config(pairs: Sequence[str], refs: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``--agent-config key=value`` (one plug-in) or ``Class.key=value`` (several) as
    ``{ref: {key: value}}``. Values are read as YAML scalars or lists (``0.5``, ``true``,
    ``[1, 2]``); the plug-in's Config validates them when its declarations are read."""
    configs: dict[str, dict[str, Any]] = {}
    if pairs and not refs:
        raise AgentError("--agent-config sets a plug-in's config; give the plug-in with --agent")
    by_class = {ref.rpartition(":")[2]: ref for ref in refs}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name:
            raise AgentError(f"--agent-config expects key=value, got {pair!r}")
        owner, dot, key = name.rpartition(".")
        if dot and owner in by_class:
            ref = by_class[owner]
        elif len(refs) == 1 and not dot:
            ref, key = refs[0], name
        else:
            raise AgentError(f"--agent-config {pair!r}: with several plug-ins write "
                             f"CLASS.key=value, CLASS one of {', '.join(sorted(by_class))}")
        try:
            value = yaml.safe_load(text) if text.strip() else ""
        except yaml.YAMLError:
            value = text
        configs.setdefault(ref, {})[key] = value
    return configs


# ----------------------------------------------------------------------------- the store's record


def plugin_record(ref: str, cls: type[Agent]) -> dict[str, Any] | None:
    """What the store keeps of a plug-in that ran: its source bytes and their SHA-256, and the
    declarations its sandbox returned (which rebuild the stand-in with no code run). ``cls`` is
    the stand-in :func:`describe_agent_file` returned for ``ref``: the bytes are the runner's
    private copy of the file it described, and must hash to its ``plugin_sha256``. ``None`` for
    a module reference (an installed package: its code is not a file of the run)."""
    if not ref.rpartition(":")[0].endswith(".py"):
        return None
    source = plugin_source(ref, cls.code_hash())
    if source is None:
        return None
    sha256 = source_hash(source)
    if getattr(cls, "plugin_sha256", sha256) != sha256:
        raise AgentError(f"--agent {ref!r}: its file changed after it was described; run again")
    module = getattr(cls, "plugin_module", None) or plugin_module_name(
        Path(ref.rpartition(":")[0]).resolve())
    declared = {"class": cls.__qualname__, "module": module,
                "id": cls.id, "family": cls.family, "role": cls.role, "paper": cls.paper,
                "problems": list(cls.problems),
                "config": cls.validate_config({}).model_dump(mode="json"),
                "code_hash": cls.code_hash()}
    return {"ref": ref, "source": source, "sha256": sha256, "declarations": declared}


def stand_in_from_record(record: Mapping[str, Any]) -> type[Agent]:
    """The stand-in of a stored plug-in, from its stored declarations (nothing imported): it
    keys the same trials as when the plug-in ran, so its stored rows are found again."""
    declared = dict(record["declarations"])
    path = Path(str(record["ref"]).rpartition(":")[0]).resolve()
    declared.setdefault("module", plugin_module_name(path))  # records written before it was kept
    stand_in = _stand_in(declared, record["ref"])
    stand_in.plugin_sha256 = record["sha256"]
    return stand_in
