"""``papergym/PCDepth-v0`` and ``papergym/PCDepthResidual-v0``: train a PC (or backprop)
network of a given depth on digits; the problem scores the returned weights."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from papergym import cache
from papergym.datasets import MeteredBatches, digits_split, stratified_split
from papergym.envs.predcoding.core import (
    Architecture,
    InferenceConfig,
    Params,
    check_params,
    energy_imbalance,
    predict,
)
from papergym.problem import Budget, EvalResult, MetricDeclaration, Task, eval_seed_sequence
from papergym.tuning import TuningRecord, cached_score, canonical

PACKAGE = Path(__file__).parent
TUNING_SEED = 900_000  # the tuning split's seed: a training seed, shared by every trial
VALIDATION_FRACTION = 0.2  # of the 75% pool: 60 / 15 / 25 train / validation / test
SPLIT_TAG, ORDER_TAG, INIT_TAG, IMBALANCE_TAG = 11, 12, 13, 14


def split(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Seed ``seed``'s stratified train / validation split of the fixed 75% training pool."""
    X_pool, y_pool, _, _ = digits_split()
    train, val = stratified_split(y_pool, VALIDATION_FRACTION, np.random.default_rng([SPLIT_TAG, seed]))
    return X_pool[train], y_pool[train], X_pool[val], y_pool[val]


def make_artifact(params: Params, inference: InferenceConfig | Mapping[str, Any]) -> dict[str, Any]:
    """The artifact format: plain arrays and the declared inference configuration."""
    if isinstance(inference, InferenceConfig):
        inference = {k: getattr(inference, k) for k in InferenceConfig.__dataclass_fields__}
    return {"W": [np.array(w) for w in params.W], "b": [np.array(v) for v in params.b],
            "inference": dict(inference)}


def read_artifact(artifact: Any, arch: Architecture, where: str) -> tuple[Params, InferenceConfig]:
    if not isinstance(artifact, Mapping) or not {"W", "b", "inference"} <= set(artifact):
        raise TypeError(f"{where} expects a dict with 'W', 'b' (lists of arrays) and 'inference' "
                        f"(make_artifact), got {type(artifact).__name__}")
    try:
        params = Params([np.asarray(w, dtype=np.float64) for w in artifact["W"]],
                        [np.asarray(v, dtype=np.float64) for v in artifact["b"]])
        check_params(params, arch)
        inference = InferenceConfig(**dict(artifact["inference"]))
    except (TypeError, ValueError) as err:
        raise TypeError(f"{where}: bad artifact: {err}") from None
    return params, inference


@dataclass(frozen=True)
class Setting:
    """What a view needs of its Task (a record: the view holds no Task)."""

    arch: Architecture
    epochs: int
    batch_size: int
    tuning_runs: int
    problem: tuple[tuple[str, Any], ...]  # the problem's id and sizes, for the tuning cache key
    agent: str | None = None  # the trial agent's identity, set by the harness: keys its tuning runs


class PCDepthView:
    """What an agent may use: the architecture, metered training epochs, the validation split.

    ``batches.epoch()`` gives one epoch of shuffled minibatches (the order drawn from the
    seed, the same for every agent) and spends one of the budget's ``epochs``; ``validation``
    is (X, y) for model selection; ``init_seed`` seeds the initial weights (shared by every
    agent of a seed). ``validation_accuracy(fit, config)`` runs ``fit(view)`` on the tuning
    split (seed 900000, its own epoch budget), scores the returned artifact's accuracy on that
    split's validation rows, and caches the score under the trial agent's identity (set by the
    harness) and ``config`` (plain data naming every setting of ``fit``), so the trials of
    every seed share one tuning run per configuration (papergym.tuning); each call spends one
    ``tuning_runs``. A run that returns non-finite weights (a diverged configuration) scores 0.
    """

    def __init__(self, setting: Setting, budget: Budget, seed: int, tuning: bool = False) -> None:
        X_train, y_train, X_val, y_val = split(seed)
        self.arch, self.seed, self.budget = setting.arch, int(seed), budget
        self.epochs, self.batch_size = setting.epochs, setting.batch_size
        self.tuning_runs = 0 if tuning else setting.tuning_runs
        self.init_seed = int(np.random.default_rng([INIT_TAG, seed]).integers(2**31))
        self.batches = MeteredBatches(X_train, y_train, setting.batch_size, budget,
                                      np.random.default_rng([ORDER_TAG, seed]))
        self.validation = (X_val, y_val)
        self.n_train = len(y_train)
        self._setting, self._tuning = setting, tuning
        self.tuning = TuningRecord(self.tuning_runs)  # the problem's record of the tuning runs

    def validation_accuracy(self, fit: Callable[[PCDepthView], Any],
                            config: Mapping[str, Any]) -> float:
        if self._tuning:
            raise PermissionError("a tuning run cannot tune again")
        canonical(config)  # plain data, or a TypeError before any budget is spent
        self.budget.spend("tuning_runs", 1)
        setting, arch = self._setting, self.arch

        def run() -> float:
            view = PCDepthView(setting, Budget(epochs=setting.epochs), TUNING_SEED, tuning=True)
            artifact = fit(view)
            if isinstance(artifact, Mapping) and not all(
                    np.all(np.isfinite(np.asarray(w, dtype=np.float64)))
                    for w in [*artifact.get("W", []), *artifact.get("b", [])]):
                return 0.0  # a diverged configuration: it predicts nothing
            params, _ = read_artifact(artifact, arch, "validation_accuracy")
            X_val, y_val = view.validation
            return float(np.mean(predict(params, arch, X_val) == y_val))

        problem = {"problem": dict(setting.problem), "seed": TUNING_SEED}
        score = cached_score("predcoding/tuning", problem, setting.agent, config, run, (PACKAGE,))
        self.tuning.add(config, score)
        return score


class PCDepthTask(Task):
    """
    ## Description
    Train a deep network on scikit-learn's digits with a learning rule of your choice
    (predictive coding, its variants, or backprop) and return its weights with the inference
    configuration the rule used. The problem defines the function class (so every agent trains
    the same network): an MLP of ``depth`` weight layers of width ``width``, GELU, squared error
    to the one-hot label (``envs/predcoding/core.py``). It scores the feed-forward prediction on
    the held-out test split and runs the declared relaxation itself (the shared PC core) to
    measure the layer-wise error imbalance that the paper names as the cause of deep PC's
    collapse.

    ## Data
    The digits (1,797 images, 8 x 8, pixels / 16): a fixed stratified 25% test split that never
    reaches the view; the rest is split per seed, stratified, into train (60% of all) and
    validation (15%). ``train_view(seed)`` is a :class:`PCDepthView`: ``arch``, ``epochs`` of
    batch-``batch_size`` minibatches (``batches.epoch()``, metered), ``validation``,
    ``init_seed``, and ``validation_accuracy`` (shared tuning runs, ``tuning_runs`` of them).

    ## Artifact
    ``make_artifact(params, inference)``: ``{"W": [W_1..W_L], "b": [b_1..b_L], "inference":
    {T, lr_h, momentum, nesterov, schedule (uniform | S | D), alpha, decay, aux, weight_update
    (settled | fu | backprop)}}``, shapes as ``Architecture.shapes()``.

    ## Metrics
    ``accuracy``: test accuracy of the feed-forward pass (PC with a free output predicts the
    same). ``energy_imbalance``: mean over 256 test samples (drawn with the sealed eval salt)
    of log10(max_l ||e_l||² / min_l ||e_l||²), e_l the error each layer's declared weight
    update uses, at the end of the declared relaxation with the label clamped (settled:
    h_l − u_l; fu: h_l − f_l(h0_{l−1}); backprop: the backprop deltas of the squared error).
    ``inference_steps``: relaxation steps per weight update (0 for backprop).
    ``seconds_per_epoch`` (nondeterministic): wall time from the first training epoch drawn to
    the evaluation, per epoch drawn.

    ## Episode End
    One artifact per trial.

    ## Arguments
    ``depth`` (L, >= 2), ``width``, ``epochs`` (training epochs the view grants), ``batch_size``,
    ``tuning_runs`` (tuning runs the view grants, each a full training run on the tuning split).

    ## Tiers
    smoke: L = 3, width 64, 5 epochs, no tuning. standard: L in {3, 9, 17} (benchmark spec),
    width 64, 8 epochs, batch 64, 9 tuning runs. full: width 128, 20 epochs, 16 tuning runs
    (the paper's VGG/ResNet on CIFAR-scale data are GPU work and not shipped).

    ## Reference
    Qi, Forasassi, Lukasiewicz, Salvatori, "Towards the Training of Deeper Predictive Coding
    Neural Networks", ICML 2026 (arXiv 2506.23800). MLPs on digits stand in for VGG / ResNet on
    CIFAR; the model convention and the imbalance measure's exact form are reconstructed.

    ## Version History
    - v0: initial release.
    """

    id: ClassVar[str] = "papergym/PCDepth-v0"
    family: ClassVar[str] = "predcoding"
    paper: ClassVar[str] = "qi2026deeppc"
    metrics: ClassVar[Mapping[str, MetricDeclaration]] = {
        "accuracy": ("max", 0.0, 1.0),
        "energy_imbalance": ("min", 0.0, None),
        "inference_steps": ("min", 0.0, None),
        "seconds_per_epoch": ("min", 0.0, None),
    }
    nondeterministic_metrics: ClassVar[frozenset[str]] = frozenset({"seconds_per_epoch"})
    n_imbalance: ClassVar[int] = 256

    def __init__(self, tier: str = "smoke", depth: int = 3, width: int = 64, epochs: int = 5,
                 batch_size: int = 64, tuning_runs: int = 0) -> None:
        super().__init__(tier=tier, depth=depth, width=width, epochs=epochs,
                         batch_size=batch_size, tuning_runs=tuning_runs)
        for name, value, low in (("width", width, 1), ("epochs", epochs, 1),
                                 ("batch_size", batch_size, 1), ("tuning_runs", tuning_runs, 0)):
            if not isinstance(value, int) or value < low:
                raise ValueError(f"{self.id}: {name} must be an integer >= {low}, got {value!r}")
        self.arch = self.make_arch(depth=depth, width=width)
        self.epochs, self.batch_size, self.tuning_runs = epochs, batch_size, tuning_runs
        self._clock: MeteredBatches | None = None

    def make_arch(self, depth: int, width: int) -> Architecture:
        if not isinstance(depth, int) or depth < 2:
            raise ValueError(f"{self.id}: depth must be an integer >= 2, got {depth!r}")
        return Architecture.mlp(depth, width)

    def setting(self) -> Setting:
        problem = {"id": self.id, "depth": self.arch.depth, "blocks": self.arch.blocks,
                   "width": self.arch.width, "epochs": self.epochs, "batch_size": self.batch_size}
        return Setting(self.arch, self.epochs, self.batch_size, self.tuning_runs, tuple(problem.items()),
                       agent=self.shared_runs.agent)

    @property
    def budget(self) -> Budget:
        return Budget(epochs=self.epochs, tuning_runs=self.tuning_runs)

    def train_view(self, seed: int, budget: Budget) -> PCDepthView:
        view = PCDepthView(self.setting(), budget, seed)
        self._clock = view.batches  # the problem's clock: from the first training epoch drawn
        self._tuning = view.tuning
        return view

    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        started = self._clock.started if self._clock is not None else None
        elapsed = None if started is None else time.perf_counter() - started
        params, inference = read_artifact(artifact, self.arch, self.id)
        _, _, X_test, y_test = digits_split()
        accuracy = float(np.mean(predict(params, self.arch, X_test) == y_test))
        rng = np.random.default_rng(eval_seed_sequence(IMBALANCE_TAG, seed))
        idx = np.sort(rng.choice(len(y_test), size=min(self.n_imbalance, len(y_test)), replace=False))
        with np.errstate(over="ignore", invalid="ignore"):
            per_sample = energy_imbalance(params, self.arch, X_test[idx], y_test[idx], inference)
        imbalance = float(np.mean(per_sample)) if np.all(np.isfinite(per_sample)) else math.inf
        drawn = self._clock.epochs_drawn if self._clock is not None else 0
        metrics = {
            "accuracy": accuracy,
            "energy_imbalance": imbalance,
            "inference_steps": 0.0 if inference.weight_update == "backprop"
            else float(inference.steps(self.arch)),
        }
        if elapsed is not None and drawn:
            metrics["seconds_per_epoch"] = elapsed / drawn
        tuning = self._tuning.summary() if getattr(self, "_tuning", None) else None
        return EvalResult(metrics=metrics, info={"tuning": tuning} if tuning else {})

    def cache_entries(self, seeds: Sequence[int]) -> list[cache.Entry]:
        return []  # tuning runs are agent-specific: built by the first trial that asks


class PCDepthResidualTask(PCDepthTask):
    """
    ## Description
    As ``PCDepth-v0`` with a residual network: an input layer, ``blocks`` residual blocks of two
    GELU layers whose second adds the block input (identity skip), and an output layer
    (L = 2 + 2B). Skip energy reaching deep layers faster than the main path is the paper's
    third cause of deep PC's collapse; DeepPC's auxiliary skip neurons (an identity latent on
    every skip) are part of the declared inference configuration (``aux``).

    ## Data
    As ``PCDepth-v0``.

    ## Artifact
    As ``PCDepth-v0`` (L = 2 + 2B weight layers; the skips carry no weights).

    ## Metrics
    As ``PCDepth-v0``.

    ## Episode End
    One artifact per trial.

    ## Arguments
    ``blocks`` (B >= 1), ``width``, ``epochs``, ``batch_size``, ``tuning_runs``.

    ## Tiers
    smoke: B = 2, width 64, 5 epochs, no tuning. standard: B in {2, 6} (L = 6, 14; benchmark
    spec), width 64, 8 epochs, 9 tuning runs. full: width 128, 20 epochs, 16 tuning runs.

    ## Reference
    Qi et al., ICML 2026 (arXiv 2506.23800): ResNets on CIFAR; residual MLPs here [recon].

    ## Version History
    - v0: initial release.
    """

    id: ClassVar[str] = "papergym/PCDepthResidual-v0"

    def __init__(self, tier: str = "smoke", blocks: int = 2, width: int = 64, epochs: int = 5,
                 batch_size: int = 64, tuning_runs: int = 0) -> None:
        self._blocks = blocks
        super().__init__(tier=tier, depth=2 + 2 * blocks if isinstance(blocks, int) else blocks,
                         width=width, epochs=epochs, batch_size=batch_size, tuning_runs=tuning_runs)
        self.kwargs = {"blocks": blocks, **{k: v for k, v in self.kwargs.items() if k != "depth"}}

    def make_arch(self, depth: int, width: int) -> Architecture:
        if not isinstance(self._blocks, int) or self._blocks < 1:
            raise ValueError(f"{self.id}: blocks must be an integer >= 1, got {self._blocks!r}")
        return Architecture.residual(self._blocks, width)
