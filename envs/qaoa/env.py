"""QAOA² as Gymnasium environments, and the Tasks that score partition policies on them.

Paper: Zheng, Wu & Liu, "Neural QAOA²: Differentiable Joint Graph Partitioning and Parameter
Initialization for Quantum Combinatorial Optimization" (ICML 2026, arXiv 2605.13072);
divide and conquer from QAOA² (Zhou, Du, Tian & Tao, arXiv 2205.11762).
"""

from __future__ import annotations

import math
import time
from functools import partial
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from papergym.actions import check_action
from papergym.envs.qaoa.instances import (
    N_FEATURES,
    get_instance,
    instance_family,
    instance_set,
    instance_split,
    node_features,
)
from papergym.envs.qaoa.qaoa2 import cut_of, run_level
from papergym.envs.qaoa.references import (
    check_against_reference,
    normalized_score,
    performance_ratio,
    reference_cut,
)
from papergym.envs.qaoa.subsolver import BACKENDS, WEIGHT_SCALES, solve_block
from papergym.problem import Budget, BudgetExceeded, EvalResult, Task, eval_seed_sequence

MAX_LEVELS = 8
# The fixed-angle rule of QAOA2Assign-v0 [recon]: the maximizer of the mean closed-form
# ⟨C⟩/Σ|w| over max|w|-scaled 10-node blocks of the training files on a 64×64 grid.
DEFAULT_FIXED_ANGLES = (0.589, 0.393)


class _QAOA2Core:
    """State shared by both environments: the instance, the level graph, the bookkeeping."""

    def _setup(self, instances, n_max, shots, backend, weight_scale, N_max):
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
        if weight_scale not in WEIGHT_SCALES:
            raise ValueError(f"weight_scale must be one of {WEIGHT_SCALES}, got {weight_scale!r}")
        if int(n_max) < 2:
            raise ValueError(f"n_max must be at least 2, got {n_max}")
        self.instance_names = instance_set(instances)
        if not self.instance_names:
            raise ValueError(f"instance set {instances!r} is empty")
        sizes = [get_instance(name).n for name in self.instance_names]
        self.N_max = int(N_max) if N_max is not None else max(sizes)
        if max(sizes) > self.N_max:
            raise ValueError(f"N_max={self.N_max} is smaller than the largest instance ({max(sizes)})")
        self.n_max = int(n_max)
        self.subsolver = {"shots": int(shots), "backend": backend, "weight_scale": weight_scale}

    def _start(self, name: str) -> None:
        self.instance = get_instance(name)
        self.original = self.instance.adjacency()
        self.weights = self.original
        self.optimum, self.optimum_source = reference_cut(self.instance)
        self.sum_negative = float(self.instance.weights[self.instance.weights < 0].sum())
        self.sides = np.zeros(self.instance.n, dtype=np.int8)
        self.membership = np.arange(self.instance.n)
        self.const = 0.0
        self.level = 0
        self.counters = {"n_repaired": 0, "closed_form_evals": 0, "shots": 0, "forced_levels": 0}
        self.started = time.perf_counter()

    def _pick(self, options: dict | None) -> str:
        if options and "instance" in options:
            name = options["instance"]
            if name not in self.instance_names:
                raise ValueError(f"instance {name!r} is not in this env's set")
            return name
        return self.instance_names[int(self.np_random.integers(len(self.instance_names)))]

    def _partition_level(self, labels: np.ndarray, params: np.ndarray) -> float:
        """One QAOA² level; returns Δconst."""
        result = run_level(self.weights, labels, params, self.n_max, self.np_random,
                           **self.subsolver)
        delta = result.block_cut + result.cross_const
        self.const += delta
        self.sides ^= result.bits[self.membership]
        self.membership = result.labels[self.membership]
        self.weights = result.coarse
        self.level += 1
        self.counters["n_repaired"] += result.n_repaired
        self.counters["closed_form_evals"] += result.closed_form_evals
        self.counters["shots"] += result.shots
        return delta

    def _final_level(self, gamma: float, beta: float) -> float:
        """Solve the whole (≤ n_max) graph; returns its cut."""
        solution = solve_block(self.weights, gamma, beta, self.np_random, **self.subsolver)
        self.sides ^= solution.bits[self.membership]
        self.counters["closed_form_evals"] += solution.closed_form_evals
        self.counters["shots"] += solution.shots
        return solution.cut

    def _final_info(self, final_cut: float) -> dict[str, Any]:
        total = self.const + final_cut
        cut = self.instance.cut_value(self.sides)  # re-scored on the original graph
        scale = float(np.abs(self.instance.weights).sum())
        if abs(cut - total) > 1e-9 * max(scale, 1.0):
            raise AssertionError(f"{self.instance.name}: QAOA² total {total} != re-scored cut {cut}")
        check_against_reference(self.instance.name, cut, self.optimum, self.optimum_source)
        return {
            "instance": self.instance.name, "cut": cut,
            "r": performance_ratio(cut, self.optimum, self.sum_negative),
            "ns": normalized_score(cut, self.optimum, float(self.instance.weights.sum())),
            "opt": self.optimum, "opt_source": self.optimum_source, "levels": self.level + 1,
            **self.counters, "wall_time": time.perf_counter() - self.started,
            "assignment": self.sides.copy(),
        }


class QAOA2PartitionEnv(_QAOA2Core, gym.Env):
    """QAOA² with one partition decision per level.

    ## Description
    A weighted MaxCut instance is solved by QAOA² (divide and conquer): at each level the agent
    splits the current graph into blocks of at most ``n_max`` nodes and gives each block its
    initial QAOA angles (γ, β); the problem's fixed subsolver (p = 1 QAOA, 20 gradient steps
    on the closed-form expectation, then ``shots`` samples from a qiskit-aer or numpy
    statevector) solves every block; the blocks become the nodes of a coarse graph whose
    MaxCut decides which blocks to flip. When the graph has at most ``n_max`` nodes it is
    solved whole and the episode ends.

    ## Action Space
    ``Dict(assign=MultiDiscrete([N_max]*N_max), params=Box(0, 2π, (N_max, 2), float32))``:
    a block label per node (ignored for padding and when |V| ≤ n_max) and the initial
    (γ, β) of each label. Over-full blocks are repaired greedily (excess nodes, highest
    index first, move to the emptiest block with room) and counted in ``info["n_repaired"]``;
    params outside [0, 2π) are taken mod 2π; non-finite params and labels outside
    [0, N_max) raise ValueError.

    ## Observation Space
    ``obs="dense"``: ``Dict(adj=Box(-inf, inf, (N_max, N_max), float32)`` (weights of the
    current-level graph), ``x=Box(-inf, inf, (N_max, 5), float32)`` (z-scored degree,
    weighted degree, clustering, PageRank, betweenness), ``mask=MultiBinary(N_max)``,
    ``level=Discrete(8))``. ``obs="graph"``: ``spaces.Graph`` with node features x and edge
    feature w/max|w|.

    ## Rewards
    Sparse: the performance ratio r = (cut − SumNeg)/(OPT − SumNeg) at the end. With
    ``dense=True`` each level pays Δconst/(OPT − SumNeg) and the last step pays
    (cut_last − SumNeg)/(OPT − SumNeg), so the return still equals r.

    ## Starting State
    An instance of the set (``options={"instance": name}`` picks one), level 0.

    ## Episode End
    Terminates after the level whose graph has at most ``n_max`` nodes (at most 8 levels;
    at the 8th, labels are forced to contiguous chunks and counted in ``forced_levels``).
    ``info`` then holds cut, r, ns, OPT and its source, repairs, closed-form evaluations,
    shots, wall time and the assignment (re-scored on the original graph).

    ## Arguments
    ``instances`` (a set name of :func:`instance_set` or a list), ``n_max`` (10), ``shots``
    (1000 = ``paper`` mode, 16 = ``few-shot``), ``backend`` (``aer`` | ``numpy``),
    ``weight_scale`` (``maxabs`` | ``raw``), ``N_max`` (padding; default the largest
    instance), ``obs`` (``dense`` | ``graph``), ``dense`` (reward shaping).

    ## Tiers
    smoke: generated N ∈ {16, 20} + gka1b, n_max 6. standard: test/OOD subsets ≤ 101 nodes,
    n_max 10. full: every file, up to 501 nodes.

    ## Reference
    Zheng, Wu & Liu, Neural QAOA² (ICML 2026); QAOA² of Zhou et al. (2022); p = 1 closed
    form of Wang et al. (2018). Weight scaling ``maxabs`` is reconstructed.

    ## Version History
    - v0: initial release.
    """

    metadata: ClassVar[dict] = {"render_modes": []}

    def __init__(self, instances: str | list[str] = "smoke", n_max: int = 10, shots: int = 1000,
                 backend: str = "aer", weight_scale: str = "maxabs", N_max: int | None = None,
                 obs: str = "dense", dense: bool = False, **_: Any) -> None:
        self._setup(instances, n_max, shots, backend, weight_scale, N_max)
        if obs not in ("dense", "graph"):
            raise ValueError(f"obs must be 'dense' or 'graph', got {obs!r}")
        self.obs_mode, self.dense_reward = obs, bool(dense)
        N = self.N_max
        self.action_space = spaces.Dict({
            "assign": spaces.MultiDiscrete(np.full(N, N, dtype=np.int64)),
            "params": spaces.Box(0.0, 2 * np.pi, (N, 2), dtype=np.float32),
        })
        if obs == "dense":
            self.observation_space = spaces.Dict({
                "adj": spaces.Box(-np.inf, np.inf, (N, N), dtype=np.float32),
                "x": spaces.Box(-np.inf, np.inf, (N, N_FEATURES), dtype=np.float32),
                "mask": spaces.MultiBinary(N),
                "level": spaces.Discrete(MAX_LEVELS),
            })
        else:
            self.observation_space = spaces.Graph(
                node_space=spaces.Box(-np.inf, np.inf, (N_FEATURES,), dtype=np.float32),
                edge_space=spaces.Box(-1.0, 1.0, (1,), dtype=np.float32),
            )

    def _observation(self):
        n, N = self.weights.shape[0], self.N_max
        features = node_features(self.weights).astype(np.float32)
        if self.obs_mode == "graph":
            iu, iv = np.nonzero(self.weights)
            scale = max(float(np.abs(self.weights).max()), 1e-12)
            return spaces.GraphInstance(
                nodes=features,
                edges=(self.weights[iu, iv] / scale).astype(np.float32).reshape(-1, 1),
                edge_links=np.stack([iu, iv], axis=1).astype(np.int64),
            )
        adj = np.zeros((N, N), dtype=np.float32)
        adj[:n, :n] = self.weights
        x = np.zeros((N, N_FEATURES), dtype=np.float32)
        x[:n] = features
        mask = np.zeros(N, dtype=np.int8)
        mask[:n] = 1
        return {"adj": adj, "x": x, "mask": mask, "level": min(self.level, MAX_LEVELS - 1)}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._start(self._pick(options))
        return self._observation(), {"instance": self.instance.name, "n": self.instance.n}

    def step(self, action):
        # both keys, exact shapes: integer labels in [0, N_max), finite real angles (wrapped
        # into [0, 2 pi): the QAOA objective is 2 pi-periodic in both)
        action = check_action(self.action_space, action, "papergym/QAOA2Partition-v0")
        assign, params = action["assign"], action["params"]
        params = np.mod(params, 2 * np.pi)
        n = self.weights.shape[0]
        denominator = self.optimum - self.sum_negative
        if n > self.n_max:
            labels = assign[:n].astype(np.int64)
            if self.level >= MAX_LEVELS - 1:  # no progress allowed any longer: force chunks
                labels = np.arange(n) // self.n_max
                self.counters["forced_levels"] += 1
            delta = self._partition_level(labels, params)
            reward = delta / denominator if self.dense_reward else 0.0
            return self._observation(), reward, False, False, {}
        final_cut = self._final_level(*params[0])
        info = self._final_info(final_cut)
        reward = (final_cut - self.sum_negative) / denominator if self.dense_reward else info["r"]
        return self._observation(), float(reward), True, False, info


class QAOA2AssignEnv(_QAOA2Core, gym.Env):
    """QAOA² with one node-to-block decision per step (RL-facing) [recon].

    ## Description
    Restricted to N ≤ n_max² (one partition level). Nodes arrive in a seeded BFS order; each
    step puts the current node into one of k = ⌈N/n_max⌉ blocks. When every node is placed,
    the blocks are solved by the fixed subsolver from the fixed-angle rule (γ*, β*), the
    coarse graph (≤ n_max super-nodes) is solved whole, and the episode ends.

    ## Action Space
    ``Discrete(K)``, K = ⌈N_max/n_max⌉. Valid actions are in ``obs["action_mask"]`` (and
    ``info["action_mask"]``): blocks < k with room. A masked action is redirected to the
    emptiest valid block and counted in ``info["n_repaired"]``; an index outside
    Discrete(K) or a non-finite action raises ValueError.

    ## Observation Space
    ``Dict(adj, x, mask`` as in QAOA2Partition-v0, ``current=MultiBinary(N_max)`` (one-hot of
    the node to place), ``block=Box(-1, K-1, (N_max,), float32)`` (block of each placed node,
    −1 if unplaced), ``loads=Box(0, n_max, (K,), float32)``, ``action_mask=MultiBinary(K))``.

    ## Rewards
    Terminal performance ratio r; 0 before.

    ## Starting State
    An instance of the set, a BFS order from a random start node (np_random).

    ## Episode End
    After N steps. ``info`` as in QAOA2Partition-v0.

    ## Arguments
    As QAOA2Partition-v0, plus ``angles`` (γ*, β*) (default the tuned fixed angles).

    ## Tiers
    As QAOA2Partition-v0 (instances with N ≤ 100 at standard).

    ## Reference
    Reconstructed sequential view of Neural QAOA² (ICML 2026) for RL agents.

    ## Version History
    - v0: initial release.
    """

    metadata: ClassVar[dict] = {"render_modes": []}

    def __init__(self, instances: str | list[str] = "smoke", n_max: int = 10, shots: int = 1000,
                 backend: str = "aer", weight_scale: str = "maxabs", N_max: int | None = None,
                 angles: tuple[float, float] = DEFAULT_FIXED_ANGLES, **_: Any) -> None:
        self._setup(instances, n_max, shots, backend, weight_scale, N_max)
        if self.N_max > self.n_max**2:
            raise ValueError(f"QAOA2Assign-v0 needs N ≤ n_max² = {self.n_max**2}, got {self.N_max}")
        self.angles = (float(angles[0]), float(angles[1]))
        N, K = self.N_max, math.ceil(self.N_max / self.n_max)
        self.K = K
        self.action_space = spaces.Discrete(K)
        self.observation_space = spaces.Dict({
            "adj": spaces.Box(-np.inf, np.inf, (N, N), dtype=np.float32),
            "x": spaces.Box(-np.inf, np.inf, (N, N_FEATURES), dtype=np.float32),
            "mask": spaces.MultiBinary(N),
            "current": spaces.MultiBinary(N),
            "block": spaces.Box(-1.0, K - 1.0, (N,), dtype=np.float32),
            "loads": spaces.Box(0.0, float(self.n_max), (K,), dtype=np.float32),
            "action_mask": spaces.MultiBinary(K),
        })

    def _action_mask(self) -> np.ndarray:
        mask = np.zeros(self.K, dtype=np.int8)
        mask[: self.k] = self.loads[: self.k] < self.n_max
        return mask

    def _observation(self):
        n, N = self.instance.n, self.N_max
        adj = np.zeros((N, N), dtype=np.float32)
        adj[:n, :n] = self.original
        x = np.zeros((N, N_FEATURES), dtype=np.float32)
        x[:n] = self._features
        mask = np.zeros(N, dtype=np.int8)
        mask[:n] = 1
        current = np.zeros(N, dtype=np.int8)
        if self.position < n:
            current[self.order[self.position]] = 1
        block = np.full(N, -1.0, dtype=np.float32)
        block[:n] = self.labels
        return {"adj": adj, "x": x, "mask": mask, "current": current, "block": block,
                "loads": self.loads.astype(np.float32), "action_mask": self._action_mask()}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._start(self._pick(options))
        import networkx as nx

        n = self.instance.n
        graph = nx.from_numpy_array(np.abs(self.original))
        order: list[int] = []
        remaining = set(range(n))
        while remaining:  # BFS from a random start, component by component
            start = int(self.np_random.choice(sorted(remaining)))
            component = [start] + [v for _, v in nx.bfs_edges(graph, start)]
            order.extend(component)
            remaining -= set(component)
        self.order = np.array(order)
        self.k = math.ceil(n / self.n_max)
        self.labels = np.full(n, -1, dtype=np.int64)
        self.loads = np.zeros(self.K, dtype=np.int64)
        self.position = 0
        self._features = node_features(self.original)
        mask = self._action_mask()
        return self._observation(), {"action_mask": mask}

    def step(self, action):
        block = check_action(self.action_space, action, "papergym/QAOA2Assign-v0")
        mask = self._action_mask()
        if not mask[block]:  # a full block, or one beyond this instance's k: repaired
            valid = np.flatnonzero(mask)
            block = int(valid[np.argmin(self.loads[valid])])
            self.counters["n_repaired"] += 1
        node = self.order[self.position]
        self.labels[node] = block
        self.loads[block] += 1
        self.position += 1
        if self.position < self.instance.n:
            mask = self._action_mask()
            return self._observation(), 0.0, False, False, {"action_mask": mask}
        params = np.tile(np.array(self.angles), (self.N_max, 1))
        if self.instance.n > self.n_max:
            self._partition_level(self.labels, params)
        final_cut = self._final_level(*self.angles)
        info = self._final_info(final_cut)
        info["action_mask"] = np.zeros(self.K, dtype=np.int8)
        return self._observation(), float(info["r"]), True, False, info


# --------------------------------------------------------------------------- tasks
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
        instance = self._training(name)
        self.budget.spend("qaoa2_runs", 1)
        weights, membership = instance.adjacency(), np.arange(instance.n)
        sides, const = np.zeros(instance.n, dtype=np.int8), 0.0
        level = 0
        while weights.shape[0] > self.n_max:
            if level > 0:
                labels, params = deeper_policy(weights, rng)
            if level >= MAX_LEVELS - 1:
                labels = np.arange(weights.shape[0]) // self.n_max
            result = run_level(weights, labels, np.asarray(params, float), self.n_max, rng,
                               **self.subsolver)
            const += result.block_cut + result.cross_const
            sides ^= result.bits[membership]
            membership = result.labels[membership]
            weights, level = result.coarse, level + 1
        _, final_params = deeper_policy(weights, rng) if level > 0 else (None, params)
        solution = solve_block(weights, *np.asarray(final_params, float)[0], rng, **self.subsolver)
        sides ^= solution.bits[membership]
        cut = instance.cut_value(sides)
        optimum, _ = reference_cut(instance)
        negative = float(instance.weights[instance.weights < 0].sum())
        return {"cut": cut, "r": performance_ratio(cut, optimum, negative)}


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
    - v0: initial release.
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
                          "ns": float(np.mean(scores)), "r_best": float(np.max(ratios))})
        per_instance = np.array([u["r"] for u in units])
        runs_total = self.runs * len(self.instance_names)
        metrics = {"r": per_instance.mean(), "ns": float(np.mean([u["ns"] for u in units])),
                   "r_min": per_instance.min(), "agent_seconds": float(np.mean(seconds)),
                   **{k: v / runs_total for k, v in totals.items()}}
        for split in sorted({u["split"] for u in units}):
            metrics[f"r_{split}"] = float(np.mean([u["r"] for u in units if u["split"] == split]))
        return EvalResult(metrics=metrics, units=units)

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
        assert abs(cut - cut_of(weights, sides)) <= 1e-9 * max(1.0, np.abs(weights).sum())
        optimum, source = reference_cut(instance)
        check_against_reference(name, cut, optimum, source)
        negative = float(instance.weights[instance.weights < 0].sum())
        return {"r": performance_ratio(cut, optimum, negative),
                "ns": normalized_score(cut, optimum, float(instance.weights.sum()))}, spent


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
