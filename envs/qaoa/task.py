"""The Tasks that score QAOA² partition policies, and the view a partition agent trains on.

Paper: Zheng, Wu & Liu, "Neural QAOA²" (ICML 2026, arXiv 2605.13072). The environments are in
``env.py``; the problem's logged runs (v1) in ``logs.py``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from functools import partial
from typing import Any, ClassVar

import numpy as np

from papergym import cache
from papergym.envs.qaoa.env import QAOA2AssignEnv, QAOA2PartitionEnv
from papergym.envs.qaoa.instances import (
    density_class,
    get_instance,
    instance_family,
    instance_set,
    instance_split,
    node_features,
)
from papergym.envs.qaoa.logs import (
    LoggedRun,
    check_plans_entry,
    check_runs_entry,
    graph_correlations,
    heuristics_entry,
    logged_runs_entry,
    ranking_quality,
    run_qaoa2,
)
from papergym.envs.qaoa.oracle import oracle_check_entry
from papergym.envs.qaoa.references import (
    check_against_reference,
    normalized_score,
    performance_ratio,
    reference_cut,
)
from papergym.maxcut import cut_value
from papergym.problem import Budget, BudgetExceeded, EvalResult, Task, eval_seed_sequence


class QAOA2TrainView:
    """What a partition agent may use: training graphs and metered QAOA² runs on them.

    ``instances`` are training graphs only (train folder files, or generated graphs from
    seeds < 10⁶ at the smoke tier); ``run_qaoa2`` runs the problem's own QAOA² with the
    fixed subsolver from a given first-level partition and charges one ``qaoa2_runs``.
    Training runs sample with the ``numpy`` backend (the same distribution as ``aer``, tested
    in tests/envs/test_qaoa.py), so that thousands of runs fit the budget.
    """

    def __init__(self, task: QAOA2PartitionTask, budget: Budget, seed: int) -> None:
        self.budget, self.seed = budget, seed
        self.instances = list(task.train_instances)
        self.n_max = task.n_max
        # training runs sample with the numpy backend: the same distribution as aer, faster
        self.subsolver = {**task.subsolver, "backend": "numpy"}
        self.N_max = task.N_max
        self.agent_seconds_per_instance = task.agent_seconds_per_instance

    def _training(self, name: str) -> Any:
        if name not in self.instances:  # evaluation files are not part of the view
            raise PermissionError(f"{name!r} is not a training instance of this view")
        return get_instance(name)

    def weights(self, name: str) -> np.ndarray:
        return self._training(name).adjacency()

    def features(self, weights: np.ndarray) -> np.ndarray:
        return node_features(weights)

    def reference(self, name: str) -> float:
        return reference_cut(self._training(name))[0]

    def run_qaoa2(self, name: str, labels: np.ndarray, params: np.ndarray,
                  deeper_policy, rng: np.random.Generator) -> dict[str, float]:
        """One QAOA² run; ``deeper_policy(weights, rng) -> (labels, params)`` for levels ≥ 1."""
        self._training(name)
        self.budget.spend("qaoa2_runs", 1)
        return run_qaoa2(name, labels, params, deeper_policy, self.n_max, rng, **self.subsolver)


class QAOA2PartitionTask(Task):
    """Scores a QAOA² partition policy (or a reference solver) on held-out instances.

    ## Description
    The artifact is run ``runs`` times on every evaluation instance through
    QAOA2Partition-v0 (episode seeds derived from the trial seed); the problem re-scores
    every returned assignment on the original graph and reports per-instance means.

    ## Data
    Training: the train folder files with N ≤ ``train_n_max`` (smoke: generated graphs from
    seeds < 10⁶), exposed by :class:`QAOA2TrainView`. Evaluation: ``instances`` (never in
    the training folder).

    ## Metrics
    ``r`` (primary; mean over instances of the per-instance mean over runs), ``ns``,
    ``r_test`` / ``r_ood`` / ``r_generated`` (the same per split: in-distribution files,
    generalization files, generated graphs), ``r_min``, ``n_repaired``,
    ``closed_form_evals``, ``shots``, ``agent_seconds`` (mean policy time per instance and
    run); per-instance ``units`` rows carry r, r_<split>, ns and the split.

    ## Artifacts
    A partition policy ``policy(obs) -> {"assign", "params"}`` (optional ``reset()``), or a
    reference solver with ``solve_instance(weights, rng) -> sides`` (simulated annealing, GW,
    brute force), whose sides are re-scored the same way.

    ## Budget
    ``qaoa2_runs`` (training QAOA² runs through the view) and a wall-clock cap on the
    artifact's own compute per evaluation instance and run (``agent_seconds_per_instance``,
    BudgetExceeded beyond it). The subsolver cannot be bought.

    ## Tiers
    As QAOA2PartitionEnv: smoke (generated graphs + gka1b, n_max 6, aer), standard (the
    ``std`` subsets, n_max 10, numpy sampling), full (every evaluation file).

    ## Reference
    Zheng, Wu & Liu, Neural QAOA² (ICML 2026).

    ## Version History
    - v0: initial release. Superseded by v1 (logged runs on every training graph, the
      evaluator's held-out ranking quality, sparse/dense cells, all 50 test files).
    """

    id = "papergym/QAOA2Partition-v0"
    task_kwargs: ClassVar[tuple[str, ...]] = ("runs", "train_set", "train_n_max", "train_runs",
                                               "agent_seconds_per_instance")
    family = "qaoa"
    paper = "zheng2026neuralqaoa2"
    metrics: ClassVar[dict[str, str]] = {
        "r": "max", "r_test": "max", "r_ood": "max", "r_generated": "max", "ns": "max",
        "r_min": "max", "n_repaired": "min",
        "closed_form_evals": "min", "shots": "min", "agent_seconds": "min",
    }
    nondeterministic_metrics: ClassVar[frozenset[str]] = frozenset({"agent_seconds"})

    def __init__(self, tier: str = "smoke", instances: str | list[str] = "smoke",
                 n_max: int = 10, shots: int = 1000, backend: str = "aer",
                 weight_scale: str = "maxabs", N_max: int | None = None, runs: int = 2,
                 train_set: str = "train", train_n_max: int = 121, train_runs: int = 4000,
                 agent_seconds_per_instance: float = 10.0, **kwargs: Any) -> None:
        super().__init__(tier=tier, instances=instances, n_max=n_max, shots=shots,
                         backend=backend, weight_scale=weight_scale, runs=runs, **kwargs)
        self.env_kwargs = {"instances": instances, "n_max": n_max, "shots": shots,
                           "backend": backend, "weight_scale": weight_scale, "N_max": N_max}
        self.n_max, self.runs = int(n_max), int(runs)
        self.subsolver = {"shots": int(shots), "backend": backend, "weight_scale": weight_scale}
        self.instance_names = instance_set(instances)
        self.N_max = N_max or max(get_instance(x).n for x in self.instance_names)
        self.train_runs = int(train_runs)
        self.agent_seconds_per_instance = float(agent_seconds_per_instance)
        if train_set == "smoke_generated":
            self.train_instances = [f"{f}_{n}_s{s}" for s, (f, n) in enumerate(
                (f, n) for _ in range(4) for f in ("g05", "w05", "pm1s") for n in (16, 20))]
        else:
            self.train_instances = [x for x in instance_set(train_set)
                                    if get_instance(x).n <= int(train_n_max)]
        leaked = set(self.train_instances) & set(self.instance_names)
        if leaked:
            raise ValueError(f"evaluation instances also in the training set: {sorted(leaked)}")

    @property
    def budget(self) -> Budget:
        return Budget(qaoa2_runs=self.train_runs)

    def train_view(self, seed: int, budget: Budget) -> QAOA2TrainView:
        return QAOA2TrainView(self, budget, seed)

    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        is_reference = hasattr(artifact, "solve_instance")
        if not (is_reference or callable(artifact)):
            raise TypeError(
                "QAOA2Partition-v0 expects a partition policy (obs -> {'assign', 'params'}) or "
                f"a reference solver with solve_instance(weights, rng); got {type(artifact).__name__}"
            )
        env = QAOA2PartitionEnv(**self.env_kwargs)
        units, totals = [], {"n_repaired": 0.0, "closed_form_evals": 0.0, "shots": 0.0}
        seconds = []
        for index, name in enumerate(self.instance_names):
            # sampling seeds of the held-out runs: salted (public default: SeedSequence([seed,
            # index, 7]))
            run_seeds = eval_seed_sequence(seed, index, 7).generate_state(self.runs)
            ratios, scores, spent = [], [], 0.0
            for run_seed in run_seeds:
                if is_reference:
                    info, used = self._run_reference(artifact, name, int(run_seed))
                else:
                    info, used = self._run_policy(env, artifact, name, int(run_seed))
                    for key in totals:
                        totals[key] += info[key]
                spent += used
                ratios.append(info["r"])
                scores.append(info["ns"])
            if spent > self.agent_seconds_per_instance * self.runs:
                raise BudgetExceeded(
                    f"{name}: the artifact used {spent:.1f} s over {self.runs} runs, more than "
                    f"{self.agent_seconds_per_instance:g} s per run"
                )
            seconds.append(spent / self.runs)
            split = instance_split(name)
            units.append({"instance": name, "family": instance_family(name), "split": split,
                          "r": float(np.mean(ratios)), f"r_{split}": float(np.mean(ratios)),
                          "ns": float(np.mean(scores)), "r_best": float(np.max(ratios)),
                          **self._unit_fields(name, float(np.mean(ratios)))})
        per_instance = np.array([u["r"] for u in units])
        runs_total = self.runs * len(self.instance_names)
        metrics = {"r": per_instance.mean(), "ns": float(np.mean([u["ns"] for u in units])),
                   "r_min": per_instance.min(), "agent_seconds": float(np.mean(seconds)),
                   **{k: v / runs_total for k, v in totals.items()}}
        for split in sorted({u["split"] for u in units}):
            metrics[f"r_{split}"] = float(np.mean([u["r"] for u in units if u["split"] == split]))
        metrics.update(self._extra_metrics(artifact, units))
        return EvalResult(metrics=metrics, units=units)

    def _unit_fields(self, name: str, r: float) -> dict[str, Any]:
        return {}

    def _extra_metrics(self, artifact: Any, units: list[dict]) -> dict[str, float]:
        return {}

    @staticmethod
    def _run_policy(env: QAOA2PartitionEnv, policy, name: str, run_seed: int):
        if hasattr(policy, "reset"):
            policy.reset()
        observation, _ = env.reset(seed=run_seed, options={"instance": name})
        spent, done, info = 0.0, False, {}
        while not done:
            started = time.perf_counter()
            action = policy(observation)
            spent += time.perf_counter() - started
            observation, _, done, _, info = env.step(action)
        return info, spent

    def _run_reference(self, solver, name: str, run_seed: int):
        instance = get_instance(name)
        weights = instance.adjacency()
        started = time.perf_counter()
        sides = np.asarray(solver.solve_instance(weights, np.random.default_rng(run_seed)))
        spent = time.perf_counter() - started
        if sides.shape != (instance.n,):
            raise ValueError(f"{name}: reference returned sides of shape {sides.shape}")
        cut = instance.cut_value(sides)
        assert abs(cut - cut_value(weights, sides)) <= 1e-9 * max(1.0, np.abs(weights).sum())
        optimum, source = reference_cut(instance)
        check_against_reference(name, cut, optimum, source)
        negative = float(instance.weights[instance.weights < 0].sum())
        return {"r": performance_ratio(cut, optimum, negative),
                "ns": normalized_score(cut, optimum, float(instance.weights.sum()))}, spent


class QAOA2TrainViewV1(QAOA2TrainView):
    """The v0 view plus the problem's logged runs (:mod:`papergym.envs.qaoa.logs`).

    ``logged_runs()`` returns ``logged`` labelled QAOA² runs on the training graphs (every
    graph: heuristic, perturbed-heuristic and random partitions with random angles, labelled
    with the final r), built once per configuration in the runner's prepare phase, and charges
    one ``qaoa2_runs`` per run on the first call. ``run_qaoa2`` stays available for runs of the
    agent's own choosing.
    """

    def __init__(self, task: QAOA2PartitionTaskV1, budget: Budget, seed: int) -> None:
        super().__init__(task, budget, seed)
        self._entry = task.logged_entry()
        self._logged: list[dict[str, Any]] | None = None

    def logged_runs(self) -> list[dict[str, Any]]:
        if self._logged is None:
            runs: list[LoggedRun] = cache.get(self._entry)
            self.budget.spend("qaoa2_runs", len(runs))
            self._logged = [{"instance": run.instance, "labels": run.labels.copy(),
                             "params": run.params.copy(), "r": run.r, "source": run.source}
                            for run in runs]
        return self._logged


class QAOA2PartitionTaskV1(QAOA2PartitionTask):
    """Scores a QAOA² partition policy on held-out instances (v1: logged runs, ranking quality).

    ## Description
    As v0: the artifact is run ``runs`` times on every evaluation instance through
    QAOA2Partition-v1 (the same env), every assignment re-scored on the original graph. v1
    adds the problem's logged runs to the view and checks an artifact's evaluator: an artifact
    with ``score(weights, labels, params) -> float`` (a predicted r for a first-level
    partition and its block angles) is asked to score ``check_runs`` held-out labelled runs
    per evaluation instance, and the problem reports how well it ranks them.

    ## Data
    Training: the train folder files with N ≤ ``train_n_max`` and ``logged_runs`` labelled
    runs on them (:mod:`papergym.envs.qaoa.logs`; every training graph gets heuristic,
    perturbed and random partitions). Evaluation: ``instances`` (standard: all 50 test files
    and a stratified sample of the generalization files, 28 of 93). Check runs: per evaluation
    instance, KL/boundary partitions, perturbations and random partitions, labelled with the
    final r of a QAOA² run with the cell's subsolver; never shown to the agent.

    ## Metrics
    As v0, plus ``r_sparse`` / ``r_dense`` (instances of edge density ≤ 0.35 / above; units
    carry ``density`` and ``r_<density>``), and for artifacts with ``score``:
    ``eval_spearman`` / ``eval_pearson`` (mean within-graph Spearman / Pearson correlation of
    the predicted and the true r over the check runs; each instance's pair is in its unit),
    ``eval_mse`` and ``eval_mse_floor`` (the MSE of predicting each graph's mean r: an
    evaluator that ranks nothing but is calibrated per graph). An artifact whose ``score`` is
    a proxy on another scale (``score_is_proxy = True``: modularity) gets the correlations only.

    ## Artifacts
    As v0 (a policy, optionally with ``score``; or a reference solver).

    ## Budget
    ``qaoa2_runs``: the logged runs (charged when read) plus the agent's own runs.

    ## Tiers
    smoke: generated graphs + gka1b, n_max 6, 300 logged runs. standard: ``std_v1`` (78
    instances), n_max 10, numpy sampling, 4,000 logged runs on the 128 train files with
    N ≤ 121, 8 check runs per instance. full: every evaluation file, 42,069 logged runs.

    ## Reference
    Zheng, Wu & Liu, Neural QAOA² (ICML 2026); the logged-run composition is reconstructed.

    ## Version History
    - v1: logged runs on every training graph in the view, held-out ranking quality of an
      artifact's evaluator, sparse/dense metrics, standard tier on all 50 test files plus a
      stratified OOD sample. Scores are not comparable with v0 (other instance set).
    - v0: initial release.
    """

    id = "papergym/QAOA2Partition-v1"
    task_kwargs: ClassVar[tuple[str, ...]] = (*QAOA2PartitionTask.task_kwargs, "logged_runs",
                                               "check_runs")
    metrics: ClassVar[dict[str, str]] = {
        **QAOA2PartitionTask.metrics, "r_sparse": "max", "r_dense": "max",
        "eval_spearman": "max", "eval_pearson": "max", "eval_mse": "min",
        "eval_mse_floor": "min",
    }
    LOG_SEED = 0  # one dataset for every trial seed: trials differ in how they train on it

    def __init__(self, tier: str = "smoke", logged_runs: int = 4000, check_runs: int = 8,
                 **kwargs: Any) -> None:
        super().__init__(tier=tier, logged_runs=logged_runs, check_runs=check_runs, **kwargs)
        self.logged, self.check = int(logged_runs), int(check_runs)
        if self.logged > self.train_runs:
            raise ValueError(f"logged_runs={self.logged} exceeds the qaoa2_runs budget "
                             f"train_runs={self.train_runs}")
        self.train_subsolver = {**self.subsolver, "backend": "numpy"}

    def logged_entry(self) -> cache.Entry:
        return logged_runs_entry(self.train_instances, self.n_max, self.logged, self.LOG_SEED,
                                 self.train_subsolver)

    def check_entry(self) -> cache.Entry:
        return check_runs_entry(self.instance_names, self.n_max, self.check, self.LOG_SEED + 1,
                                {**self.subsolver, "backend": "numpy"})

    def cache_entries(self, seeds: Sequence[int]) -> list[cache.Entry]:
        entries = [heuristics_entry(self.train_instances, self.n_max, self.LOG_SEED)]
        if self.logged:
            entries.append(self.logged_entry())
        if self.check:
            entries += [check_plans_entry(self.instance_names, self.n_max, self.check,
                                          self.LOG_SEED + 1), self.check_entry()]
        return entries

    def train_view(self, seed: int, budget: Budget) -> QAOA2TrainViewV1:
        return QAOA2TrainViewV1(self, budget, seed)

    def _unit_fields(self, name: str, r: float) -> dict[str, Any]:
        density = density_class(name)
        return {"density": density, f"r_{density}": r}

    def _extra_metrics(self, artifact: Any, units: list[dict]) -> dict[str, float]:
        metrics = {}
        for density in ("sparse", "dense"):
            values = [u["r"] for u in units if u["density"] == density]
            if values:
                metrics[f"r_{density}"] = float(np.mean(values))
        if self.check and hasattr(artifact, "score") and not hasattr(artifact, "solve_instance"):
            runs: list[LoggedRun] = cache.get(self.check_entry())
            predictions = []
            for run in runs:
                value = float(artifact.score(get_instance(run.instance).adjacency(),
                                             run.labels.copy(), run.params.copy()))
                if not np.isfinite(value):
                    raise ValueError(f"score() returned {value} for a check run of {run.instance}")
                predictions.append(value)
            predictions = np.array(predictions)
            proxy = bool(getattr(artifact, "score_is_proxy", False))
            metrics.update(ranking_quality(runs, predictions, calibrated=not proxy))
            per_graph = graph_correlations(runs, predictions)
            for unit in units:  # each instance's correlations, for claims over instances
                unit.update(per_graph.get(unit["instance"], {}))
        return metrics


class QAOA2PartitionTaskV2(QAOA2PartitionTaskV1):
    """Scores a QAOA² partition policy on held-out instances (v2: the oracle, a smaller
    standard set).

    ## Description
    As v1, plus the oracle objective of every check partition (``envs/qaoa/oracle.py``: the
    cut QAOA² reaches from it with every block and the merge solved exactly), so that an
    artifact's evaluator is also graded against a target free of sampling and deeper-level
    noise, and the agent-reported evaluator gate.

    ## Data
    As v1. Standard tier: ``std_v2``, the 54 instances of ``std_v1`` with at most 150 nodes
    (36 test files, 18 generalization files), so that every merge of the oracle is exact
    (at most 15 super-nodes) and eight trained models per agent fit the tier's budget.

    ## Metrics
    As v1, plus ``eval_oracle_spearman`` (mean within-graph Spearman correlation of the
    artifact's ``score`` with the oracle objective over the check partitions; per instance in
    its unit) and, for an artifact exposing ``gate`` (a dict: ``open``,
    ``learned_spearman``, ``modularity_spearman`` measured by the agent on its own validation
    graphs), ``gate_open`` (0/1), ``gate_learned_spearman`` and ``gate_modularity_spearman``.
    These three are reported by the agent, not measured by the problem: they say which
    pipeline ran, never how well.

    ## Artifacts, Budget
    As v1.

    ## Tiers
    smoke: as v1. standard: ``std_v2`` (54 instances), n_max 10, numpy sampling, 2,000 logged
    runs (v1: 4,000), 8 check runs per instance. full: as v1.

    ## Reference
    Zheng, Wu & Liu, Neural QAOA² (ICML 2026); the oracle objective is reconstructed.

    ## Version History
    - v2: oracle objective of the check partitions (``eval_oracle_spearman``), gate metrics,
      standard tier on the 54 instances of at most 150 nodes. Scores are not comparable with
      v1 at the standard tier (other instance set).
    - v1: logged runs, the evaluator's held-out ranking quality, sparse/dense metrics.
    - v0: initial release.
    """

    id = "papergym/QAOA2Partition-v2"
    metrics: ClassVar[dict[str, str]] = {
        **QAOA2PartitionTaskV1.metrics, "eval_oracle_spearman": "max", "gate_open": "max",
        "gate_learned_spearman": "max", "gate_modularity_spearman": "max",
    }

    def oracle_entry(self) -> cache.Entry:
        return oracle_check_entry(self.instance_names, self.n_max, self.check, self.LOG_SEED + 1)

    def cache_entries(self, seeds: Sequence[int]) -> list[cache.Entry]:
        entries = super().cache_entries(seeds)
        return entries + [self.oracle_entry()] if self.check else entries

    def _extra_metrics(self, artifact: Any, units: list[dict]) -> dict[str, float]:
        metrics = super()._extra_metrics(artifact, units)
        gate = getattr(artifact, "gate", None)
        if isinstance(gate, dict):
            metrics.update({"gate_open": float(bool(gate["open"])),
                            "gate_learned_spearman": float(gate["learned_spearman"]),
                            "gate_modularity_spearman": float(gate["modularity_spearman"])})
        if self.check and hasattr(artifact, "score") and not hasattr(artifact, "solve_instance"):
            runs: list[LoggedRun] = cache.get(self.check_entry())
            oracle: dict[str, list[float]] = cache.get(self.oracle_entry())
            targets = [LoggedRun(run.instance, run.labels, run.params, value, run.source)
                       for run, value in zip(runs, (v for name in dict.fromkeys(
                           r.instance for r in runs) for v in oracle[name]))]
            predictions = np.array([float(artifact.score(get_instance(run.instance).adjacency(),
                                                         run.labels.copy(), run.params.copy()))
                                    for run in runs])
            per_graph = graph_correlations(targets, predictions)
            values = [g["eval_spearman"] for g in per_graph.values()]
            metrics["eval_oracle_spearman"] = float(np.mean(values)) if values else 0.0
            for unit in units:
                if unit["instance"] in per_graph:
                    unit["eval_oracle_spearman"] = per_graph[unit["instance"]]["eval_spearman"]
        return metrics


class QAOA2AssignTask(Task):
    """Scores a QAOA2Assign-v0 policy (obs -> block) by its mean r on held-out episodes.

    ## Description
    ``eval_episodes`` episodes on seeds from :meth:`Task.eval_seeds`; the env picks the
    instance.

    ## Metrics
    ``r`` (primary), ``ns``, ``n_repaired``.

    ## Budget
    ``env_steps`` on the training view (``view.make_env()``).

    ## Tiers
    As QAOA2AssignEnv.

    ## Reference
    Neural QAOA² (ICML 2026); the sequential view is reconstructed.

    ## Version History
    - v0: initial release.
    """

    id = "papergym/QAOA2Assign-v0"
    task_kwargs: ClassVar[tuple[str, ...]] = ("train_steps", "eval_episodes")
    family = "qaoa"
    paper = "zheng2026neuralqaoa2"
    metrics: ClassVar[dict[str, str]] = {"r": "max", "ns": "max", "n_repaired": "min"}

    def __init__(self, tier: str = "smoke", train_steps: int = 2000, eval_episodes: int = 8,
                 **env_kwargs: Any) -> None:
        super().__init__(tier=tier, **env_kwargs)
        self.env_kwargs, self.train_steps = env_kwargs, int(train_steps)
        self.eval_episodes = int(eval_episodes)

    @property
    def budget(self) -> Budget:
        return Budget(env_steps=self.train_steps)

    def train_view(self, seed: int, budget: Budget):
        from papergym.problem import EnvView

        return EnvView(partial(QAOA2AssignEnv, **self.env_kwargs), budget, seed)

    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        if not callable(artifact):
            raise TypeError(f"QAOA2Assign-v0 expects a policy obs -> block, got {type(artifact)}")
        env = QAOA2AssignEnv(**self.env_kwargs)
        units = []
        for episode, eval_seed in enumerate(self.eval_seeds(seed, self.eval_episodes)):
            if hasattr(artifact, "reset"):
                artifact.reset()
            observation, _ = env.reset(seed=eval_seed)
            done, info = False, {}
            while not done:
                observation, _, done, _, info = env.step(artifact(observation))
            units.append({"instance": f"{episode}:{info['instance']}", "r": info["r"],
                          "ns": info["ns"], "n_repaired": float(info["n_repaired"])})
        metrics = {k: float(np.mean([u[k] for u in units])) for k in ("r", "ns", "n_repaired")}
        return EvalResult(metrics=metrics, units=units)
