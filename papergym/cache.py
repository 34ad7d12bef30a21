"""One cache for what problems compute once and reuse across trials.

Problem-owned references (a specialist's return, a centralized model's accuracy), expensive
shared preparation (an SFT base policy per seed, a knowledge-graph world per seed) and
memoized deterministic runs are all the same thing: a value fully determined by some code
and some configuration. An :class:`Entry` names it::

    entry = cache.Entry("rlvr/sft", config={"seed": 3, "recipe": ...},
                        build=lambda: train_sft(...), code=(tasks, gpt, sampling))
    value = cache.get(entry)

- **Key** = sha256 of (namespace, hash of the ``code`` sources, canonical JSON of ``config``):
  a change to either builds a new entry; old entries are never read again.
- **Once per key.** ``get`` takes an exclusive ``fcntl`` lock on the entry before building,
  and re-reads after acquiring it, so two workers (or two runners) never build the same entry:
  the second waits and reads what the first wrote. Writes are atomic (temp file + rename).
- **Prepare phase.** A :class:`~papergym.problem.Task` declares the entries its trials will
  read (``Task.cache_entries(seeds)``); the runner builds the missing ones
  (:func:`build_missing`, in worker processes set up like trial workers) and starts the
  trials once every one is built or locked by its builder, so trials only read them (one
  that gets there first waits for the builder).
- **Location**: ``$PAPERGYM_CACHE_DIR``, default ``$XDG_CACHE_HOME/papergym`` or
  ``~/.cache/papergym``; one folder per namespace. ``PAPERGYM_CACHE=off`` turns the disk off:
  each process builds what it uses, in memory.
- Values are pickled; within a process they are also kept in memory (a small LRU) and shared
  between callers, so treat them as read-only. The cache is problem-side machinery: a problem
  hands agents what it built through its view, never a path into this folder.

``papergym cache ls`` lists the entries, ``papergym cache clear [NAMESPACE]`` removes them.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import inspect
import json
import os
import pickle
import tempfile
import time
import traceback
import types
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MEMORY_ENTRIES = 64  # values kept in memory per process (least recently used dropped first)

Source = types.ModuleType | Callable[..., Any] | type | str | Path


# ----------------------------------------------------------------------------- settings


def enabled() -> bool:
    """False when ``PAPERGYM_CACHE=off``: nothing is read from or written to disk."""
    value = os.environ.get("PAPERGYM_CACHE", "").strip().lower()
    if value in ("", "on", "1"):
        return True
    if value in ("off", "0"):
        return False
    raise ValueError(f"PAPERGYM_CACHE={value!r}: use 'on' or 'off' (set the location with "
                     f"PAPERGYM_CACHE_DIR)")


def cache_dir() -> Path:
    """``$PAPERGYM_CACHE_DIR``, else ``$XDG_CACHE_HOME/papergym``, else ``~/.cache/papergym``."""
    explicit = os.environ.get("PAPERGYM_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "papergym"


# ----------------------------------------------------------------------------- keys


@functools.lru_cache(maxsize=256)
def _source_digest(source: Source) -> str:
    if isinstance(source, (str, Path)):
        path = Path(source)
        files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        digest = hashlib.sha256()
        for file in files:
            digest.update(file.relative_to(path).as_posix().encode() if path.is_dir()
                          else file.name.encode())
            digest.update(file.read_bytes())
        return digest.hexdigest()
    return hashlib.sha256(inspect.getsource(source).encode()).hexdigest()


def source_hash(*sources: Source) -> str:
    """Content hash of code: modules, functions or classes (their source text), ``.py`` files,
    or folders (every ``.py`` file under them)."""
    digest = hashlib.sha256()
    for source in sources:
        digest.update(_source_digest(source).encode())
    return digest.hexdigest()[:16]


def canonical(config: Any) -> str:
    """The JSON text a key is computed from (sorted keys; tuples as lists; others by str)."""
    return json.dumps(config, sort_keys=True, default=str, separators=(",", ":"))


@dataclass(frozen=True)
class Entry:
    """A value determined by ``code`` and ``config``; ``build()`` computes it.

    namespace: a folder name such as ``"rlvr/sft"`` (family/what), shown by ``cache ls``.
    config: everything besides code that the value depends on (JSON-able).
    code: the sources whose text determines the value (see :func:`source_hash`).
    """

    namespace: str
    config: Mapping[str, Any]
    build: Callable[[], Any] = field(compare=False, repr=False)
    code: tuple[Source, ...] = ()

    def __post_init__(self) -> None:
        parts = self.namespace.split("/")
        if not all(p and p.replace("_", "").replace("-", "").isalnum() for p in parts):
            raise ValueError(f"cache namespace {self.namespace!r}: use names of letters, digits, "
                             f"'_' and '-' separated by '/'")

    @functools.cached_property
    def key(self) -> str:
        text = f"{self.namespace}|{source_hash(*self.code)}|{canonical(self.config)}"
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def path(self, root: Path | None = None) -> Path:
        return (root or cache_dir()) / self.namespace / f"{self.key}.pkl"


# ----------------------------------------------------------------------------- get


_memory: OrderedDict[str, Any] = OrderedDict()
_stats = {"hits": 0, "loads": 0, "builds": 0}


def stats() -> dict[str, int]:
    """This process's counts: memory hits, disk loads, builds (for tests and progress lines)."""
    return dict(_stats)


def _remember(key: str, value: Any) -> Any:
    _memory[key] = value
    _memory.move_to_end(key)
    while len(_memory) > MEMORY_ENTRIES:
        _memory.popitem(last=False)
    return value


def forget() -> None:
    """Drop this process's in-memory values (the disk entries stay)."""
    _memory.clear()


def get(entry: Entry, on_locked: Callable[[], None] | None = None) -> Any:
    """The entry's value: from memory, else from disk, else built (once per key, under lock).
    ``on_locked`` runs once this process holds the entry's lock (the prepare phase's builders
    say so: from then on every other process that asks waits for their value)."""
    if entry.key in _memory:
        _stats["hits"] += 1
        _memory.move_to_end(entry.key)
        return _memory[entry.key]
    if not enabled():
        return _remember(entry.key, _build(entry))
    path = entry.path()
    found, value = _load(path)
    if not found:
        try:
            # the root is private (0700): values can hold held-out items, and a sandboxed
            # agent process runs as another user
            _private_root()
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:  # a read-only home must not fail a trial: build in memory
            return _remember(entry.key, _build(entry))
        with _locked(path.with_suffix(".lock")):
            if on_locked is not None:
                on_locked()
            found, value = _load(path)  # another process may have built it while we waited
            if not found:
                started = time.perf_counter()
                value = _build(entry)
                _store(path, value, entry, time.perf_counter() - started)
    return _remember(entry.key, value)


def _private_root() -> None:
    """The cache root exists with mode 0700; one made by an older version with group or
    other access is closed (when this user owns it)."""
    root = cache_dir()
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = root.stat()
    if info.st_mode & 0o077 and info.st_uid == os.geteuid():
        os.chmod(root, 0o700)


def _build(entry: Entry) -> Any:
    _stats["builds"] += 1
    return entry.build()


def _load(path: Path) -> tuple[bool, Any]:
    try:
        with path.open("rb") as handle:
            value = pickle.load(handle)
    except FileNotFoundError:
        return False, None
    except Exception:  # noqa: BLE001 - a damaged entry is rebuilt, never trusted
        with contextlib.suppress(OSError):
            path.unlink()
        return False, None
    _stats["loads"] += 1
    return True, value


def _store(path: Path, value: Any, entry: Entry, build_s: float) -> None:
    try:
        handle, temp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    except OSError:
        return  # caching is an optimization: a read-only or full disk must not fail a trial
    try:
        with os.fdopen(handle, "wb") as out:
            pickle.dump(value, out, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temp, path)
        meta = {"namespace": entry.namespace, "key": entry.key, "config": entry.config,
                "code": source_hash(*entry.code), "built_at": time.time(),
                "build_s": round(build_s, 3), "bytes": path.stat().st_size}
        path.with_suffix(".json").write_text(canonical(meta))
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive ``fcntl.flock`` on ``path``; released on exit or when the process dies."""
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# ----------------------------------------------------------------------------- prepare


def missing(entries: Iterable[Entry]) -> list[Entry]:
    """The entries (one per key) not on disk yet; none when the cache is off."""
    if not enabled():
        return []
    unique = {e.key: e for e in entries}
    return [e for e in unique.values() if not e.path().is_file()]


def build_missing(entries: Iterable[Entry], workers: int = 1,
                  setup: Callable[[], None] | None = None,
                  on_done: Callable[[Entry, str | None], None] | None = None,
                  on_claimed: Callable[[], None] | None = None) -> list[str]:
    """Build every missing entry once, ``workers`` at a time, each in a forked process that
    first runs ``setup`` (the runner passes its trial-worker setup: one math thread, so a
    value does not depend on who built it). Returns one line per entry that failed; its
    trials will build it again and record the error themselves.

    ``on_claimed`` runs once, as soon as every entry is built or held under its lock by a
    builder: from then on no other process builds any of them (one that asks waits)."""
    import multiprocessing as mp
    from multiprocessing.connection import wait

    todo = missing(entries)
    ctx = mp.get_context("fork")
    running: dict[Any, tuple[Any, Entry]] = {}
    unclaimed: set[Any] = set()  # builders that have not taken their entry's lock yet
    failures: list[str] = []
    claimed = False
    while todo or running:
        while todo and len(running) < max(1, workers):
            entry = todo.pop(0)
            receiver, sender = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_build_child, args=(entry, sender, setup))
            proc.start()
            sender.close()
            running[receiver] = (proc, entry)
            unclaimed.add(receiver)
        if not claimed and not todo and not unclaimed:
            claimed = True
            if on_claimed is not None:
                on_claimed()
        for receiver in wait(list(running)):
            proc, entry = running[receiver]
            try:
                message = receiver.recv()
            except EOFError:
                message = "worker died"
            unclaimed.discard(receiver)
            if message == _LOCKED:
                continue
            del running[receiver]
            proc.join()
            receiver.close()
            if message is not None:
                failures.append(f"{entry.namespace} {canonical(entry.config)}: {message}")
            if on_done is not None:
                on_done(entry, message)
    if not claimed and on_claimed is not None:  # nothing was missing
        on_claimed()
    return failures


_LOCKED = "locked"  # a builder's first message: it holds the entry's lock


def _build_child(entry: Entry, conn: Any, setup: Callable[[], None] | None) -> None:
    error = None
    try:
        if setup is not None:
            setup()
        get(entry, on_locked=lambda: conn.send(_LOCKED))
    except BaseException as err:  # noqa: BLE001 - reported to the parent, which goes on
        error = f"{type(err).__name__}: {err}\n{traceback.format_exc()}"
    try:
        conn.send(error)
    finally:
        conn.close()
        os._exit(0)


# ----------------------------------------------------------------------------- ls / clear


@dataclass(frozen=True)
class Listed:
    namespace: str
    key: str
    bytes: int
    built_at: float | None
    build_s: float | None
    config: Mapping[str, Any]


def listing(namespace: str | None = None) -> list[Listed]:
    """Every entry on disk (optionally under one namespace), oldest first."""
    root = cache_dir()
    base = root / namespace if namespace else root
    found = []
    for path in sorted(base.rglob("*.pkl")) if base.is_dir() else []:
        meta: dict[str, Any] = {}
        with contextlib.suppress(OSError, ValueError):
            meta = json.loads(path.with_suffix(".json").read_text())
        found.append(Listed(
            namespace=path.parent.relative_to(root).as_posix(), key=path.stem,
            bytes=path.stat().st_size, built_at=meta.get("built_at"),
            build_s=meta.get("build_s"), config=meta.get("config", {})))
    return sorted(found, key=lambda e: (e.built_at or 0.0, e.namespace, e.key))


def clear(namespace: str | None = None) -> int:
    """Remove every entry (or those under ``namespace``); returns how many were removed."""
    root = cache_dir()
    base = root / namespace if namespace else root
    removed = 0
    for path in sorted(base.rglob("*")) if base.is_dir() else []:
        if path.suffix in (".pkl", ".json", ".lock", ".tmp") and path.is_file():
            removed += path.suffix == ".pkl"
            path.unlink(missing_ok=True)
    for folder in sorted((p for p in base.rglob("*") if p.is_dir()), reverse=True) \
            if base.is_dir() else []:
        with contextlib.suppress(OSError):
            folder.rmdir()
    forget()
    return removed


def describe(entries: Sequence[Listed]) -> list[tuple[str, str, str, str, str]]:
    """Rows for ``papergym cache ls``: namespace, key, size, built, config."""
    rows = []
    for e in entries:
        built = time.strftime("%Y-%m-%d %H:%M", time.localtime(e.built_at)) if e.built_at else "?"
        size = f"{e.bytes / 1e6:.1f} MB" if e.bytes >= 1e5 else f"{e.bytes / 1e3:.1f} kB"
        config = canonical(e.config)
        rows.append((e.namespace, e.key[:12], size, built,
                     config if len(config) <= 80 else config[:77] + "..."))
    return rows
