"""Provenance: where and how a number was produced, attached to every stored row."""

from __future__ import annotations

import functools
import os
import platform
import resource
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

KEY_PACKAGES = (
    "papergym", "numpy", "scipy", "torch", "gymnasium", "pettingzoo", "stable-baselines3",
    "mujoco", "qiskit", "qiskit-aer", "networkx", "scikit-learn", "pydantic", "rliable",
    "pandas",
)
PROJECT_ROOT = Path(__file__).resolve().parent.parent


@functools.cache
def package_versions() -> dict[str, str]:
    found = {}
    for name in KEY_PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            continue
    return found


@functools.cache
def git_state() -> dict[str, Any]:
    """The project's git sha and whether the work tree differs from it."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=10
        ).stdout.strip()

    try:
        sha = git("rev-parse", "HEAD")
        dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        return {"git_sha": "unknown", "git_dirty": None}
    return {"git_sha": sha or "unknown", "git_dirty": dirty}


@functools.cache
def host_info() -> dict[str, Any]:
    return {
        "host": platform.node(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu_count": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
    }


def run_provenance() -> dict[str, Any]:
    """What is the same for every trial of one run."""
    return {**git_state(), **host_info(), "versions": package_versions()}


@contextmanager
def measure() -> Iterator[dict[str, float]]:
    """Wall seconds, CPU seconds and peak resident memory (MiB) of the enclosed work.

    Meant to run inside a fresh worker process, whose peak RSS is then the trial's own.
    """
    usage: dict[str, float] = {}
    wall0, cpu0 = time.perf_counter(), time.process_time()
    try:
        yield usage
    finally:
        usage["wall_s"] = time.perf_counter() - wall0
        usage["cpu_s"] = time.process_time() - cpu0
        usage["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
