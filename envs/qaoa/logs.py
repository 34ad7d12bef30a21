"""Labelled QAOA² runs: the problem's logged runs (what an evaluator trains on) and the held-out
runs on which the problem checks an artifact's evaluator.

The official Neural QAOA² repository trains its evaluator on logged runs (about 42,000
first-level partitions and angles, each labelled with the run's final r) produced by policies
it does not document. QAOA2Partition-v1 ships the analogue [recon]: on **every** training
graph, the heuristic partitions (greedy modularity, Louvain-boundary, Kernighan–Lin), perturbed
copies of them (1 to N/4 node swaps) and random partitions, each with random angles, so that
an evaluator sees contrasting partitions of the same graph and can learn to rank them. Deeper
levels use random partitions and angles (the label is the run's final r). Runs are
deterministic given their seed and are built once per configuration through
:mod:`papergym.cache` (the runner's prepare phase), never per trial.

Held-out check runs are built the same way on the evaluation instances (never seen in
training): per instance, Kernighan–Lin and boundary partitions, perturbations of them and
random partitions. An artifact that exposes ``score(weights, labels, params)`` is asked to
predict their r; the problem reports the within-graph Spearman and Pearson correlations and the
MSE next to the per-graph-mean floor (the MSE of predicting each graph's mean r). A proxy on
another scale (modularity) is scored by its correlations only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from papergym import cache
from papergym.envs.qaoa import partitions, qaoa2, subsolver
from papergym.envs.qaoa.instances import get_instance
from papergym.envs.qaoa.partitions import (
    HEURISTICS,
    kl_partition,
    perturb_partition,
    random_angles,
    random_partition,
)
from papergym.envs.qaoa.qaoa2 import run_level
from papergym.envs.qaoa.references import performance_ratio, reference_cut
from papergym.envs.qaoa.subsolver import solve_block

MAX_LEVELS = 8
DeeperPolicy = Callable[[np.ndarray, np.random.Generator], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class LoggedRun:
    """One QAOA² run: its first-level partition and block angles, and the final r."""

    instance: str
    labels: np.ndarray  # (n,) block label per node
    params: np.ndarray  # (k, 2) initial (γ, β) per block
    r: float
    source: str  # "modularity", "kl+3" (3 swaps), "random", ...


def run_qaoa2(name: str, labels: np.ndarray, params: np.ndarray, deeper: DeeperPolicy,
              n_max: int, rng: np.random.Generator, **subsolver_kwargs) -> dict[str, float]:
    """One QAOA² run of instance ``name`` from a first-level partition and angles;
    ``deeper(weights, rng) -> (labels, params)`` decides levels ≥ 1. Returns cut and r."""
    instance = get_instance(name)
    weights, membership = instance.adjacency(), np.arange(instance.n)
    sides = np.zeros(instance.n, dtype=np.int8)
    level = 0
    while weights.shape[0] > n_max:
        if level > 0:
            labels, params = deeper(weights, rng)
        if level >= MAX_LEVELS - 1:
            labels = np.arange(weights.shape[0]) // n_max
        result = run_level(weights, labels, np.asarray(params, float), n_max, rng,
                           **subsolver_kwargs)
        sides ^= result.bits[membership]
        membership = result.labels[membership]
        weights, level = result.coarse, level + 1
    _, final_params = deeper(weights, rng) if level > 0 else (None, params)
    solution = solve_block(weights, *np.asarray(final_params, float)[0], rng, **subsolver_kwargs)
    sides ^= solution.bits[membership]
    cut = instance.cut_value(sides)
    optimum, _ = reference_cut(instance)
    negative = float(instance.weights[instance.weights < 0].sum())
    return {"cut": cut, "r": performance_ratio(cut, optimum, negative)}


def random_deeper(n_max: int) -> DeeperPolicy:
    def deeper(weights: np.ndarray, rng: np.random.Generator):
        labels = random_partition(weights, n_max, rng)
        return labels, random_angles(int(labels.max()) + 1, rng)

    return deeper


def _one_block(n: int, n_max: int, labels: np.ndarray) -> np.ndarray:
    return np.zeros(n, dtype=np.int64) if n <= n_max else labels


def heuristic_partitions(names: list[str], n_max: int, seed: int,
                         methods: tuple[str, ...] = tuple(HEURISTICS)) -> dict[str, dict]:
    """name -> {method: labels} (networkx heuristics cost 0.1–3 s per graph: built once)."""
    out = {}
    for index, name in enumerate(names):
        rng = np.random.default_rng([seed, index])
        weights = get_instance(name).adjacency()
        out[name] = {m: HEURISTICS[m](weights, n_max, rng) for m in methods}
    return out


def _labelled(name: str, plan: list[tuple[str, np.ndarray]], n_max: int, seed: int,
              index: int, subsolver_kwargs: dict) -> list[LoggedRun]:
    rng = np.random.default_rng([seed, index, 1])
    n = get_instance(name).n
    deeper = random_deeper(n_max)
    runs = []
    for source, labels in plan:
        labels = _one_block(n, n_max, labels)
        params = random_angles(int(labels.max()) + 1, rng)
        result = run_qaoa2(name, labels, params, deeper, n_max, rng, **subsolver_kwargs)
        runs.append(LoggedRun(name, labels, params, float(result["r"]), source))
    return runs


def build_logged_runs(names: list[str], n_max: int, count: int, seed: int,
                      subsolver_kwargs: dict) -> list[LoggedRun]:
    """``count`` labelled runs spread evenly over ``names`` (every graph gets
    ⌊count/len⌋ or one more): per graph, cycling over [heuristic as is, perturbed heuristic,
    perturbed heuristic, random], heuristics taken in turn."""
    heuristics = cache.get(heuristics_entry(names, n_max, seed))
    runs: list[LoggedRun] = []
    for index, name in enumerate(names):
        rng = np.random.default_rng([seed, index, 0])
        weights = get_instance(name).adjacency()
        n = weights.shape[0]
        per_graph = count // len(names) + (index < count % len(names))
        methods = list(heuristics[name])
        plan = []
        for j in range(per_graph):
            method = methods[(j // 4) % len(methods)]
            base = heuristics[name][method]
            kind = j % 4
            if kind == 0:
                plan.append((method, base))
            elif kind < 3:
                swaps = int(rng.integers(1, max(2, n // 4) + 1))
                plan.append((f"{method}+{swaps}", perturb_partition(base, swaps, rng)))
            else:
                plan.append(("random", random_partition(weights, n_max, rng)))
        runs += _labelled(name, plan, n_max, seed, index, subsolver_kwargs)
    return runs


def check_plans(names: list[str], n_max: int, per_instance: int, seed: int
                ) -> dict[str, list[tuple[str, np.ndarray]]]:
    """Per evaluation instance, ``per_instance`` first-level partitions: KL and boundary
    partitions, perturbations of them (2 to N/8 swaps) and random partitions, in turn."""
    plans = {}
    for index, name in enumerate(names):
        rng = np.random.default_rng([seed, index, 2])
        weights = get_instance(name).adjacency()
        n = weights.shape[0]
        bases = {"kl": kl_partition(weights, n_max, rng),
                 "boundary": partitions.boundary_partition(weights, n_max, rng)}
        plan = []
        for j in range(per_instance):
            method = ("kl", "boundary")[(j // 4) % 2]
            kind = j % 4
            if kind == 0:
                plan.append((method, bases[method]))
            elif kind < 3:
                swaps = int(rng.integers(2, max(3, n // 8) + 1))
                plan.append((f"{method}+{swaps}", perturb_partition(bases[method], swaps, rng)))
            else:
                plan.append(("random", random_partition(weights, n_max, rng)))
        plans[name] = plan
    return plans


def build_check_runs(names: list[str], n_max: int, per_instance: int, seed: int,
                     subsolver_kwargs: dict) -> list[LoggedRun]:
    """Held-out labelled runs on evaluation instances, one per partition of
    :func:`check_plans` (the partitions are shared by every subsolver setting)."""
    plans = cache.get(check_plans_entry(names, n_max, per_instance, seed))
    runs: list[LoggedRun] = []
    for index, name in enumerate(names):
        runs += _labelled(name, plans[name], n_max, seed, 10_000 + index, subsolver_kwargs)
    return runs


# --------------------------------------------------------------------------- cache entries
_CODE = (partitions, qaoa2, subsolver)


def heuristics_entry(names: list[str], n_max: int, seed: int) -> cache.Entry:
    return cache.Entry("qaoa/heuristics", {"names": list(names), "n_max": n_max, "seed": seed},
                       build=lambda: heuristic_partitions(list(names), n_max, seed),
                       code=(partitions,))


def logged_runs_entry(names: list[str], n_max: int, count: int, seed: int,
                      subsolver_kwargs: dict) -> cache.Entry:
    config = {"names": list(names), "n_max": n_max, "count": count, "seed": seed,
              "subsolver": dict(subsolver_kwargs)}
    return cache.Entry("qaoa/logged_runs", config,
                       build=lambda: build_logged_runs(list(names), n_max, count, seed,
                                                       dict(subsolver_kwargs)),
                       code=(*_CODE, build_logged_runs, _labelled, run_qaoa2))


def check_plans_entry(names: list[str], n_max: int, per_instance: int, seed: int) -> cache.Entry:
    config = {"names": list(names), "n_max": n_max, "per_instance": per_instance, "seed": seed}
    return cache.Entry("qaoa/check_plans", config,
                       build=lambda: check_plans(list(names), n_max, per_instance, seed),
                       code=(partitions, check_plans))


def check_runs_entry(names: list[str], n_max: int, per_instance: int, seed: int,
                     subsolver_kwargs: dict) -> cache.Entry:
    config = {"names": list(names), "n_max": n_max, "per_instance": per_instance, "seed": seed,
              "subsolver": dict(subsolver_kwargs)}
    return cache.Entry("qaoa/check_runs", config,
                       build=lambda: build_check_runs(list(names), n_max, per_instance, seed,
                                                      dict(subsolver_kwargs)),
                       code=(*_CODE, check_plans, build_check_runs, _labelled, run_qaoa2))


# --------------------------------------------------------------------------- ranking quality
def modularity(weights: np.ndarray, labels: np.ndarray) -> float:
    """Newman's modularity of a partition on |w| (the graph the heuristics partition), the
    proxy the paper shows to be misaligned with r (C5: Pearson 0.2859 on g05_100.1):
    Q = (1/2m) Σ_ij [A_ij − k_i k_j / 2m] δ(c_i, c_j), A = |w|, k = row sums, 2m = Σ_ij A_ij."""
    absw = np.abs(np.asarray(weights, dtype=np.float64))
    np.fill_diagonal(absw, 0.0)
    total = absw.sum()
    if total == 0:
        return 0.0
    labels = np.asarray(labels, dtype=np.int64)
    member = np.zeros((labels.size, int(labels.max()) + 1))
    member[np.arange(labels.size), labels] = 1.0
    inside = float(np.trace(member.T @ absw @ member))
    degree_by_block = member.T @ absw.sum(axis=1)
    return inside / total - float((degree_by_block ** 2).sum()) / total ** 2


def graph_correlations(runs: list[LoggedRun], predictions: np.ndarray
                       ) -> dict[str, dict[str, float]]:
    """Per graph whose r varies over its runs (3 or more): the Spearman and Pearson
    correlations of the predictions with r (0 for a constant prediction, which ranks
    nothing)."""
    from scipy import stats

    predictions = np.asarray(predictions, dtype=float)
    truth = np.array([run.r for run in runs])
    names = np.array([run.instance for run in runs])
    out = {}
    for name in dict.fromkeys(names):
        mask = names == name
        if mask.sum() < 3 or np.ptp(truth[mask]) == 0:
            continue
        if np.ptp(predictions[mask]) == 0:
            out[str(name)] = {"eval_spearman": 0.0, "eval_pearson": 0.0}
            continue
        out[str(name)] = {
            "eval_spearman": float(stats.spearmanr(predictions[mask], truth[mask]).statistic),
            "eval_pearson": float(stats.pearsonr(predictions[mask], truth[mask]).statistic)}
    return out


def ranking_quality(runs: list[LoggedRun], predictions: np.ndarray,
                    calibrated: bool = True) -> dict[str, float]:
    """Mean over graphs of :func:`graph_correlations`; with ``calibrated`` (a prediction of r
    itself, not a proxy on another scale) also the MSE and the per-graph-mean floor (the MSE
    of predicting each graph's mean r)."""
    predictions = np.asarray(predictions, dtype=float)
    truth = np.array([run.r for run in runs])
    names = np.array([run.instance for run in runs])
    per_graph = graph_correlations(runs, predictions)
    out = {key: float(np.mean([g[key] for g in per_graph.values()])) if per_graph else 0.0
           for key in ("eval_spearman", "eval_pearson")}
    if calibrated:
        floor = np.zeros_like(truth)
        for name in dict.fromkeys(names):
            floor[names == name] = truth[names == name].mean()
        out["eval_mse"] = float(np.mean((predictions - truth) ** 2))
        out["eval_mse_floor"] = float(np.mean((floor - truth) ** 2))
    return out
