"""Executors run trials and hand each finished row back to the runner, which stores it.

``local``: a pool of forked worker processes, one trial per process (one per core by
default), so a timeout can kill a hung trial and a crash takes down only its own worker.
Every worker runs torch with one thread, so rows do not depend on the worker count.
With one worker per CPU (the default), each is pinned to its CPU, and its agent with it
(:func:`worker_cpus`).

A worker is the trial's problem process; it forks the sandboxed agent process itself
(``execute_trial``). The parent accepts a row only from its worker's pipe, which the agent
process never holds; a worker that vanishes (killed, out of memory) is a failed row.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection, wait
from typing import Any

from papergym.leaderboard.store import Row
from papergym.tempclean import reclaim_killed_trial

from .runner import Trial, execute_trial, failed_row, trial_limits


def limit_threads() -> None:
    """One math thread per worker: deterministic and no oversubscription of the cores.

    BLAS pools are already loaded when a worker forks, so environment variables alone would
    not reach them; threadpoolctl resizes the live pools (OpenBLAS, MKL, OpenMP)."""
    from threadpoolctl import threadpool_limits

    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = "1"
    threadpool_limits(1)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


def worker_cpus(workers: int) -> list[int] | None:
    """A CPU for each of ``workers`` workers when they are as many as the CPUs this process
    may use (the default: one worker per core), else None (or where the platform cannot pin).

    A trial's two processes, the worker (the problem) and the agent it forks, take turns:
    every policy call and metered env step is a round trip between them, and neither computes
    while the other does (one math thread each). On one CPU a round trip is a switch on that
    core; across two it is a cross-core wake-up, which on a virtual machine can cost ten times
    more (a bare pipe round trip: 5 us on one core vs 47 us across two, 2-core VM;
    benchmarks/perf/isolation_overhead.py prints both). With fewer workers than CPUs nothing
    is pinned: two such runs at once (two terminals, a test suite's parallel workers) would
    otherwise both take the first CPUs and leave the others idle."""
    try:
        allowed = sorted(os.sched_getaffinity(0))
    except AttributeError:  # no sched_getaffinity (macOS)
        return None
    return allowed if workers == len(allowed) else None


def _exit_with_parent(parent_pid: int) -> None:
    """Orphaned workers (runner SIGKILLed) stop instead of finishing unrecorded work."""

    def watch() -> None:
        while True:
            if os.getppid() != parent_pid:
                os._exit(3)
            time.sleep(0.5)

    threading.Thread(target=watch, daemon=True).start()


def _terminate(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)  # unwinds execute_trial, which kills the agent's process group


def _worker(trial: Trial, conn: Connection, parent_pid: int, workers: int,
            cpu: int | None = None) -> None:
    if cpu is not None:  # before the agent is forked: it inherits the CPU
        os.sched_setaffinity(0, {cpu})
    _exit_with_parent(parent_pid)
    signal.signal(signal.SIGTERM, _terminate)
    limit_threads()
    try:
        conn.send(execute_trial(trial, trial_limits(trial, workers)))
    finally:
        conn.close()
        os._exit(0)  # skip the parent's atexit handlers (open store, progress bar)


def exit_reason(code: int | None) -> str:
    """``exit code 3`` or ``killed by SIGKILL`` (a negative exit code is the signal)."""
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


class LocalExecutor:
    """``pin=False`` leaves the workers to the scheduler (e.g. on a machine that other jobs
    share, where a pinned worker cannot move off a busy CPU)."""

    def __init__(self, workers: int | None = None, pin: bool = True) -> None:
        self.workers = max(1, workers or os.cpu_count() or 1)
        self.pin = pin

    def run(
        self,
        trials: Sequence[Trial],
        on_result: Callable[[Row], None],
        progress_label: str | None = None,
        claim: Callable[[Trial], bool] | None = None,
    ) -> None:
        """Run ``trials``; ``claim(trial)`` is asked just before each one starts (the store's
        claim on its key) and a trial it refuses is skipped."""
        ctx = mp.get_context("fork")
        pending = deque(trials)
        # the CPUs no running worker holds (none at all: unpinned)
        free_cpus = deque(worker_cpus(self.workers) or []) if self.pin else deque()
        running: dict[Any, tuple[Any, Connection, Trial, float, int | None]] = {}
        bar = _Progress(progress_label, len(trials))
        try:
            while pending or running:
                while pending and len(running) < self.workers:
                    trial = pending.popleft()
                    if claim is not None and not claim(trial):
                        continue  # another runner on the store is computing it
                    receiver, sender = ctx.Pipe(duplex=False)
                    cpu = free_cpus.popleft() if free_cpus else None
                    proc = ctx.Process(target=_worker,
                                       args=(trial, sender, os.getpid(), self.workers, cpu))
                    proc.start()
                    sender.close()
                    running[receiver] = (proc, receiver, trial, time.perf_counter(), cpu)
                wait(list(running) + [p.sentinel for p, *_ in running.values()], timeout=0.2)
                for receiver, (proc, _, trial, started, cpu) in list(running.items()):
                    row = self._collect(proc, receiver, trial, started)
                    if row is not None:
                        del running[receiver]
                        if cpu is not None:
                            free_cpus.append(cpu)
                        on_result(row)
                        bar.advance(row)
        finally:
            for proc, receiver, *_ in running.values():
                _stop(proc)
                receiver.close()
            bar.close()

    @staticmethod
    def _collect(proc: Any, receiver: Connection, trial: Trial, started: float) -> Row | None:
        elapsed = time.perf_counter() - started
        if receiver.poll():
            try:
                row = receiver.recv()
            except Exception:  # noqa: BLE001 - EOF or a torn message from a dying worker
                row = None
            if not (isinstance(row, Row) and row.key == trial.key):
                _reclaim(proc)
            proc.join()
            receiver.close()
            if isinstance(row, Row) and row.key == trial.key:
                return row
            return failed_row(trial, f"worker died ({exit_reason(proc.exitcode)}) before its row",
                              elapsed)
        if wait([proc.sentinel], 0):  # ended without a row; not reaped yet (its pid held)
            _reclaim(proc)
            proc.join()
            receiver.close()
            return failed_row(trial, f"worker died ({exit_reason(proc.exitcode)})", elapsed)
        if elapsed > trial.timeout_s:
            _stop(proc)
            receiver.close()
            return failed_row(trial, f"TimeoutError: trial exceeded {trial.timeout_s:g}s", elapsed)
        return None


def _stop(proc: Any) -> None:
    """SIGTERM first, so the worker kills its agent's process group and leftovers; then SIGKILL."""
    proc.terminate()
    if not wait([proc.sentinel], 2.0):
        proc.kill()
    _reclaim(proc)  # also after a SIGTERM that cut the worker's own cleanup short
    proc.join()


def _reclaim(proc: Any) -> None:
    """A worker that ended before its own cleanup (killed, out of memory): before it is reaped,
    while its pid and so its agent's uid are still taken, kill what its agent left running
    and remove the agent's files from the shared temp folders (root runner only)."""
    reclaim_killed_trial(proc.pid)


class _Progress:
    """A rich progress bar on a terminal; silent when no label is given."""

    def __init__(self, label: str | None, total: int) -> None:
        self._progress = None
        if label is None or total == 0:
            return
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._progress = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("failed {task.fields[failed]}"), TimeElapsedColumn(),
            TimeRemainingColumn(), auto_refresh=False, transient=False,
        )
        self._progress.start()
        from rich.markup import escape

        # escaped: "name [smoke]" is text, not a rich style tag
        self._task = self._progress.add_task(escape(label), total=total, failed=0)
        self._failed = 0

    def advance(self, row: Row) -> None:
        if self._progress is None:
            return
        self._failed += 0 if row.ok else 1
        self._progress.update(self._task, advance=1, failed=self._failed)
        self._progress.refresh()

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()


def _ray_executor(**options: Any) -> Any:
    from .ray_executor import RayExecutor

    return RayExecutor(**options)


EXECUTORS: dict[str, Callable[..., Any]] = {"local": LocalExecutor, "ray": _ray_executor}


def make_executor(name: str, workers: int | None = None, **options: Any) -> Any:
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be an integer of at least 1, got {workers!r}")
    if name not in EXECUTORS:
        raise ValueError(f"unknown executor {name!r}; available: {', '.join(EXECUTORS)}")
    return EXECUTORS[name](workers=workers, **options)
