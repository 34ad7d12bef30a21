"""QAOA² as Gymnasium environments (the Tasks that score policies on them are in ``task.py``).

Paper: Zheng, Wu & Liu, "Neural QAOA²: Differentiable Joint Graph Partitioning and Parameter
Initialization for Quantum Combinatorial Optimization" (ICML 2026, arXiv 2605.13072);
divide and conquer from QAOA² (Zhou, Du, Tian & Tao, arXiv 2205.11762).
"""

from __future__ import annotations

import math
import time
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from papergym.actions import check_action
from papergym.envs.qaoa.instances import (
    N_FEATURES,
    get_instance,
    instance_set,
    node_features,
)
from papergym.envs.qaoa.qaoa2 import run_level
from papergym.envs.qaoa.references import (
    check_against_reference,
    normalized_score,
    performance_ratio,
    reference_cut,
)
from papergym.envs.qaoa.subsolver import BACKENDS, WEIGHT_SCALES, solve_block

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
    - v2: the same environment (``papergym/QAOA2Partition-v2``); its Task adds the exact
      per-block-plus-merge oracle of the check partitions and the standard set ``std_v2``.
    - v1: the same environment (``papergym/QAOA2Partition-v1``); its Task adds logged runs,
      the evaluator check and sparse/dense metrics, and the standard tier's instance set.
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
        # named in errors as made (gymnasium sets the spec: -v0, -v1 or -v2, one class for all)
        env_id = getattr(self.spec, "id", None) or "papergym/QAOA2Partition-v0"
        action = check_action(self.action_space, action, env_id)
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
