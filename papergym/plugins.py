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
"""

from __future__ import annotations

import hashlib
import inspect
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import create_model

from papergym.agent import PLUGIN_SOURCES, Agent, AgentConfig, AgentError, _check_declarations

DESCRIBE_CPU_S = 60.0  # importing a plug-in file and reading its declarations
_described: dict[tuple[str, str], type[Agent]] = {}


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
    fingerprint = ref
    if target.endswith(".py"):
        path = Path(target).resolve()
        if not path.is_file():
            raise AgentError(f"--agent {ref!r}: no such file {path}")
        source = path.read_bytes()
        PLUGIN_SOURCES[str(path)] = source  # forked agent processes import these bytes
        fingerprint = hashlib.sha256(source).hexdigest()
        target = str(path)  # the sandbox runs in a folder of its own: no relative paths
    overrides = dict(config or {})
    key = (ref, fingerprint, json.dumps(overrides, sort_keys=True, default=str))
    if key not in _described:
        info = _declarations_in_sandbox(f"{target}:{class_name}", ref, overrides)
        stand_in = _stand_in(info, ref)
        stand_in.plugin_sha256 = fingerprint if target.endswith(".py") else ""
        _described[key] = stand_in
    return _described[key]


def _declarations_in_sandbox(absolute: str, ref: str,
                             overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    from papergym.isolation import AgentProcess, Limits, default_memory_mb

    sandbox = AgentProcess(lambda: declarations(absolute, overrides),
                           Limits(memory_mb=default_memory_mb(), cpu_s=DESCRIBE_CPU_S,
                                  call_timeout_s=DESCRIBE_CPU_S))
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
    if not isinstance(info, dict):
        raise AgentError(f"--agent {ref!r}: its declarations did not come back as data")
    return info


def declarations(ref: str, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """Run in the sandbox: import the plug-in and return its declarations as plain data (its
    config: the defaults with ``overrides``, validated by the plug-in's own Config)."""
    from papergym.agent import load_agent_file

    cls = load_agent_file(ref)
    return {"class": cls.__qualname__, "id": cls.id, "family": cls.family, "role": cls.role,
            "paper": cls.paper, "problems": list(cls.problems),
            "config": cls.validate_config(overrides or {}).model_dump(mode="json"),
            "code_hash": cls.code_hash()}


def _stand_in(info: dict[str, Any], ref: str) -> type[Agent]:
    expected = {"class": str, "id": str, "family": str, "role": str, "paper": str,
                "problems": list, "config": dict, "code_hash": str}
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
        "Config": config, "plugin_ref": ref,
        "code_hash": classmethod(lambda cls: code_hash),
    }
    stand_in = type(info["class"], (Agent,), namespace)  # id empty: not registered here
    stand_in.id = info["id"]
    _check_declarations(stand_in)  # the same rules as for a class defined in this process
    return stand_in


def plugin_marker(agent_ref: str) -> dict[str, str] | None:
    """``{"source_sha256": ...}`` of the plug-in file behind ``agent_ref`` (the bytes the
    trial's agent process imported); ``None`` for a built-in or installed agent. Rows carry it
    as ``provenance["plugin"]``, so every page can mark a submission as such."""
    target, sep, _ = agent_ref.rpartition(":")
    if not sep or not target.endswith(".py"):
        return None
    path = str(Path(target).resolve())
    source = PLUGIN_SOURCES.get(path)
    if source is None:
        try:
            source = Path(path).read_bytes()
        except OSError:
            return None
    return {"source_sha256": hashlib.sha256(source).hexdigest()}


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
    declarations its sandbox returned (which rebuild the stand-in with no code run). ``None``
    for a module reference (an installed package: its code is not a file of the run)."""
    path, _, _ = ref.rpartition(":")
    source = PLUGIN_SOURCES.get(str(Path(path).resolve())) if path.endswith(".py") else None
    if source is None:
        return None
    declared = {"class": cls.__qualname__, "id": cls.id, "family": cls.family, "role": cls.role,
                "paper": cls.paper, "problems": list(cls.problems),
                "config": cls.validate_config({}).model_dump(mode="json"),
                "code_hash": cls.code_hash()}
    return {"ref": ref, "source": source, "sha256": hashlib.sha256(source).hexdigest(),
            "declarations": declared}


def stand_in_from_record(record: Mapping[str, Any]) -> type[Agent]:
    """The stand-in of a stored plug-in, from its stored declarations (nothing imported): it
    keys the same trials as when the plug-in ran, so its stored rows are found again."""
    stand_in = _stand_in(dict(record["declarations"]), record["ref"])
    stand_in.plugin_sha256 = record["sha256"]
    return stand_in
