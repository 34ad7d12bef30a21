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
import re
from pathlib import Path
from typing import Any

from pydantic import create_model

from papergym.agent import PLUGIN_SOURCES, Agent, AgentConfig, AgentError, _check_declarations

DESCRIBE_CPU_S = 60.0  # importing a plug-in file and reading its declarations
_described: dict[tuple[str, str], type[Agent]] = {}


def describe_agent_file(ref: str) -> type[Agent]:
    """The stand-in class of the plug-in ``ref``: its declarations, read in a sandbox.

    The stand-in cannot be instantiated (``solve`` stays abstract) and is not registered; the
    trial's agent process loads the real class from ``ref``."""
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
    key = (ref, fingerprint)
    if key not in _described:
        _described[key] = _stand_in(_declarations_in_sandbox(f"{target}:{class_name}", ref), ref)
    return _described[key]


def _declarations_in_sandbox(absolute: str, ref: str) -> dict[str, Any]:
    from papergym.isolation import AgentProcess, Limits, default_memory_mb

    sandbox = AgentProcess(lambda: declarations(absolute),
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


def declarations(ref: str) -> dict[str, Any]:
    """Run in the sandbox: import the plug-in and return its declarations as plain data."""
    from papergym.agent import load_agent_file

    cls = load_agent_file(ref)
    return {"class": cls.__qualname__, "id": cls.id, "family": cls.family, "role": cls.role,
            "paper": cls.paper, "problems": list(cls.problems),
            "config": cls.validate_config({}).model_dump(mode="json"),
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
