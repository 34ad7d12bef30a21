"""TGFit-v0 (recover a torus graph from Gibbs samples) and TGScaling-v0 (cost per iteration vs d)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from sklearn.metrics import average_precision_score, roc_auc_score

from papergym import cache
from papergym.envs.torus import tg
from papergym.problem import Budget, EvalResult, Task, check_training_seed, sealed_seed

PAPER = "goffinet2026torus"
_CODE = (Path(tg.__file__),)


def _instance(d: int, n: int, phi_seed: int, sample_seed: int, gibbs: dict) -> dict[str, Any]:
    gibbs = dict(gibbs)
    max_rhat = gibbs.pop("max_rhat")
    (phi, mask), samples, rhat, attempts = tg.sample_gated(
        partial(tg.random_phi, d), n, np.random.default_rng(phi_seed),
        np.random.default_rng(sample_seed), max_rhat=max_rhat, **gibbs)
    return {"phi": phi, "mask": mask, "samples": samples, "rhat": rhat, "attempts": attempts}


def fit_instance_entry(d: int, n: int, phi_index: int, replicate: int, gibbs: dict) -> cache.Entry:
    """The held-out ground truth and its Gibbs samples; seeds sealed by the store's salt."""
    phi_seed = sealed_seed(phi_index, 101, d)
    sample_seed = sealed_seed(phi_index, 102, d, replicate)
    config = {"d": d, "n": n, "phi_seed": phi_seed, "sample_seed": sample_seed, **gibbs}
    return cache.Entry("torus/tgfit", config, build=lambda: _instance(d, n, phi_seed, sample_seed, gibbs),
                       code=_CODE)


class TGFitView:
    """The agent's data: ``data()`` returns X (n, d) in [0, 2pi) (float64, a copy) and charges
    ``samples`` n per call. ``d``, ``n`` and ``mode = "fit"`` describe it; phi* is not here."""

    mode = "fit"

    def __init__(self, samples: np.ndarray, budget: Budget) -> None:
        self._samples, self.budget = samples, budget
        self.n, self.d = samples.shape

    def data(self) -> np.ndarray:
        self.budget.spend("samples", self.n)
        return self._samples.copy()


def _edge_metrics(strength: np.ndarray, mask: np.ndarray) -> dict[str, float]:
    iu = np.triu_indices(mask.shape[0], 1)
    truth, scores = mask[iu].astype(int), np.asarray(strength, float)[iu]
    # clipped: sklearn's average precision can round to 1 + 1e-16
    return {"edge_auroc": float(np.clip(roc_auc_score(truth, scores), 0.0, 1.0)),
            "edge_auprc": float(np.clip(average_precision_score(truth, scores), 0.0, 1.0))}


class TGFitTask(Task):
    """Recover the parameters and edges of a torus graph from its samples.

    ## Description
    phi* is drawn by :func:`tg.random_phi` (diagonal N(0, 1); each edge kept w.p. 0.5 with its
    four entries N(0, s^2), s = 1 for d <= 5 and sqrt(5/d) above) and n samples of TG(phi*) are
    drawn by Gibbs sweeps over the von Mises full conditionals (1,000 chains; an R-hat gate
    regenerates phi* when the chains disagree). Both are built in the prepare phase and cached.
    Trial seed s uses phi draw s // ``sampling_seeds`` and sampling replicate s % ``sampling_seeds``;
    every draw is sealed by the store's evaluation salt, so phi* is no function of public seeds.

    ## Data
    ``TGFitView``: ``data()`` -> X (n, d) float64 in [0, 2pi); never phi* or the edge mask.

    ## Artifacts
    phi-hat, an array (d, d, 2) in the layout of ``tg`` (all metrics), or
    ``{"edge_scores": (d, d)}`` for edge-only estimators (edge metrics only; upper triangle read).

    ## Metrics
    ``r2`` (squared Pearson correlation of phi-hat and phi* over all 2d^2 entries; primary),
    ``mse``, ``edge_auroc`` and ``edge_auprc`` (edge strength ||(phi_ij, phi_ji)|| against the
    true edge mask), ``rhat`` and ``gibbs_attempts`` (the sampler's diagnostics).

    ## Budget
    ``samples``: sample reads through the view (``max_reads`` passes over the data).

    ## Episode End
    Not sequential: one artifact per trial.

    ## Arguments
    ``d``, ``n``, ``sampling_seeds`` (2), Gibbs ``chains``/``burn``/``thin``/``max_rhat``,
    ``max_reads``.

    ## Tiers
    smoke d = 5, n = 5,000; standard d in {5, 10, 20, 30, 50}, n = 20,000 (set per cell by the
    benchmark); full d up to 100 (Gibbs costs minutes per instance beyond).

    ## Reference
    Goffinet, Hanks & Carlson, "Torus Graphs for Large Scale Neural Phase Analysis" (ICML 2026);
    Klein et al., "Torus graphs for multivariate phase coupling analysis" (AoAS 2020). Gibbs
    sampling replaces the paper's HMC; the pair scale sqrt(5/d) for d > 5 is ours.

    ## Version History
    - v0: initial release.
    """

    id = "papergym/TGFit-v0"
    family = "torus"
    paper = PAPER
    metrics: ClassVar[dict[str, Any]] = {
        "r2": ("max", 0.0, 1.0), "mse": ("min", 0.0, None), "edge_auroc": ("max", 0.0, 1.0),
        "edge_auprc": ("max", 0.0, 1.0), "rhat": ("min", 0.0, None), "gibbs_attempts": "min",
    }

    def __init__(self, tier: str = "smoke", d: int = 5, n: int = 5000, sampling_seeds: int = 2,
                 chains: int = 1000, burn: int = 200, thin: int = 3, max_rhat: float = 1.05,
                 max_reads: int = 10000) -> None:
        super().__init__(tier=tier, d=d, n=n, sampling_seeds=sampling_seeds, chains=chains,
                         burn=burn, thin=thin, max_rhat=max_rhat, max_reads=max_reads)
        if int(d) < 2 or int(n) < 100:
            raise ValueError(f"TGFit-v0 needs d >= 2 and n >= 100, got d={d}, n={n}")
        self.d, self.n, self.replicates = int(d), int(n), int(sampling_seeds)
        self.gibbs = {"chains": int(chains), "burn": int(burn), "thin": int(thin),
                      "max_rhat": float(max_rhat)}
        self.max_reads = int(max_reads)

    def entry(self, seed: int) -> cache.Entry:
        return fit_instance_entry(self.d, self.n, seed // self.replicates, seed % self.replicates,
                                  self.gibbs)

    def cache_entries(self, seeds: Sequence[int]) -> list[cache.Entry]:
        return [self.entry(s) for s in seeds]

    @property
    def budget(self) -> Budget:
        return Budget(samples=self.max_reads * self.n)

    def train_view(self, seed: int, budget: Budget) -> TGFitView:
        check_training_seed(seed, self.id)
        return TGFitView(cache.get(self.entry(seed))["samples"], budget)

    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        inst = cache.get(self.entry(seed))
        phi, mask = inst["phi"], inst["mask"]
        d = self.d
        diag = {"rhat": float(inst["rhat"]), "gibbs_attempts": float(inst["attempts"])}
        if isinstance(artifact, dict) and "edge_scores" in artifact:
            scores = np.asarray(artifact["edge_scores"], dtype=float)
            if scores.shape != (d, d) or not np.isfinite(scores).all():
                raise ValueError(f"TGFit-v0: edge_scores must be a finite ({d}, {d}) array, got "
                                 f"shape {scores.shape}")
            return EvalResult(metrics={**_edge_metrics(scores, mask), **diag})
        if not isinstance(artifact, np.ndarray):
            raise TypeError(f"TGFit-v0 expects phi-hat as an array ({d}, {d}, 2) or "
                            f"{{'edge_scores': ({d}, {d})}}, got {type(artifact).__name__}")
        est = np.asarray(artifact, dtype=float)
        if est.shape != (d, d, 2) or not np.isfinite(est).all():
            raise ValueError(f"TGFit-v0: phi-hat must be a finite ({d}, {d}, 2) array, got {est.shape}")
        corr = np.corrcoef(est.ravel(), phi.ravel())[0, 1] if est.std() > 0 else 0.0
        metrics = {"r2": float(min(corr ** 2, 1.0)), "mse": float(np.mean((est - phi) ** 2)),
                   **_edge_metrics(tg.edge_strengths(est), mask), **diag}
        return EvalResult(metrics=metrics)


class TGScalingView:
    """The scaling protocol (``mode = "scaling"``): uniform random phases (statistics are
    irrelevant to cost). For SSM, ``batches(d)`` -> (warmup + iterations, batch, d); for exact
    score matching, ``exact_data(d)`` -> (exact_n, d). ``start_clock(kind, d)`` /
    ``stop_clock(kind, d)`` (kind "ssm" or "exact") bracket the timed work; the clock is the
    problem's (it runs where the view lives)."""

    mode = "scaling"

    def __init__(self, task: TGScalingTask, seed: int, clock: dict, budget: Budget) -> None:
        self.budget = budget
        self.dims, self.exact_dims = list(task.dims), list(task.exact_dims)
        self.batch, self.iterations, self.warmup = task.batch, task.iterations, task.warmup
        self.exact_n = task.exact_n
        self._seed, self._clock, self._open = seed, clock, {}

    def _rng(self, kind: int, d: int) -> np.random.Generator:
        return np.random.default_rng([self._seed, kind, d])

    def batches(self, d: int) -> np.ndarray:
        if d not in self.dims:
            raise ValueError(f"d={d} is not on the scaling grid {self.dims}")
        self.budget.spend("grid_reads", 1)
        return self._rng(0, d).uniform(0, tg.TWO_PI, (self.warmup + self.iterations, self.batch, d))

    def exact_data(self, d: int) -> np.ndarray:
        if d not in self.exact_dims:
            raise ValueError(f"d={d} is not on the exact grid {self.exact_dims}")
        self.budget.spend("grid_reads", 1)
        return self._rng(1, d).uniform(0, tg.TWO_PI, (self.exact_n, d))

    def start_clock(self, kind: str, d: int) -> None:
        self._open[(str(kind), int(d))] = time.perf_counter()

    def stop_clock(self, kind: str, d: int) -> None:
        key = (str(kind), int(d))
        if key not in self._open:
            raise ValueError(f"stop_clock{key} without start_clock")
        self._clock[key] = time.perf_counter() - self._open.pop(key)


def loglog_slope(dims: Sequence[int], seconds: Sequence[float]) -> float:
    """Least-squares slope of log(seconds) against log(d)."""
    return float(np.polyfit(np.log(np.asarray(dims, float)), np.log(np.asarray(seconds, float)), 1)[0])


class TGScalingTask(Task):
    """Time per iteration of a torus-graph estimator against the dimension d.

    ## Description
    The agent runs its estimator on uniform random phases at every d of a grid: SSM for
    ``warmup`` untimed then ``iterations`` timed minibatch steps of size ``batch``; exact score
    matching for one timed solve on ``exact_n`` samples per d. The problem keeps the clock (the
    view's ``start_clock``/``stop_clock`` run in the problem process) and fits the log-log slope.
    The exact estimator's Gamma has (2d^2)^2 entries: its memory grows as d^4 by construction.

    ## Data
    ``TGScalingView`` (see its docstring); no ground truth is involved.

    ## Artifacts
    ``{"ssm": {d: phi-hat}}`` or ``{"exact": {d: phi-hat}}``, each phi-hat finite (d, d, 2), with
    a clock recorded for every d of the grid.

    ## Metrics
    ``time_slope`` (least-squares slope of log seconds per iteration vs log d; primary),
    ``seconds_per_iter_max`` (at the largest d), ``seconds_per_iter_min``. All are wall-clock
    times and so marked nondeterministic (excluded from the seed-determinism checks).

    ## Budget
    ``grid_reads``: two reads of each grid point's data.

    ## Episode End
    Not sequential.

    ## Arguments
    ``dims``, ``batch``, ``iterations``, ``warmup``, ``exact_dims``, ``exact_n``.

    ## Tiers
    smoke SSM d in {20, 40}, exact d in {4, 8}; standard SSM d in {100, 200, 400, 800} (batch 32,
    20 iterations), exact d in {10, 20, 30, 40}; full to d = 2,000.

    ## Reference
    Goffinet, Hanks & Carlson (ICML 2026): exact score matching is O(d^6) and stops near d = 100;
    SSM is O(d^2) per iteration.

    ## Version History
    - v0: initial release.
    """

    id = "papergym/TGScaling-v0"
    family = "torus"
    paper = PAPER
    metrics: ClassVar[dict[str, Any]] = {"time_slope": "min", "seconds_per_iter_max": ("min", 0.0, None),
                                         "seconds_per_iter_min": ("min", 0.0, None)}
    nondeterministic_metrics: ClassVar[frozenset[str]] = frozenset(
        {"time_slope", "seconds_per_iter_max", "seconds_per_iter_min"})

    def __init__(self, tier: str = "smoke", dims: Sequence[int] = (20, 40), batch: int = 32,
                 iterations: int = 20, warmup: int = 2, exact_dims: Sequence[int] = (4, 8),
                 exact_n: int = 2000) -> None:
        super().__init__(tier=tier, dims=list(dims), batch=batch, iterations=iterations,
                         warmup=warmup, exact_dims=list(exact_dims), exact_n=exact_n)
        self.dims, self.exact_dims = [int(d) for d in dims], [int(d) for d in exact_dims]
        if len(self.dims) < 2 or len(self.exact_dims) < 2:
            raise ValueError("TGScaling-v0 needs at least two dims on each grid")
        self.batch, self.iterations, self.warmup = int(batch), int(iterations), int(warmup)
        self.exact_n = int(exact_n)
        self._clock: dict[tuple[str, int], float] = {}

    @property
    def budget(self) -> Budget:
        return Budget(grid_reads=2 * (len(self.dims) + len(self.exact_dims)))

    def train_view(self, seed: int, budget: Budget) -> TGScalingView:
        check_training_seed(seed, self.id)
        self._clock.clear()
        return TGScalingView(self, seed, self._clock, budget)

    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        if not (isinstance(artifact, dict) and len(artifact) == 1 and set(artifact) <= {"ssm", "exact"}):
            raise TypeError("TGScaling-v0 expects {'ssm': {d: phi}} or {'exact': {d: phi}}")
        kind, fits = next(iter(artifact.items()))
        dims = self.dims if kind == "ssm" else self.exact_dims
        per_iter = []
        for d in dims:
            est = np.asarray(fits.get(d), dtype=float) if d in fits else None
            if est is None or est.shape != (d, d, 2) or not np.isfinite(est).all():
                raise ValueError(f"TGScaling-v0: {kind} fit at d={d} missing or not a finite ({d}, {d}, 2)")
            if (kind, d) not in self._clock:
                raise ValueError(f"TGScaling-v0: no clock recorded for {kind} at d={d}")
            per_iter.append(self._clock[(kind, d)] / (self.iterations if kind == "ssm" else 1))
        return EvalResult(metrics={"time_slope": loglog_slope(dims, per_iter),
                                   "seconds_per_iter_max": float(per_iter[-1]),
                                   "seconds_per_iter_min": float(per_iter[0])},
                          curves={"seconds_per_iter": [(float(d), float(s)) for d, s in zip(dims, per_iter)]})
