"""The results store: one SQLite file in WAL mode, one row per trial, no server.

Rows are written by the runner's parent process only (one writer), as each trial ends, so an
interrupted run loses at most the trials in flight. Every row carries its provenance.

Several runners may share one store. Before computing a trial a runner claims its key in the
``running`` table (its runner id and a heartbeat it refreshes while the run lasts); a key
claimed by another runner with a fresh heartbeat is skipped, one whose heartbeat is stale
(that runner died) may be claimed again, and a key whose row appeared after this runner
started is never claimed. Storing a row releases the claim.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import json
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS trials (
    key            TEXT PRIMARY KEY,
    benchmark      TEXT NOT NULL,
    section        TEXT NOT NULL,
    tier           TEXT NOT NULL,
    problem_id     TEXT NOT NULL,
    problem_kwargs TEXT NOT NULL,
    agent          TEXT NOT NULL,
    agent_id       TEXT NOT NULL,
    agent_role     TEXT NOT NULL,
    agent_config   TEXT NOT NULL,
    seed           INTEGER NOT NULL,
    status         TEXT NOT NULL CHECK (status IN ('ok', 'failed')),
    metrics        TEXT NOT NULL,
    curves         TEXT NOT NULL,
    units          TEXT NOT NULL,
    error          TEXT,
    provenance     TEXT NOT NULL,
    created        REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS trials_by_benchmark ON trials (benchmark, tier);
CREATE TABLE IF NOT EXISTS running (
    key            TEXT PRIMARY KEY,
    runner         TEXT NOT NULL,
    heartbeat      REAL NOT NULL,
    started        REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS plugins (
    record         TEXT PRIMARY KEY,  -- hash of (ref, source, declarations)
    ref            TEXT NOT NULL,     -- /absolute/path/file.py:Class as it ran
    sha256         TEXT NOT NULL,     -- of the source bytes
    source         BLOB NOT NULL,
    declarations   TEXT NOT NULL,     -- id, family, role, problems, config, code hash (JSON)
    first_run      REAL NOT NULL,
    last_run       REAL NOT NULL
);
"""
HEARTBEAT_S = 10.0  # a runner refreshes its claims this often
STALE_AFTER_S = 60.0  # a claim not refreshed for this long belongs to a dead runner
JSON_COLUMNS = ("problem_kwargs", "agent_config", "metrics", "curves", "units", "provenance")


class KeyConflict(ValueError):
    """A row whose key is stored from other agent code."""


@dataclass
class Row:
    key: str
    benchmark: str
    section: str
    tier: str
    problem_id: str
    problem_kwargs: dict[str, Any]
    agent: str
    agent_id: str
    agent_role: str
    agent_config: dict[str, Any]
    seed: int
    status: str
    metrics: dict[str, float] = field(default_factory=dict)
    curves: dict[str, list[list[float]]] = field(default_factory=dict)
    units: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    provenance: dict[str, Any] = field(default_factory=dict)
    created: float = field(default_factory=time.time)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _owner_only(path: Path) -> None:
    """The store (and its -wal/-shm) readable by its owner only: an agent process running
    as another user cannot open it (docs/contract.md, "Isolation and threat model")."""
    if str(path) == ":memory:":
        return
    if not path.exists():
        # Created 0600 before SQLite opens it. Never open and close an existing store here:
        # closing any descriptor of the file drops every POSIX lock this process holds on it,
        # including those of its open connections (a second Store in the same process, the
        # heartbeat's, would then let another process's connection checkpoint and delete the
        # WAL under them: committed rows invisible, and lost).
        with contextlib.suppress(FileExistsError):
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600))
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError, PermissionError):
            os.chmod(f"{path}{suffix}", 0o600)


class Store:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _owner_only(self.path)
        self._db = sqlite3.connect(self.path, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        _owner_only(self.path)  # SQLite gives -wal and -shm the database file's mode
        self._db.execute("PRAGMA synchronous=NORMAL")
        tables = {name for (name,) in self._db.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'index')")}
        if not {"trials", "trials_by_benchmark", "running", "plugins"} <= tables:
            # only when something is missing: a reader opening the store while a runner
            # writes (a progress poll) must not take the write lock and starve it
            self._db.executescript(SCHEMA)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def put(self, row: Row) -> None:
        """Store ``row`` under its key, replacing a row of the same key written by the same
        agent code; a row written by different agent code is refused (:class:`KeyConflict`)."""
        values = row.as_dict()
        stored = self._db.execute(
            "SELECT json_extract(provenance, '$.agent_code_hash') FROM trials WHERE key = ?",
            (row.key,)).fetchone()
        ours = row.provenance.get("agent_code_hash")
        if stored is not None and stored[0] is not None and ours is not None and stored[0] != ours:
            raise KeyConflict(f"trial {row.key} ({row.agent_id}, seed {row.seed}) is stored from "
                              f"agent code {stored[0]}; a row from agent code {ours} may not "
                              "replace it (two agents whose trials share a key)")
        for name in JSON_COLUMNS:
            values[name] = json.dumps(values[name], sort_keys=True, allow_nan=True)
        columns = ", ".join(values)
        marks = ", ".join("?" for _ in values)
        with self._db:
            self._db.execute(
                f"INSERT OR REPLACE INTO trials ({columns}) VALUES ({marks})",
                tuple(values.values()),
            )
            self._db.execute("DELETE FROM running WHERE key = ?", (row.key,))

    # -- plug-ins: their source, so their rows stay in every table without --agent --------
    def put_plugin(self, ref: str, source: bytes, sha256: str, declarations: dict[str, Any]) -> None:
        """Record a plug-in as it runs: kept from its first run (source bytes, their hash, the
        declarations its sandbox returned); ``last_run`` says which version of an id is current."""
        text = json.dumps(declarations, sort_keys=True)
        record = hashlib.sha256("\0".join((ref, sha256, text)).encode()).hexdigest()[:32]
        now = time.time()
        with self._db:
            self._db.execute("INSERT OR IGNORE INTO plugins VALUES (?, ?, ?, ?, ?, ?, ?)",
                             (record, ref, sha256, source, text, now, now))
            self._db.execute("UPDATE plugins SET last_run = ? WHERE record = ?", (now, record))

    def plugins(self) -> list[dict[str, Any]]:
        """Every recorded plug-in, the most recently run first."""
        cursor = self._db.execute("SELECT ref, sha256, source, declarations, first_run, last_run "
                                  "FROM plugins ORDER BY last_run DESC")
        return [{"ref": ref, "sha256": sha, "source": bytes(source),
                 "declarations": json.loads(declarations), "first_run": first, "last_run": last}
                for ref, sha, source, declarations, first, last in cursor]

    # -- claims: several runners on one store never compute the same trial ---------------
    def claim(self, key: str, runner: str, since: float,
              stale_after: float = STALE_AFTER_S) -> bool:
        """Claim ``key`` for ``runner`` (started at ``since``); False if another runner holds
        a fresh claim on it or a row for it was stored after ``since``."""
        now = time.time()
        self._db.execute("BEGIN IMMEDIATE")  # one claimer at a time across processes
        try:
            stored = self._db.execute(
                "SELECT 1 FROM trials WHERE key = ? AND created >= ?", (key, since)).fetchone()
            held = self._db.execute(
                "SELECT runner, heartbeat FROM running WHERE key = ?", (key,)).fetchone()
            if stored or (held and held[0] != runner and now - held[1] < stale_after
                          and not _dead_local_runner(held[0])):
                self._db.execute("ROLLBACK")
                return False
            self._db.execute("INSERT OR REPLACE INTO running (key, runner, heartbeat, started) "
                             "VALUES (?, ?, ?, ?)", (key, runner, now, now))
            self._db.execute("COMMIT")
            return True
        except BaseException:
            self._db.execute("ROLLBACK")
            raise

    def heartbeat(self, runner: str) -> None:
        with self._db:
            self._db.execute("UPDATE running SET heartbeat = ? WHERE runner = ?",
                             (time.time(), runner))

    def release(self, runner: str, keys: Iterable[str] | None = None) -> None:
        """Drop ``runner``'s claims (all of them, or those on ``keys``)."""
        with self._db:
            if keys is None:
                self._db.execute("DELETE FROM running WHERE runner = ?", (runner,))
            else:
                self._db.executemany("DELETE FROM running WHERE runner = ? AND key = ?",
                                     [(runner, k) for k in keys])

    def claims(self) -> dict[str, tuple[str, float]]:
        """``key -> (runner, heartbeat)`` of every claim held now."""
        return {k: (r, h) for k, r, h in self._db.execute(
            "SELECT key, runner, heartbeat FROM running")}

    def outcomes(self) -> dict[str, tuple[str, str | None, int, str | None]]:
        """``key -> (status, failure cause, attempt, eval salt id)`` of every stored row (the
        runner's resume rules: a killed worker's row is retried once; a row drawn under
        another eval salt is computed again)."""
        cursor = self._db.execute(
            "SELECT key, status, json_extract(provenance, '$.failure_cause'), "
            "json_extract(provenance, '$.attempt'), json_extract(provenance, '$.eval_salt_id') "
            "FROM trials")
        return {k: (status, cause, int(attempt or 1), salt)
                for k, status, cause, attempt, salt in cursor}

    def keys(self, status: str | None = None) -> set[str]:
        query, args = "SELECT key FROM trials", ()
        if status:
            query, args = query + " WHERE status = ?", (status,)
        return {k for (k,) in self._db.execute(query, args)}

    def get_many(self, keys: Iterable[str]) -> list[Row]:
        keys = list(keys)
        rows: list[Row] = []
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ", ".join("?" for _ in chunk)
            cursor = self._db.execute(f"SELECT * FROM trials WHERE key IN ({marks})", chunk)
            rows.extend(self._to_row(cursor.description, r) for r in cursor)
        return rows

    def all(self, benchmark: str | None = None) -> list[Row]:
        query, args = "SELECT * FROM trials", ()
        if benchmark:
            query, args = query + " WHERE benchmark = ?", (benchmark,)
        cursor = self._db.execute(query + " ORDER BY created", args)
        return [self._to_row(cursor.description, r) for r in cursor]

    @staticmethod
    def _to_row(description: Any, values: tuple[Any, ...]) -> Row:
        record = {d[0]: v for d, v in zip(description, values)}
        for name in JSON_COLUMNS:
            record[name] = json.loads(record[name])
        return Row(**record)


def _dead_local_runner(runner: str) -> bool:
    """A claim by a process of this host that no longer exists is stale at once (a runner
    killed a moment ago need not wait for its heartbeat to age)."""
    host, _, rest = runner.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


class RunnerClaims:
    """One runner's claims on a store: ``claim(key)`` before a trial starts, a heartbeat
    thread (its own connection) refreshing them, and every claim released at the end."""

    def __init__(self, store: Store, heartbeat_s: float = HEARTBEAT_S,
                 stale_after: float = STALE_AFTER_S) -> None:
        self.store, self.heartbeat_s, self.stale_after = store, heartbeat_s, stale_after
        self.runner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.since = time.time()
        self.skipped: list[str] = []  # keys another runner was computing
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, daemon=True)

    def __enter__(self) -> RunnerClaims:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.store.release(self.runner)

    def claim(self, key: str) -> bool:
        if self.store.claim(key, self.runner, self.since, self.stale_after):
            return True
        self.skipped.append(key)
        return False

    def _beat(self) -> None:
        beat = Store(self.store.path)
        try:
            while not self._stop.wait(self.heartbeat_s):
                beat.heartbeat(self.runner)
        finally:
            beat.close()


def export_csv(rows: list[Row], path: str | Path) -> Path:
    """Flat CSV: one line per trial, metrics as metric.<name> columns."""
    path = Path(path)
    metric_names = sorted({m for r in rows for m in r.metrics})
    fixed = ["key", "benchmark", "section", "tier", "problem_id", "problem_kwargs", "agent",
             "agent_id", "agent_role", "agent_config", "seed", "status", "error"]
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(fixed + [f"metric.{m}" for m in metric_names] + ["wall_s", "git_sha"])
        for r in rows:
            record = r.as_dict()
            line = [
                json.dumps(record[c], sort_keys=True) if isinstance(record[c], dict) else record[c]
                for c in fixed
            ]
            line += [r.metrics.get(m, "") for m in metric_names]
            line += [r.provenance.get("wall_s", ""), r.provenance.get("git_sha", "")]
            writer.writerow(line)
    return path


def export_jsonl(rows: list[Row], path: str | Path) -> Path:
    path = Path(path)
    with path.open("w") as fh:
        for r in rows:
            fh.write(json.dumps(r.as_dict(), sort_keys=True) + "\n")
    return path


def import_jsonl(path: str | Path, store: Store) -> int:
    """Put every row of an :func:`export_jsonl` file (e.g. a published ``trials.jsonl``) into
    ``store``, keyed as it was run: re-scoring published results needs no re-run. Returns the
    number of rows; a line that is not a stored row raises ValueError naming file and line."""
    path = Path(path)
    count = 0
    with path.open() as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = Row(**json.loads(line))
            except (json.JSONDecodeError, TypeError) as err:
                raise ValueError(f"{path}:{number}: not a stored trial row ({err})") from None
            store.put(row)
            count += 1
    return count
