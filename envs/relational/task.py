"""``papergym/RDBFewShot-v0``: few-shot prediction on relational databases, scored by AUC on
held-out databases the agent never saw; the agent trains on the relational prior only."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from papergym import cache
from papergym.envs.relational.dfs import linearize
from papergym.envs.relational.evaluate import auc, stratified_shots
from papergym.envs.relational.generator import PRIOR, SHIFT, sample_database, sample_task
from papergym.envs.relational.package_tasks import DIGITS, package_tasks
from papergym.problem import (
    Budget,
    EvalResult,
    MetricDeclaration,
    SharedRuns,
    Task,
    check_training_seed,
    eval_salt,
    eval_seed_sequence,
    salt_id,
)

PACKAGE = Path(__file__).parent
SUITE_TAG, SHOT_TAG, PRIOR_TAG, SHARED_TAG, CHECK_TAG = 811, 812, 813, 814, 815
CHECK_TASKS, CHECK_ROWS = 16, 64  # held-out prior tasks per kind for ``prior_validation``; rows each
PRIMARY_SUITES = ("shift", "package")  # synthetic-id favours the prior's own models: never primary
KINDS = ("single", "relational")


@dataclass(frozen=True)
class EvalItem:
    """One held-out task, DFS-linearized: the fixed test pool and the pool shots come from."""

    name: str
    group: str  # unit of the claims (the ten digit tasks share one)
    suite: str  # id | shift | package | exploratory
    X: np.ndarray
    y: np.ndarray
    cat: np.ndarray
    own: np.ndarray
    test: np.ndarray
    pool: np.ndarray


def _split_pool(y: np.ndarray, test_pool: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A fixed test pool (stratified, min(test_pool, n / 2) rows) and the rest."""
    n = len(y)
    k = min(test_pool, n // 2)
    test = []
    for c in (0, 1):
        rows = np.flatnonzero(y == c)
        test.append(rng.choice(rows, size=max(1, int(round(k * len(rows) / n))), replace=False))
    test = np.sort(np.concatenate(test))
    return test, np.setdiff1d(np.arange(n), test)


def build_suite(n_id: int, n_shift: int, digits: Sequence[int], cancer: bool, diabetes: bool,
                test_pool: int, min_entities: int) -> list[EvalItem]:
    """The evaluation tasks, drawn from the salted eval stream (one suite for every trial)."""
    items = []
    for suite, count, hyper in (("id", n_id, PRIOR), ("shift", n_shift, SHIFT)):
        # evaluation tables are larger than the prior's, with room for the shots and a test pool
        m = min_entities
        hyper = replace(hyper, root_rows=(m, 2 * m), child_rows=(m, 4 * m))
        for i in range(count):
            rng = np.random.default_rng(eval_seed_sequence(SUITE_TAG, 0 if suite == "id" else 1, i))
            kind = ("hidden", "temporal", "child")[i % 3]  # every task type in every suite
            task = sample_task(rng, hyper, min_entities=min_entities, tries=100, kind=kind)
            f = linearize(task.db, task.target, task.entities, task.cutoff)
            test, pool = _split_pool(task.y, test_pool, rng)
            items.append(EvalItem(f"{suite}-{i:02d}-{task.kind}", f"{suite}-{i:02d}", suite, f.X, task.y,
                                  f.cat, f.own, test, pool))
    for j, (group, suite, task) in enumerate(package_tasks(tuple(digits), cancer, diabetes)):
        rng = np.random.default_rng(eval_seed_sequence(SUITE_TAG, 2, j))
        f = linearize(task.db, task.target, task.entities, task.cutoff)
        test, pool = _split_pool(task.y, test_pool, rng)
        items.append(EvalItem(task.name, group, suite, f.X, task.y, f.cat, f.own, test, pool))
    return items


class RelationalView:
    """What the agent may use: the relational prior, never an evaluation database.

    ``sample_prior(n, kind)`` returns ``n`` DFS-linearized pretraining tasks, each a dict with
    ``X`` (rows x columns, float, NaN where a group was empty), ``y`` (0/1), ``cat`` (categorical
    mask), ``own`` (the target table's own columns) and ``kind``: ``single`` (one SCM table; X its
    own columns) or ``relational`` (a task of type hidden parent attribute, temporal aggregation
    or child-row attribute on a database of 2-5 tables). Each database gives
    ``tasks_per_database`` consecutive tasks (different entity samples of ``prior_entities`` rows).
    Every call spends ``prior_tasks``; the stream is a function of the trial seed and the call
    order. ``sample_database(kind)`` returns one raw database (tables) and spends one task.

    ``shared_pretraining(key, fit, per_seed=False)``: ``fit(view)`` run once per agent and
    ``key`` (a string naming every setting of the run) on a view of the *shared* prior stream,
    the same for every trial seed, and memoized by the problem (:class:`papergym.problem.SharedRuns`:
    the harness adds the agent's identity to the key); every trial of that agent asking for
    ``key`` gets its return value and is charged the prior tasks that run drew. So the seeds of
    an agent start from one pretraining stage without paying for it more than once in wall time,
    while each trial's budget still counts it. With ``per_seed`` the run is once per agent,
    ``key`` and trial seed, on that seed's own shared stream: the agent's variants at one seed
    (e.g. a checkpoint and its continuation) share it, the seeds stay independent.

    ``prior_validation(predictor, step)``: the problem scores ``predictor`` (the artifact's
    signature) on a fixed set of held-out prior tasks (``CHECK_TASKS`` per kind, the first half
    of their ``CHECK_ROWS`` rows the context) and records the mean cross-entropy and AUC per kind
    at the agent's ``step``; the record becomes the trial's curves ``prior_loss_single`` and
    ``prior_loss_relational``. It spends ``prior_tasks`` (2 ``CHECK_TASKS`` per call) and returns
    the record.
    """

    def __init__(self, seed: int, budget: Budget, prior_entities: int, tasks_per_database: int,
                 max_shots: int, checks: cache.Entry | None = None, stream: int = PRIOR_TAG,
                 shared: SharedRuns | None = None) -> None:
        self.seed, self.budget = int(seed), budget
        self.prior_entities, self.tasks_per_database = int(prior_entities), int(tasks_per_database)
        self.max_shots = int(max_shots)
        self.kinds = KINDS
        self.validation: list[dict[str, float]] = []
        self._checks, self._stream, self._shared = checks, stream, shared or SharedRuns()
        self._draws = {k: 0 for k in KINDS}
        self._current: dict[str, Any] = {}

    def _rng(self, kind: str) -> np.random.Generator:
        self._draws[kind] += 1
        return np.random.default_rng([self._stream, self.seed, KINDS.index(kind), self._draws[kind]])

    def _linearized(self, kind: str) -> dict[str, Any]:
        rng = self._rng(kind)
        task = sample_task(rng, PRIOR, single=kind == "single", min_entities=self.prior_entities)
        f = linearize(task.db, task.target, task.entities, task.cutoff)
        return {"X": f.X, "y": task.y, "cat": f.cat, "own": f.own, "rng": rng,
                "left": self.tasks_per_database}

    def sample_prior(self, n: int, kind: str = "single") -> list[dict[str, Any]]:
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}")
        self.budget.spend("prior_tasks", n)
        out = []
        for _ in range(n):
            cur = self._current.get(kind)
            if cur is None or cur["left"] == 0:
                cur = self._current[kind] = self._linearized(kind)
            cur["left"] -= 1
            n_rows = min(self.prior_entities, len(cur["y"]))
            rows = cur["rng"].choice(len(cur["y"]), size=n_rows, replace=False)
            out.append({"X": cur["X"][rows].copy(), "y": cur["y"][rows].copy(), "cat": cur["cat"].copy(),
                        "own": cur["own"].copy(), "kind": kind})
        return out

    def sample_database(self, kind: str = "relational") -> dict[str, Any]:
        if kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
        self.budget.spend("prior_tasks", 1)
        db = sample_database(self._rng(kind), PRIOR, single=kind == "single")
        return {"edges": list(db.edges), "tables": {
            name: {"columns": {k: v.copy() for k, v in t.columns.items()}, "categorical": sorted(t.cat),
                   "foreign_keys": {k: v.copy() for k, v in t.fks.items()},
                   "time": None if t.time is None else t.time.copy()} for name, t in db.tables.items()}}

    def shared_pretraining(self, key: str, fit: Callable[[RelationalView], Any],
                           per_seed: bool = False) -> Any:
        if self._stream == SHARED_TAG:
            raise PermissionError("a shared pretraining run cannot start another")
        limit = self.budget.limits["prior_tasks"]
        seed = self.seed if per_seed else 0
        setting = {"prior_entities": self.prior_entities, "tasks_per_database": self.tasks_per_database,
                   "max_shots": self.max_shots, "prior_tasks": limit, "seed": seed if per_seed else None}

        def run() -> dict[str, Any]:
            view = RelationalView(seed, Budget(prior_tasks=limit), self.prior_entities,
                                  self.tasks_per_database, self.max_shots, self._checks, stream=SHARED_TAG)
            value = fit(view)
            return {"value": value, "prior_tasks": view.budget.used["prior_tasks"],
                    "validation": view.validation}

        done = self._shared.get("relational/shared", key, setting, run, (PACKAGE,))
        self.budget.spend("prior_tasks", done["prior_tasks"])
        self.validation = [dict(r) for r in done["validation"]] + self.validation
        return done["value"]

    def prior_validation(self, predictor: Callable[..., Any], step: int) -> dict[str, float]:
        if self._checks is None:
            raise RuntimeError("this view has no held-out prior tasks")
        if not isinstance(step, int) or isinstance(step, bool) or step < 0:
            raise ValueError(f"step must be a non-negative integer, got {step!r}")
        self.budget.spend("prior_tasks", CHECK_TASKS * len(KINDS))
        record: dict[str, float] = {"step": step}
        for kind, tasks in cache.get(self._checks).items():
            losses, aucs = [], []
            for t in tasks:
                half = len(t["y"]) // 2
                p = np.asarray(predictor(t["X"][:half].copy(), t["y"][:half].copy(), t["X"][half:].copy(),
                                         t["cat"].copy(), t["own"].copy()), dtype=float).reshape(-1)
                y = t["y"][half:]
                if p.shape != y.shape or not np.all(np.isfinite(p)):
                    raise ValueError(f"predictor must return {len(y)} finite probabilities")
                q = np.clip(p, 1e-6, 1 - 1e-6)
                losses.append(float(-np.mean(y * np.log(q) + (1 - y) * np.log(1 - q))))
                aucs.append(auc(y, p))
            record[f"loss_{kind}"], record[f"auc_{kind}"] = float(np.mean(losses)), float(np.mean(aucs))
        self.validation.append(record)
        return dict(record)


def check_tasks(prior_entities: int) -> dict[str, list[dict[str, Any]]]:
    """The held-out prior tasks ``prior_validation`` scores on: ``CHECK_TASKS`` per kind from a
    stream no view samples, one per database, ``CHECK_ROWS`` rows with both classes in each half."""
    out: dict[str, list[dict[str, Any]]] = {}
    for k, kind in enumerate(KINDS):
        tasks: list[dict[str, Any]] = []
        draw = 0
        while len(tasks) < CHECK_TASKS:
            rng = np.random.default_rng([CHECK_TAG, k, draw])
            draw += 1
            task = sample_task(rng, PRIOR, single=kind == "single",
                               min_entities=max(prior_entities, CHECK_ROWS))
            f = linearize(task.db, task.target, task.entities, task.cutoff)
            rows = rng.choice(len(task.y), size=CHECK_ROWS, replace=False)
            y = task.y[rows]
            half = CHECK_ROWS // 2
            if min(np.sum(y[:half] == c) for c in (0, 1)) < 2 or len(set(y[half:])) < 2:
                continue
            tasks.append({"X": f.X[rows], "y": y, "cat": f.cat, "own": f.own})
        out[kind] = tasks
    return out


class RDBFewShotTask(Task):
    """
    ## Description
    Few-shot binary prediction on relational databases (RDB-PFN's setting). The agent may train
    only on the relational prior the view samples (synthetic databases from per-table structural
    causal models linked by foreign keys, DFS-linearized) and returns a predictor. The problem
    then scores it on held-out tasks: for every (task, shots, shot seed) it draws ``shots``
    stratified rows (>= 2 per class) of the task's pool as the context, calls the predictor on
    them and on the task's fixed test pool (features only), and computes every metric itself.
    Every agent gets the same DFS matrices, contexts and test pools. The view (``RelationalView``)
    also runs an agent's pretraining stage once for every trial of that agent that names it
    (``shared_pretraining``, memoized, still charged to each trial's budget) and scores a
    predictor on held-out prior tasks during training (``prior_validation``), which gives the
    trial's prior-loss curves.

    ## Data
    Suites (one draw for all trials, from the sealed eval stream): ``id`` (databases from the
    prior's own hyper-distribution), ``shift`` (depth-3 schemas twice as likely, activations
    softplus/sin/relu, Zipf alpha in [1.5, 2.5], 6-12 features), ``package`` (``digits-rows``, ten
    digit-vs-rest tasks that form one group, and ``cancer-views``) and ``exploratory``
    (``diabetes-labs``). Synthetic evaluation tables hold m..2m (root) and m..4m (child) rows,
    m = max(``min_entities``, largest shot level + ``test_pool``) (the prior's: 50-300 and
    100-1,000). Shot levels above a task's pool are skipped.

    ## Artifact
    A callable ``predict_proba(X_train, y_train, X_test, cat_mask, own_mask) -> P(y = 1)`` per test
    row (finite, in [0, 1]); each call must return within ``call_limit_s``.

    ## Metrics
    ``auc`` (primary): mean ROC-AUC over the groups of ``shift`` and ``package`` at shots <= 128
    (a group averages its tasks, shot levels and shot seeds); ``auc_id``, ``auc_shift``,
    ``auc_package``, ``auc_exploratory`` (the same per suite); ``auc_<n>`` (``shift`` and
    ``package`` at n shots); ``normalized`` = (auc - 0.5) / 0.5; ``accuracy`` and
    ``balanced_accuracy`` (threshold 0.5, like ``auc``); ``infer_seconds`` (mean per call;
    timing, not deterministic). Units: one per (task, shots, shot seed) with ``auc`` and
    ``accuracy`` and fields task, group, suite, shots; one per task with ``auc_gap`` (its mean AUC
    at the fewest minus at the most shots, where it has both) for the few-shot interaction
    claim. Curves ``prior_loss_single`` and ``prior_loss_relational``: the held-out prior
    cross-entropy at each step the agent asked for ``prior_validation`` (the info keeps the AUCs).

    ## Episode End
    One predictor per trial, called once per (task, shots, shot seed).

    ## Arguments
    ``n_id``, ``n_shift`` (synthetic evaluation tasks), ``digits`` (digit tasks), ``cancer``,
    ``diabetes``, ``shots`` (context sizes), ``shot_seeds``, ``test_pool`` (rows per test pool),
    ``min_entities`` (of a synthetic evaluation table), ``prior_tasks`` (budget of prior tasks),
    ``prior_entities`` (rows per prior task), ``tasks_per_database``, ``call_limit_s``.

    ## Tiers
    smoke: 2 id + 2 shift + digit 0 + cancer, shots 32 and 128, 1 shot seed. standard: 8 id +
    16 shift + the ten digits + cancer + diabetes (36 tasks), shots 32 and 128, 1 shot seed,
    test pools of 150, prior tasks of 192 rows (room for 136-row pretraining contexts).
    full: 30 + 30 + package, shots up to 1,024, 5 shot seeds, pools of 500 (the PFN sizes are
    the agents' config, in the benchmark spec).

    ## Reference
    RDB-PFN, "the first relational foundation model trained purely via synthetic data" (arXiv
    2603.03805; code MuLabPKU/RDBPFN, read, not used). Read: the prior's structure (per-table
    SCMs, foreign keys by multinomial selection on an edge score, post-processing), DFS depth 2
    with count/mean/sum/min/max/mode. Reconstructed: every size and hyper-distribution, the
    shifted suite, the timestamp rule, the binary task definitions, the package tasks.
    References: a constant predictor (AUC 0.5, normalized 0), perfect ranking (1).

    ## Version History
    - v0: initial release. Later additions that change no prior, task or score: the view's
      ``shared_pretraining`` (since spec v2 also ``per_seed``) and ``prior_validation``,
      ``auc_gap`` units per task (were per group), the standard tier's sizes (first 52 tasks,
      shots up to 512, 3 shot seeds; since spec v2 the 36 tasks, shots and prior rows above,
      so that the scored contexts lie within the PFNs' pretraining contexts).
    """

    id: ClassVar[str] = "papergym/RDBFewShot-v0"
    family: ClassVar[str] = "relational"
    paper: ClassVar[str] = "rdbpfn2026"
    metrics: ClassVar[Mapping[str, MetricDeclaration]] = {
        "auc": ("max", 0.0, 1.0), "auc_id": ("max", 0.0, 1.0), "auc_shift": ("max", 0.0, 1.0),
        "auc_package": ("max", 0.0, 1.0), "auc_exploratory": ("max", 0.0, 1.0),
        **{f"auc_{n}": ("max", 0.0, 1.0) for n in (32, 64, 128, 256, 512, 1024)},
        "normalized": ("max", -1.0, 1.0), "accuracy": ("max", 0.0, 1.0),
        "balanced_accuracy": ("max", 0.0, 1.0), "infer_seconds": ("min", 0.0, None),
    }
    nondeterministic_metrics: ClassVar[frozenset[str]] = frozenset({"infer_seconds"})

    def __init__(self, tier: str = "smoke", n_id: int = 2, n_shift: int = 2, digits: Sequence[int] = (0,),
                 cancer: bool = True, diabetes: bool = False, shots: Sequence[int] = (32, 128),
                 shot_seeds: int = 1, test_pool: int = 200, min_entities: int = 400,
                 prior_tasks: int = 40_000,
                 prior_entities: int = 96, tasks_per_database: int = 8, call_limit_s: float = 60.0) -> None:
        super().__init__(tier=tier, n_id=n_id, n_shift=n_shift, digits=list(digits), cancer=cancer,
                         diabetes=diabetes, shots=list(shots), shot_seeds=shot_seeds, test_pool=test_pool,
                         min_entities=min_entities, prior_tasks=prior_tasks, prior_entities=prior_entities,
                         tasks_per_database=tasks_per_database, call_limit_s=call_limit_s)
        for name, value, low in (("n_id", n_id, 0), ("n_shift", n_shift, 0), ("shot_seeds", shot_seeds, 1),
                                 ("test_pool", test_pool, 20), ("min_entities", min_entities, 40),
                                 ("prior_tasks", prior_tasks, 0), ("prior_entities", prior_entities, 16),
                                 ("tasks_per_database", tasks_per_database, 1)):
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise ValueError(f"{self.id}: {name} must be an integer >= {low}, got {value!r}")
        shots = sorted(int(s) for s in shots)
        if not shots or shots[0] < 4 or len(set(shots)) != len(shots):
            raise ValueError(f"{self.id}: shots must be distinct integers >= 4, got {shots}")
        if any(int(d) not in DIGITS for d in digits) or len(set(digits)) != len(digits):
            raise ValueError(f"{self.id}: digits must be distinct digits 0..9, got {list(digits)}")
        if min_entities < shots[-1] + 2:
            raise ValueError(f"{self.id}: min_entities must exceed the largest shot level {shots[-1]}")
        if not call_limit_s > 0:
            raise ValueError(f"{self.id}: call_limit_s must be positive, got {call_limit_s}")
        self.suite_kwargs = {"n_id": n_id, "n_shift": n_shift, "digits": [int(d) for d in digits],
                             "cancer": bool(cancer), "diabetes": bool(diabetes), "test_pool": test_pool,
                             "min_entities": max(min_entities, shots[-1] + test_pool)}
        self.shots, self.shot_seeds = shots, shot_seeds
        self.prior_tasks, self.prior_entities = prior_tasks, prior_entities
        self.tasks_per_database, self.call_limit_s = tasks_per_database, float(call_limit_s)
        self._view: RelationalView | None = None

    @property
    def budget(self) -> Budget:
        return Budget(prior_tasks=self.prior_tasks)

    def suite_entry(self) -> cache.Entry:
        salt = eval_salt()
        return cache.Entry("relational/suite", {**self.suite_kwargs, "salt": salt_id(salt) if salt else None},
                           build=lambda: build_suite(**self.suite_kwargs), code=(PACKAGE,))

    def checks_entry(self) -> cache.Entry:
        entities = self.prior_entities
        return cache.Entry("relational/checks", {"prior_entities": entities, "tasks": CHECK_TASKS,
                                                 "rows": CHECK_ROWS},
                           build=lambda: check_tasks(entities), code=(PACKAGE,))

    def cache_entries(self, seeds: Sequence[int]) -> list[cache.Entry]:
        return [self.suite_entry(), self.checks_entry()]

    def train_view(self, seed: int, budget: Budget) -> RelationalView:
        check_training_seed(seed, self.id)
        self._view = RelationalView(seed, budget, self.prior_entities, self.tasks_per_database,
                                    self.shots[-1], self.checks_entry(), shared=self.shared_runs)
        return self._view

    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        if not callable(artifact):
            raise TypeError(f"{self.id} expects a callable predict_proba(X_train, y_train, X_test, cat_mask, "
                            f"own_mask), got {type(artifact).__name__}")
        suite = cache.get(self.suite_entry())
        units, seconds = [], []
        for item in suite:
            for shots in self.shots:
                if shots > len(item.pool):
                    continue
                for s in range(self.shot_seeds):
                    rng = np.random.default_rng(eval_seed_sequence(SHOT_TAG, shots, s, *map(ord, item.name)))
                    train = stratified_shots(item.y, item.pool, shots, rng)
                    start = time.perf_counter()
                    p = artifact(item.X[train].copy(), item.y[train].copy(), item.X[item.test].copy(),
                                 item.cat.copy(), item.own.copy())
                    elapsed = time.perf_counter() - start
                    if elapsed > self.call_limit_s:
                        raise TimeoutError(f"{self.id}: predict_proba took {elapsed:.1f} s on {item.name} "
                                           f"(limit {self.call_limit_s:g} s)")
                    seconds.append(elapsed)
                    p = np.asarray(p, dtype=float).reshape(-1)
                    bad = p.shape != (len(item.test),) or not np.all(np.isfinite(p))
                    if bad or p.min() < 0 or p.max() > 1:
                        raise ValueError(f"{self.id}: predict_proba must return {len(item.test)} finite "
                                         f"probabilities in [0, 1] for {item.name}")
                    y = item.y[item.test]
                    hard = p > 0.5
                    balanced = float(0.5 * (hard[y == 1].mean() + (~hard[y == 0]).mean()))
                    units.append({"instance": f"{item.name}/{shots}/{s}", "task": item.name,
                                  "group": item.group, "suite": item.suite, "shots": shots, "auc": auc(y, p),
                                  "accuracy": float(np.mean(hard == y)), "balanced_accuracy": balanced})
        checks = list(self._view.validation) if self._view is not None else []  # this trial's view
        curves = {f"prior_loss_{kind}": [(r["step"], r[f"loss_{kind}"]) for r in checks] for kind in KINDS}
        return EvalResult(metrics=self.summary(units, seconds), units=units + self.gap_units(units),
                          curves={k: v for k, v in curves.items() if v},
                          info={"prior_validation": checks} if checks else {})

    def summary(self, units: list[dict], seconds: list[float]) -> dict[str, float]:
        def mean(metric: str, suites: Sequence[str], shots: Sequence[int]) -> float | None:
            groups: dict[str, list[float]] = {}
            for u in units:
                if u["suite"] in suites and u["shots"] in shots:
                    groups.setdefault(u["group"], []).append(u[metric])
            return float(np.mean([np.mean(v) for v in groups.values()])) if groups else None

        few = [n for n in self.shots if n <= 128] or self.shots[:1]
        out = {"auc": mean("auc", PRIMARY_SUITES, few), "accuracy": mean("accuracy", PRIMARY_SUITES, few),
               "balanced_accuracy": mean("balanced_accuracy", PRIMARY_SUITES, few)}
        for suite in ("id", "shift", "package", "exploratory"):
            out[f"auc_{suite}"] = mean("auc", (suite,), few)
        for n in self.shots:
            out[f"auc_{n}"] = mean("auc", PRIMARY_SUITES, (n,))
        out = {k: v for k, v in out.items() if v is not None}
        if "auc" in out:
            out["normalized"] = (out["auc"] - 0.5) / 0.5
        out["infer_seconds"] = float(np.mean(seconds)) if seconds else 0.0
        return out

    def gap_units(self, units: list[dict]) -> list[dict]:
        """Per task having both: mean AUC at the fewest shots minus at the most."""
        lo, hi = self.shots[0], self.shots[-1]
        by: dict[str, dict[int, list[float]]] = {}
        first: dict[str, dict] = {}
        for u in units:
            if u["shots"] in (lo, hi):
                by.setdefault(u["task"], {}).setdefault(u["shots"], []).append(u["auc"])
                first.setdefault(u["task"], u)
        return [{"instance": f"{task}/gap", "task": task, "group": first[task]["group"],
                 "suite": first[task]["suite"], "auc_gap": float(np.mean(levels[lo]) - np.mean(levels[hi]))}
                for task, levels in by.items() if lo != hi and lo in levels and hi in levels]
