"""A per-seed artifact cache on disk: ``$PAPERGYM_CACHE`` (default ``~/.cache/papergym``).

Keys are hashed from (namespace, problem id, tier, seed, content hash, extra); writes are
atomic (temp file + rename), so parallel workers never read a half-written file. Nothing here
is committed: the folder lives outside the repository.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch


def cache_root() -> Path:
    root = Path(os.environ.get("PAPERGYM_CACHE", Path.home() / ".cache" / "papergym"))
    root.mkdir(parents=True, exist_ok=True)
    return root


def cache_key(**parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:24]


def cached(namespace: str, key: str, build: Callable[[], Any]) -> Any:
    """Load ``namespace/key.pt`` if present, else ``build()`` it and store it atomically."""
    folder = cache_root() / namespace
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{key}.pt"
    if path.exists():
        try:
            return torch.load(path, weights_only=False)
        except Exception:  # noqa: BLE001 - a corrupt entry is rebuilt, never trusted
            path.unlink(missing_ok=True)
    value = build()
    handle, temp = tempfile.mkstemp(dir=folder, suffix=".tmp")
    os.close(handle)
    torch.save(value, temp)
    os.replace(temp, path)
    return value
