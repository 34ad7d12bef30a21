"""A small on-disk cache of deterministic, expensive numbers (reference accuracies, tuning
runs), so that trials run in separate processes do not recompute them.

A value is stored under a key that includes a hash of this package's source, so a code
change invalidates it; every cached number equals what recomputation gives (the runs are
deterministic by seed). Location: ``$PAPERGYM_CACHE/fedlearn`` (default
``~/.cache/papergym/fedlearn``); ``PAPERGYM_CACHE=off`` disables it. Writes are atomic
(temp file + rename), so parallel workers may share it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

_memory: dict[str, float] = {}


@lru_cache(maxsize=1)
def code_version() -> str:
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def cache_dir() -> Path | None:
    root = os.environ.get("PAPERGYM_CACHE", "")
    if root.lower() == "off":
        return None
    base = Path(root) if root else Path.home() / ".cache" / "papergym"
    return base / "fedlearn"


def cached(namespace: str, key: str, compute: Callable[[], float]) -> float:
    """``compute()``, memoized in memory and on disk under (namespace, key, code version)."""
    name = hashlib.sha256(f"{namespace}|{key}|{code_version()}".encode()).hexdigest()[:32]
    if name in _memory:
        return _memory[name]
    folder = cache_dir()
    path = folder / namespace / f"{name}.json" if folder is not None else None
    if path is not None and path.is_file():
        try:
            value = float(json.loads(path.read_text())["value"])
            _memory[name] = value
            return value
        except (ValueError, KeyError, OSError):
            pass  # a damaged entry is recomputed
    value = float(compute())
    _memory[name] = value
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "w") as handle:
                json.dump({"value": value if math.isfinite(value) else str(value), "key": key},
                          handle)
            os.replace(tmp, path)
        except OSError:
            pass  # caching is an optimization; a read-only home must not fail a trial
    return value
