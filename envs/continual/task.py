"""``papergym/ContinualLoRA-v0`` and ``papergym/ContinualLoRAHard-v0``: adapt a frozen
pretrained MLP to a stream of digits domain shifts, one task at a time; the problem scores the
submitted updates after every task on every task's test set, without the task identity."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from papergym import cache
from papergym.datasets import MeteredBatches, stratified_split
from papergym.envs.continual.core import (
    ADAPTED,
    TASKS,
    Backbone,
    TaskSplit,
    accuracy,
    balance,
    build_stream,
    pretrain_backbone,
    spectrum,
    transfer_metrics,
)
from papergym.problem import Budget, EvalResult, MetricDeclaration, Privileges, Task
from papergym.tuning import TuningRecord, cached_score, canonical

PACKAGE = Path(__file__).parent
TUNING_SEED = 900_000  # the tuning stream's seed: a training seed shared by every trial
VALIDATION_FRACTION = 0.2  # of each tuning task's training data, held out for selection
GRAD_FRACTION = 0.2  # the gradient subset: 20% of a task's training data
GRAD_PASSES = 2  # passes over the gradient subset granted per task
ORDER_TAG, GRAD_TAG, VAL_TAG = 31, 32, 33
ORDERS = ("forward", "reverse")
# the tuned settings whose chosen values a row shows as ``chosen_<key>`` (from the problem's
# record of the tuning runs; every setting of every run is in the row's provenance)
CHOSEN_KEYS = ("lr", "magnitude_lr_mult", "orth_lambda", "threshold")


def backbone_entry(seed: int, width: int, version: int = 0) -> cache.Entry:
    """The problem's pretrained backbone of one seed (identical for every agent)."""
    config = {"seed": int(seed), "width": int(width), **({"version": int(version)} if version else {})}
    return cache.Entry("continual/backbone", config,
                       build=lambda: pretrain_backbone(int(seed), int(width), int(version)),
                       code=(PACKAGE,))


def ordered(tasks: Sequence[str], order: str) -> tuple[str, ...]:
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    return tuple(tasks) if order == "forward" else tuple(reversed(tasks))


@dataclass(frozen=True)
class Setting:
    """What a view needs of its Task (a record: the view holds no Task)."""

    tasks: tuple[str, ...]  # in stream order
    hard: bool
    width: int
    rank: int
    epochs: int
    batch_size: int
    tuning_runs: int
    version: int = 0


class TaskData:
    """One task of the stream as the learner sees it (training data only).

    ``index`` (position in the stream, 0-based) and ``name`` are the task identity, given during
    training only. ``batches.epoch()`` gives one epoch of batch-``batch_size`` minibatches (at
    most ``epochs`` of them); ``gradient_data()`` returns the fixed 20% gradient subset (X, y),
    each call one of the ``GRAD_PASSES`` passes. Both close when the task is submitted.
    """

    def __init__(self, index: int, split: TaskSplit, setting: Setting, budget: Budget, seed: int) -> None:
        self.index, self.name = int(index), split.name
        self.n_train = len(split.y_train)
        self.batches = MeteredBatches(split.X_train, split.y_train, setting.batch_size, budget,
                                      np.random.default_rng([ORDER_TAG, seed, index]),
                                      name=f"epochs_task{index}")
        rng = np.random.default_rng([GRAD_TAG, seed, index])
        _, subset = stratified_split(split.y_train, GRAD_FRACTION, rng)
        self._grad = (split.X_train[subset], split.y_train[subset])
        self._budget, self._grad_name = budget, f"grad_passes_task{index}"
        self.closed = False

    def gradient_data(self) -> tuple[np.ndarray, np.ndarray]:
        if self.closed:
            raise RuntimeError(f"task {self.index} is closed: the stream has moved on")
        self._budget.spend(self._grad_name, 1)
        return np.array(self._grad[0]), np.array(self._grad[1])

    def close(self) -> None:
        self.closed = True
        self.batches.close()

    def __repr__(self) -> str:
        return f"TaskData(index={self.index}, name={self.name!r}, n_train={self.n_train})"


def stream_budget(n_tasks: int, epochs: int, tuning_runs: int) -> Budget:
    limits: dict[str, float] = {"tuning_runs": tuning_runs}
    for t in range(n_tasks):
        limits[f"epochs_task{t}"] = epochs
        limits[f"grad_passes_task{t}"] = GRAD_PASSES
    return Budget(**limits)


class ContinualView:
    """The stream, one task at a time, and the frozen backbone.

    ``next_task()`` returns the next :class:`TaskData` once the previous task's update was
    submitted; ``submit(updates)`` hands in this task's update: one (out, in) array per adapted
    layer (``adapted_shapes``), the change of those weights over the task; the network after
    task t is the backbone plus the sum of the submitted updates. ``finish()`` returns the
    receipt that is the trial's artifact. ``submit(updates, task_specific=True)`` (reference
    agents only) marks an update as used only on its own task's test set (the per-task upper
    bound with the task identity known at test).

    ``validation_score(fit, config)`` runs ``fit(view)`` on the tuning stream (seed 900000,
    the forward standard stream, 80% of each task's training data, its own budget), returns
    the MAA on the held-out 20% and caches it under the trial agent's identity (set by the
    harness) and ``config`` (plain data naming every setting of ``fit``; papergym.tuning), so
    every trial of every seed, order and both problems shares one tuning run per
    configuration; each call spends one ``tuning_runs``.
    """

    def __init__(self, setting: Setting, budget: Budget, seed: int, backbone: Backbone,
                 privileges: Privileges, splits: Sequence[TaskSplit] | None = None,
                 tuning: bool = False, agent: str | None = None) -> None:
        self.seed, self.budget = int(seed), budget
        self.tasks, self.num_tasks = setting.tasks, len(setting.tasks)
        self.rank, self.epochs, self.batch_size = setting.rank, setting.epochs, setting.batch_size
        self.tuning_runs = 0 if tuning else setting.tuning_runs
        self.weights = tuple(np.array(w) for w in backbone.weights)  # copies of the frozen backbone
        self.biases = tuple(np.array(b) for b in backbone.biases)
        self.adapted = ADAPTED
        self.adapted_shapes = [tuple(self.weights[i].shape) for i in ADAPTED]
        self.init_seed = int(np.random.default_rng([ORDER_TAG, seed, 99]).integers(2**31))
        if splits is None:
            splits = build_stream(seed, setting.tasks, setting.hard, setting.version)
        self._train = [TaskSplit(s.name, s.X_train, s.y_train, s.X_train[:0], s.y_train[:0]) for s in splits]
        self._setting, self._privileges, self._tuning = setting, privileges, tuning
        self._current: TaskData | None = None
        self._submitted: list[tuple[np.ndarray, ...]] = []  # problem-side record of the updates
        self._task_specific: list[bool] = []
        self.receipt: str | None = None
        self.tuning = TuningRecord(self.tuning_runs)  # the problem's record of the tuning runs
        self._agent = agent  # the trial agent's identity (harness-set): keys its tuning runs

    def next_task(self) -> TaskData:
        t = len(self._submitted)
        if self._current is not None and not self._current.closed:
            raise RuntimeError(f"submit task {self._current.index}'s update before asking for the next")
        if t >= self.num_tasks:
            raise RuntimeError(f"the stream has {self.num_tasks} tasks, all submitted")
        self._current = TaskData(t, self._train[t], self._setting, self.budget, self.seed)
        return self._current

    def submit(self, updates: Sequence[Any], task_specific: bool = False) -> None:
        if self._current is None or self._current.closed:
            raise RuntimeError("no open task: call next_task() first")
        if not isinstance(updates, (list, tuple)) or len(updates) != len(ADAPTED):
            raise TypeError(f"updates must be a list of {len(ADAPTED)} arrays (one per adapted layer)")
        checked = []
        for i, (u, shape) in enumerate(zip(updates, self.adapted_shapes)):
            a = np.array(u, dtype=np.float64)
            if a.shape != shape:
                raise ValueError(f"update {i} must have shape {shape}, got {a.shape}")
            if not np.all(np.isfinite(a)):
                raise FloatingPointError(f"update {i} of task {self._current.index} is not finite")
            a.setflags(write=False)
            checked.append(a)
        if task_specific and not self._privileges.grant(True):
            raise PermissionError("task-specific updates (task identity at test) are for reference agents")
        self._submitted.append(tuple(checked))
        self._task_specific.append(bool(task_specific))
        self._current.close()

    def finish(self) -> str:
        if len(self._submitted) != self.num_tasks:
            raise RuntimeError(f"{len(self._submitted)} of {self.num_tasks} tasks submitted")
        self.receipt = f"continual-stream:{self.seed}:{self.num_tasks}"
        return self.receipt

    def validation_score(self, fit: Callable[[ContinualView], Any],
                         config: Mapping[str, Any]) -> float:
        if self._tuning:
            raise PermissionError("a tuning run cannot tune again")
        canonical(config)  # plain data, or a TypeError before any budget is spent
        self.budget.spend("tuning_runs", 1)
        s = self._setting
        tuning = Setting(TASKS[: len(s.tasks)], False, s.width, s.rank, s.epochs, s.batch_size, 0,
                         s.version)

        def run() -> float:
            backbone = cache.get(backbone_entry(TUNING_SEED, s.width, s.version))
            splits, held = [], []
            for split in build_stream(TUNING_SEED, tuning.tasks, False, s.version):
                tr, val = stratified_split(split.y_train, VALIDATION_FRACTION,
                                           np.random.default_rng([VAL_TAG, TUNING_SEED]))
                splits.append(TaskSplit(split.name, split.X_train[tr], split.y_train[tr],
                                        split.X_train[:0], split.y_train[:0]))
                held.append(TaskSplit(split.name, split.X_train[:0], split.y_train[:0],
                                      split.X_train[val], split.y_train[val]))
            view = ContinualView(tuning, stream_budget(len(tuning.tasks), s.epochs, 0), TUNING_SEED,
                                 backbone, self._privileges, splits=splits, tuning=True)
            try:
                fit(view)
            except FloatingPointError:
                return 0.0  # a diverged configuration
            if len(view._submitted) != view.num_tasks:
                raise RuntimeError(f"fit submitted {len(view._submitted)} of {view.num_tasks} tasks")
            a = accuracy_matrix(backbone, held, view._submitted, view._task_specific)
            return transfer_metrics(a)["maa"]

        problem = {"width": s.width, "rank": s.rank, "epochs": s.epochs, "batch_size": s.batch_size,
                   "tasks": len(s.tasks), "seed": TUNING_SEED,
                   **({"version": s.version} if s.version else {})}
        score = cached_score("continual/tuning", problem, self._agent, config, run, (PACKAGE,))
        self.tuning.add(config, score)
        return score


def accuracy_matrix(backbone: Backbone, splits: Sequence[TaskSplit], updates: Sequence[Sequence[np.ndarray]],
                    task_specific: Sequence[bool]) -> np.ndarray:
    """a[i][j]: accuracy on task j's test set after task i (row 0: the backbone). Shared updates
    accumulate; a task-specific update is used only on its own task, once learned."""
    T = len(splits)
    a = np.zeros((T + 1, T))
    shared = [np.zeros(shape, dtype=np.float64) for shape in backbone.adapted_shapes()]
    for i in range(T + 1):
        if i > 0 and not task_specific[i - 1]:
            shared = [d + u for d, u in zip(shared, updates[i - 1])]
        for j, split in enumerate(splits):
            deltas = updates[j] if (task_specific[j] and j < i) else shared
            a[i, j] = accuracy(backbone.weights, backbone.biases, deltas, split.X_test, split.y_test)
    return a


class ContinualLoRATask(Task):
    """
    ## Description
    Domain-incremental continual adaptation of a frozen pretrained network: a stream of digits
    domain shifts arrives one task at a time, and after each task the learner submits the
    change it made to the three hidden linear layers (an adapter's update, merged or not). The
    problem owns the backbone (MLP 64 -> w -> w -> w -> 10, GELU, pretrained on clean digits,
    cached per seed, identical for every agent) and the frozen output layer, and evaluates the
    network after every task on the test sets of all tasks with one shared 10-way head; the
    task identity is given during training only and never at test (the problem predicts with
    the submitted weights; no test input reaches agent code).

    ## Data
    ``load_digits`` / 16. Per seed, a stratified 50% pretrains the backbone (Adam, 30 epochs,
    batch 32); the other 50% are the stream's base images, split 2:1 train / test (stratified).
    Every task transforms the same base images: T1 rotate 90 degrees; T2 intensity inversion
    1 - x; T3 a fixed seeded pixel permutation; T4 transpose + Gaussian noise sigma 0.06; T5
    shift by 2 px + 3 x 3 blur. ``order`` forward is T1 -> Tk, reverse Tk -> T1.
    ``train_view(seed)`` is a :class:`ContinualView` (backbone copies, ``rank``, ``epochs``,
    ``batch_size``, ``next_task`` / ``submit`` / ``finish``, ``validation_score``). Budget per task:
    ``epochs`` epochs of batch-32 minibatches and 2 passes over a fixed 20% gradient subset;
    a closed task's data are no longer given.

    ## Artifact
    The receipt ``view.finish()`` returns once every task's update was submitted.

    ## Metrics
    With a[i][j] the test accuracy on task j after task i (row 0: the backbone): ``mfn`` (mean
    final accuracy, primary), ``maa``, ``bwt``, ``fwt``, ``zero_shot`` (mean a[j-1][j]),
    ``start_accuracy`` (mean a[0][j]: the backbone on every task before adaptation),
    ``clean_backbone`` (the backbone on the clean base test images), ``top1_share`` and
    ``flatness`` (mean over tasks and adapted layers of each submitted update's top-1 energy
    share sigma_1^2 / sum sigma^2 and normalized entropy H(sigma^2 / sum) / log r over its top
    r singular values; left out when every update is zero), ``top1_share_cum`` and
    ``flatness_cum`` (the same for the cumulative update W_T - W_0); for an agent that
    tuned, ``chosen_lr`` (and ``chosen_magnitude_lr_mult``, ``chosen_orth_lambda``,
    ``chosen_threshold`` where searched): the configuration its tuning runs chose (not scores).
    Curves: ``seen_accuracy`` (after task i, the mean accuracy on tasks 1..i) and
    ``final_accuracy`` (a[T][j] per task j).

    ## Episode End
    One stream per trial.

    ## Arguments
    ``tasks`` (how many of T1..T5, >= 2), ``order`` (forward | reverse), ``width`` (w), ``rank``
    (r, the adapter rank the spectral metrics use), ``epochs`` (per task), ``batch_size``,
    ``tuning_runs`` (shared tuning runs the view grants).

    ## Tiers
    smoke: T1-T3, w 128, r 4, 3 epochs, no tuning. standard: T1-T5, w 256, r 8, 5 epochs, 8
    tuning runs, orders forward and reverse as cells (benchmark spec). full: the paper's
    LLaVA-1.5-7B on UCIT / MLLM-DCL is GPU work and not shipped; the registered full tier is
    w 512, 10 epochs.

    ## Reference
    Gu, Luo, Zhou, Zhang, Zhang, Wei, "Spectral Imbalance Causes Forgetting in Low-Rank
    Continual Adaptation", ICML 2026 (arXiv 2602.00722). The digits stream and the MLP stand in
    for LLaVA-1.5-7B on UCIT / MLLM-DCL; the shifts and their parameters are ours.

    ## Version History
    - v0: initial release. Superseded by ``ContinualLoRA-v1`` (:class:`ContinualLoRATaskV1`):
      its backbone, pretrained on clean digits only, starts at chance on every task.
    """

    id: ClassVar[str] = "papergym/ContinualLoRA-v0"
    family: ClassVar[str] = "continual"
    paper: ClassVar[str] = "gu2026eblora"
    hard: ClassVar[bool] = False
    version: ClassVar[int] = 0  # the stream and pretraining design (envs/continual/core.py)
    metrics: ClassVar[Mapping[str, MetricDeclaration]] = {
        "mfn": ("max", 0.0, 1.0),
        "maa": ("max", 0.0, 1.0),
        "bwt": ("max", -1.0, 1.0),
        "fwt": ("max", -1.0, 1.0),
        "zero_shot": ("max", 0.0, 1.0),
        "start_accuracy": ("max", 0.0, 1.0),
        "clean_backbone": ("max", 0.0, 1.0),
        "top1_share": ("min", 0.0, 1.0),
        "flatness": ("max", 0.0, 1.0),
        "top1_share_cum": ("min", 0.0, 1.0),
        "flatness_cum": ("max", 0.0, 1.0),
        **{f"chosen_{key}": ("max", 0.0, None) for key in CHOSEN_KEYS},
    }

    def __init__(self, tier: str = "smoke", tasks: int = 3, order: str = "forward", width: int = 128,
                 rank: int = 4, epochs: int = 3, batch_size: int = 32, tuning_runs: int = 0) -> None:
        super().__init__(tier=tier, tasks=tasks, order=order, width=width, rank=rank, epochs=epochs,
                         batch_size=batch_size, tuning_runs=tuning_runs)
        for name, value, low in (("tasks", tasks, 2), ("width", width, 8), ("rank", rank, 2),
                                 ("epochs", epochs, 1), ("batch_size", batch_size, 1),
                                 ("tuning_runs", tuning_runs, 0)):
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise ValueError(f"{self.id}: {name} must be an integer >= {low}, got {value!r}")
        if tasks > len(TASKS):
            raise ValueError(f"{self.id}: tasks must be <= {len(TASKS)}, got {tasks}")
        if rank > min(width, 64) // 2:
            raise ValueError(f"{self.id}: rank must be <= {min(width, 64) // 2}, got {rank}")
        self.setting = Setting(ordered(TASKS[:tasks], order), self.hard, width, rank, epochs,
                               batch_size, tuning_runs, self.version)
        self._view: ContinualView | None = None

    @property
    def budget(self) -> Budget:
        s = self.setting
        return stream_budget(len(s.tasks), s.epochs, s.tuning_runs)

    def train_view(self, seed: int, budget: Budget) -> ContinualView:
        backbone = cache.get(backbone_entry(seed, self.setting.width, self.version))
        self._view = ContinualView(self.setting, budget, seed, backbone, self.privileges,
                                   agent=self.shared_runs.agent)
        return self._view

    def cache_entries(self, seeds: Sequence[int]) -> list[cache.Entry]:
        width, version = self.setting.width, self.version
        return [backbone_entry(s, width, version) for s in [*seeds, TUNING_SEED]]

    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        view = self._view
        if view is None or view.seed != seed:
            raise RuntimeError(f"{self.id}: evaluate needs the trial's train_view({seed}) first")
        if not isinstance(artifact, str) or artifact != view.receipt:
            raise TypeError(f"{self.id} expects the receipt view.finish() returned (a str), got "
                            f"{type(artifact).__name__}")
        backbone = cache.get(backbone_entry(seed, self.setting.width, self.version))
        splits = build_stream(seed, self.setting.tasks, self.setting.hard, self.version)
        a = accuracy_matrix(backbone, splits, view._submitted, view._task_specific)
        metrics = {**transfer_metrics(a), "clean_backbone": backbone.clean_accuracy}
        metrics.update(self.spectral_metrics(view._submitted))
        T = a.shape[1]
        curves = {"seen_accuracy": [(i, float(a[i, :i].mean())) for i in range(1, T + 1)],
                  "final_accuracy": [(j + 1, float(a[T, j])) for j in range(T)]}
        tuning = view.tuning.summary()
        if tuning:
            metrics.update({f"chosen_{k}": float(v) for k, v in tuning["chosen"].items()
                            if k in CHOSEN_KEYS and isinstance(v, (int, float)) and v >= 0})
        return EvalResult(metrics=metrics, curves=curves, info={"tuning": tuning} if tuning else {})

    def spectral_metrics(self, updates: Sequence[Sequence[np.ndarray]]) -> dict[str, float]:
        r = self.setting.rank
        per_task = [b for u in updates for d in u if (b := balance(spectrum(d, r))) is not None]
        out: dict[str, float] = {}
        if per_task:
            out["top1_share"] = float(np.mean([b[0] for b in per_task]))
            out["flatness"] = float(np.mean([b[1] for b in per_task]))
            cum = [b for i in range(len(ADAPTED))
                   if (b := balance(spectrum(sum(u[i] for u in updates), r))) is not None]
            out["top1_share_cum"] = float(np.mean([b[0] for b in cum]))
            out["flatness_cum"] = float(np.mean([b[1] for b in cum]))
        return out


class ContinualLoRAHardTask(ContinualLoRATask):
    """
    ## Description
    As ``ContinualLoRA-v0`` with the labels of T2 and T4 remapped y -> (y + 3) mod 10: the same
    images demand conflicting outputs across tasks, so what one task learns interferes with the
    others (forgetting cannot be avoided by input-side shifts alone).

    ## Data
    As ``ContinualLoRA-v0``, labels of T2 and T4 remapped (train and test).

    ## Artifact
    As ``ContinualLoRA-v0``.

    ## Metrics
    As ``ContinualLoRA-v0``.

    ## Episode End
    One stream per trial.

    ## Arguments
    As ``ContinualLoRA-v0``.

    ## Tiers
    As ``ContinualLoRA-v0``.

    ## Reference
    Gu et al., ICML 2026 (arXiv 2602.00722); the remapping is ours (interference by design).

    ## Version History
    - v0: initial release. Superseded by ``ContinualLoRAHard-v1``.
    """

    id: ClassVar[str] = "papergym/ContinualLoRAHard-v0"
    hard: ClassVar[bool] = True


class ContinualLoRATaskV1(ContinualLoRATask):
    """
    ## Description
    As ``ContinualLoRA-v0`` (domain-incremental adaptation of a frozen pretrained MLP to a
    stream of digits shifts, scored by the problem after every task on every task's test set
    without the task identity), with a backbone pretrained on a disjoint set of shifts, so that
    each task of the stream starts above chance, as a pretrained model's zero-shot does in the
    paper.

    ## Data
    ``load_digits`` / 16. Per seed, a stratified 50% pretrains the backbone under thirteen
    domains (``core.PRETRAIN_DOMAINS_V1``: clean, rotate 180 and 270, mirror left-right and
    top-bottom, anti-transpose, inversion of the top / bottom / left / right half, shifts by
    (1, -1) and (-1, 1) px, 3 x 3 blur); Adam, 15 epochs of batch 64. The other 50% are the
    stream's base images, split 2:1 train / test. Tasks: T1 rotate 90 degrees; T2 intensity
    inversion 1 - x; T3 a fixed seeded permutation of 24 of the 64 pixels; T4 transpose +
    Gaussian noise sigma 0.06; T5 shift by 1 px + 3 x 3 blur. None is a pretraining domain.
    The view and budget are ``ContinualLoRA-v0``'s.

    ## Artifact
    As ``ContinualLoRA-v0``.

    ## Metrics
    As ``ContinualLoRA-v0``; ``start_accuracy`` (mean a[0][j]) is above chance (0.1): 0.43-0.46 at
    width 256 (seeds 0, 1 and the tuning seed).

    ## Episode End
    One stream per trial.

    ## Arguments
    As ``ContinualLoRA-v0``.

    ## Tiers
    As ``ContinualLoRA-v0`` (registered in ``envs/continual/__init__.py``).

    ## Reference
    Gu, Luo, Zhou, Zhang, Zhang, Wei, ICML 2026 (arXiv 2602.00722): LLaVA-1.5-7B adapted to
    UCIT / MLLM-DCL. The pretraining domains and the shifts are ours.

    ## Version History
    - v0: initial release: the backbone, pretrained on clean digits only, starts at chance on
      every task (mean start accuracy 0.11 at standard).
    - v1: the backbone is pretrained on clean digits and twelve other shifts, none of them a
      stream task (the other dihedral maps, half-image inversions, 1 px diagonal shifts, 3 x 3
      blur; 15 epochs of batch 64); T3 permutes 24 of the 64 pixels (v0: all) and T5 shifts by
      1 px (v0: 2 px). Every task starts above chance (0.24-0.63 at width 256, seeds 0, 1 and the
      tuning seed); results
      are not comparable with v0.
    """

    id: ClassVar[str] = "papergym/ContinualLoRA-v1"
    version: ClassVar[int] = 1


class ContinualLoRAHardTaskV1(ContinualLoRATaskV1):
    """
    ## Description
    As ``ContinualLoRA-v1`` with the labels of T2 and T4 remapped y -> (y + 3) mod 10 (as
    ``ContinualLoRAHard-v0``): those two tasks start below chance by design (the backbone
    predicts the unmapped label), the other three above it.

    ## Data
    As ``ContinualLoRA-v1``, labels of T2 and T4 remapped (train and test).

    ## Artifact
    As ``ContinualLoRA-v0``.

    ## Metrics
    As ``ContinualLoRA-v0``.

    ## Episode End
    One stream per trial.

    ## Arguments
    As ``ContinualLoRA-v0``.

    ## Tiers
    As ``ContinualLoRA-v0``.

    ## Reference
    Gu et al., ICML 2026 (arXiv 2602.00722); the remapping is ours (interference by design).

    ## Version History
    - v0: initial release: the backbone, pretrained on clean digits only, starts at chance on
      every task (mean start accuracy 0.11 at standard).
    - v1: the backbone is pretrained on clean digits and twelve other shifts, none of them a
      stream task (the other dihedral maps, half-image inversions, 1 px diagonal shifts, 3 x 3
      blur; 15 epochs of batch 64); T3 permutes 24 of the 64 pixels (v0: all) and T5 shifts by
      1 px (v0: 2 px). T1, T3 and T5 start above chance, the remapped T2 and T4 below it by
      design; results are not comparable with v0.
    """

    id: ClassVar[str] = "papergym/ContinualLoRAHard-v1"
    hard: ClassVar[bool] = True
