"""The Ray executor: the same trials as Ray tasks, on a local Ray or a cluster.

``papergym run BENCH --executor ray [--address auto]``. Each trial is one Ray task with one
CPU; the runner's process stays the only writer of the store, so resume works across
executors (a key stored by ``local`` is skipped by ``ray`` and the other way round), and the
metrics of a key do not depend on the executor (workers run torch with one thread).

Failures: an exception inside the trial is a failed row (as with ``local``); a worker
process that dies (killed, out of memory) is retried ``max_retries`` times by Ray, then
recorded as a failed row naming the crash; a trial past its timeout is cancelled (its
worker killed) and recorded as a timeout. Nothing is silently lost.

On a cluster every node needs papergym installed, and a plug-in agent file or a spec's
imported .py files must exist at the same path on every node.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from typing import Any

from papergym.leaderboard.store import Row

from .executors import _Progress, limit_threads
from .runner import Trial, execute_trial, failed_row, import_targets, trial_limits


def _run_trial_in_ray_worker(trial: Trial) -> Row:
    """The Ray worker is the trial's problem process; the agent runs in its sandboxed child."""
    limit_threads()
    import_targets(trial.imports)  # the spec's own problems and agents, in this process
    return execute_trial(trial, trial_limits(trial), limit_problem_memory=False)


class RayExecutor:
    def __init__(self, workers: int | None = None, address: str | None = None,
                 max_retries: int = 1) -> None:
        self.workers = workers
        self.address = address
        self.max_retries = max_retries

    def _init_ray(self) -> Any:
        try:
            import ray
        except ImportError:
            raise ValueError("the ray executor needs Ray: pip install 'papergym[ray]'") from None
        if not ray.is_initialized():
            if self.address:
                ray.init(address=self.address, log_to_driver=False)
            else:
                ray.init(num_cpus=self.workers, include_dashboard=False, log_to_driver=False)
        return ray

    def run(self, trials: Sequence[Trial], on_result: Callable[[Row], None],
            progress_label: str | None = None,
            claim: Callable[[Trial], bool] | None = None) -> None:
        if not trials:
            return
        ray = self._init_ray()
        remote = ray.remote(num_cpus=1, max_retries=self.max_retries)(_run_trial_in_ray_worker)
        bar = _Progress(progress_label, len(trials))
        # Submit no more than the cluster can run at once, so a trial's clock starts when it
        # is scheduled rather than when it was queued.
        capacity = max(1, int(self.workers or ray.cluster_resources().get("CPU", 1)))
        pending = list(trials)[::-1]
        running: dict[Any, tuple[Trial, float]] = {}
        try:
            while pending or running:
                while pending and len(running) < capacity:
                    trial = pending.pop()
                    if claim is not None and not claim(trial):
                        continue  # another runner on the store is computing it
                    running[remote.remote(trial)] = (trial, time.perf_counter())
                done, _ = ray.wait(list(running), num_returns=1, timeout=0.2)
                for ref in done:
                    trial, started = running.pop(ref)
                    row = self._result(ray, ref, trial, started)
                    on_result(row)
                    bar.advance(row)
                now = time.perf_counter()
                for ref, (trial, started) in list(running.items()):
                    if now - started > trial.timeout_s:
                        ray.cancel(ref, force=True)
                        running.pop(ref)
                        row = failed_row(trial, f"TimeoutError: trial exceeded "
                                                f"{trial.timeout_s:g}s", now - started)
                        on_result(row)
                        bar.advance(row)
        finally:
            for ref in running:
                ray.cancel(ref, force=True)
            bar.close()

    @staticmethod
    def _result(ray: Any, ref: Any, trial: Trial, started: float) -> Row:
        elapsed = time.perf_counter() - started
        try:
            return ray.get(ref)
        except ray.exceptions.RayError as err:  # worker crash after retries, or a harness error
            text = re.sub(r"\x1b\[[0-9;]*m", "", str(err)).strip()
            crashed = isinstance(err, (ray.exceptions.WorkerCrashedError,
                                       ray.exceptions.NodeDiedError))
            what = "worker died" if crashed else "error outside the trial"
            return failed_row(trial, f"{type(err).__name__}: {what}\n{text}", elapsed)
