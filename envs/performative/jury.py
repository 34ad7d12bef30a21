"""StrategicJury-v0: the Local-MaxCut gadget of the PLS-hardness proof (strategic local optima)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from papergym.actions import check_action
from papergym.envs.performative import counter
from papergym.maxcut import (
    EXACT_MAX_NODES,
    MaxCutInstance,
    best_known_cut,
    exact_maxcut_frontier,
    load_maxcut,
)
from papergym.maxcut import exact_maxcut as shared_exact_maxcut
from papergym.problem import (
    Budget,
    EvalResult,
    MeteredEnv,
    Privileges,
    Task,
    check_training_seed,
)

FLIPS_PER_POINT = 4
CLOSE_COST, FAR_COST = 0.8, 1.2


@dataclass(frozen=True, eq=False)
class JuryInstance:
    """The gadget of a weighted graph G = (V, E, w >= 0).

    Points: 0..|V|-1 are x_{v-} (h = 0, weight W_v = sum_{u~v} w_uv); for edge k, |V| + 2k is
    x_{(uv)+} (h = 1, weight 2 w_uv) and |V| + 2k + 1 is x_{(uv)-} (h = 0, weight 2 w_uv + 1).
    Close pairs (cost 0.8 < 1): {x_{v-}, x_{(uv)+}} for v in uv and {x_{(uv)+}, x_{(uv)-}};
    every other pair costs 1.2 [paper, appendix gadget].
    """

    graph: MaxCutInstance
    weight: np.ndarray
    h: np.ndarray
    close: np.ndarray  # bool (n_pts, n_pts), symmetric, zero diagonal
    start_side: np.ndarray | None = None  # counter graphs: the start cut (vertex sides)

    @property
    def n_vertices(self) -> int:
        return self.graph.n

    @property
    def n_points(self) -> int:
        return self.weight.size

    @property
    def total_edge_weight(self) -> float:
        return float(self.graph.weights.sum())

    @property
    def base_utility(self) -> float:
        """U(all negative) = 4W + |E| [derived]."""
        return 4.0 * self.total_edge_weight + self.graph.edges.shape[0]

    def cost(self, i: int, j: int) -> float:
        return 0.0 if i == j else CLOSE_COST if self.close[i, j] else FAR_COST


def build_gadget(graph: MaxCutInstance, start_side: np.ndarray | None = None) -> JuryInstance:
    nv, ne = graph.n, graph.edges.shape[0]
    n_pts = nv + 2 * ne
    weight = np.zeros(n_pts)
    h = np.zeros(n_pts, dtype=np.int8)
    close = np.zeros((n_pts, n_pts), dtype=bool)
    np.add.at(weight, graph.edges[:, 0], graph.weights)
    np.add.at(weight, graph.edges[:, 1], graph.weights)
    for k, ((u, v), w) in enumerate(zip(graph.edges, graph.weights)):
        plus, minus = nv + 2 * k, nv + 2 * k + 1
        weight[plus], weight[minus] = 2 * w, 2 * w + 1
        h[plus] = 1
        for a, b in ((u, plus), (v, plus), (plus, minus)):
            close[a, b] = close[b, a] = True
    return JuryInstance(graph, weight, h, close, start_side)


def random_graph(n_vertices: int, edge_prob: float, rng: np.random.Generator) -> MaxCutInstance:
    """G(n, p) with integer weights U{0..4} (zero-weight edges stay edges of the gadget)."""
    iu, ju = np.triu_indices(n_vertices, k=1)
    keep = rng.random(iu.size) < edge_prob
    edges = np.stack([iu[keep], ju[keep]], axis=1).astype(np.int64)
    weights = rng.integers(0, 5, size=edges.shape[0]).astype(float)
    return MaxCutInstance(f"gnp_{n_vertices}_{edge_prob}", n_vertices, edges, weights)


class JuryModel:
    """The jury's utility and its single-flip gains, computed from what the jury observes."""

    def __init__(self, weight: np.ndarray, h: np.ndarray, close: np.ndarray) -> None:
        self.weight = np.asarray(weight, dtype=np.float64)
        self.h = np.asarray(h).astype(bool)
        self.close = np.asarray(close).astype(np.float64)

    def effective(self, f: np.ndarray) -> np.ndarray:
        """f(Delta(x)): negatives with a close positive point move to it (cost 0.8 < 1)."""
        f = np.asarray(f).astype(bool)
        return f | (self.close @ f > 0)

    def utility(self, f: np.ndarray) -> float:
        """U(f) = sum_x w(x) [h(x) = f(Delta(x))]."""
        return float(self.weight @ (self.h == self.effective(f)))

    def gains(self, f: np.ndarray) -> np.ndarray:
        """U(f with label i flipped) - U(f) for every point i (two mat-vecs)."""
        f = np.asarray(f).astype(bool)
        counts = self.close @ f
        eff = f | (counts > 0)
        correct = self.h == eff
        # 0 -> 1 at i: i and its close points become effectively positive
        up = self.weight * (self.h.astype(float) - correct)
        gain_up = up + self.close @ up
        # 1 -> 0 at i: i keeps positive iff a close point is; neighbours lose one positive
        self_after = self.h == (counts > 0)
        down_nb = self.weight * ((self.h == (f | (counts >= 2))).astype(float) - correct)
        gain_down = self.weight * (self_after.astype(float) - correct) + self.close @ down_nb
        return np.where(f, gain_down, gain_up)

    def gain(self, f: np.ndarray, i: int) -> float:
        """U(f with label i flipped) - U(f), touching only i and its close points."""
        if not hasattr(self, "_neighbours"):
            self._neighbours = [np.nonzero(row)[0] for row in self.close]
        f = np.asarray(f).astype(bool)
        touched = np.concatenate([[i], self._neighbours[i]])
        before = f[touched] | (self.close[touched] @ f > 0)
        f_new = f.copy()
        f_new[i] = not f_new[i]
        after = f_new[touched] | (self.close[touched] @ f_new > 0)
        h, w = self.h[touched], self.weight[touched]
        return float(w @ ((h == after).astype(float) - (h == before)))


def exact_maxcut(graph: MaxCutInstance) -> tuple[float, np.ndarray]:
    """Exact MaxCut, the last vertex on side 1: ``papergym.maxcut.exact_maxcut`` (|V| <= 24),
    beyond that ``exact_maxcut_frontier`` (the counter graphs' frontier is 10 vertices wide)."""
    if graph.n <= EXACT_MAX_NODES:
        value, side = shared_exact_maxcut(graph)
    else:
        value, side = exact_maxcut_frontier(graph)
    return float(np.round(value, 9)), (side ^ side[-1] ^ 1).astype(np.int8) if side.size else side


_MAXCUT_CACHE: dict[tuple, float] = {}


def max_cut_value(graph: MaxCutInstance) -> float:
    """MaxCut of a gadget's graph: exact (enumeration up to 24 vertices, else the frontier DP when
    the frontier is narrow), else osv.json (cached)."""
    key = (graph.name, graph.n, graph.edges.tobytes(), graph.weights.tobytes())
    if key not in _MAXCUT_CACHE:
        try:
            _MAXCUT_CACHE[key] = exact_maxcut(graph)[0]
        except ValueError:  # wide frontier: the packaged sets' best-known values
            _MAXCUT_CACHE[key] = best_known_cut(graph.name)
    return _MAXCUT_CACHE[key]


class StrategicJuryEnv(gym.Env):
    """A jury relabels points one flip at a time against strategic contestants.

    ## Description
    The gadget of the PLS-hardness proof of Anagnostides et al. (2026): a weighted graph
    becomes labelled points (``JuryInstance``); a contestant at a negatively labelled point
    moves to a positively labelled point at cost < 1 (the close pairs), and the jury's utility
    is U(f) = sum_x w(x) [h(x) = f(Delta(x))]. A jury local move flips one label. For a labeling
    positive exactly on the vertex points of S, U = 4W + |E| + cut(S); every strategic local
    optimum reached from all-negative labels only vertex points and is a 1-flip locally
    maximal cut [paper; derived and brute-force checked here].

    ## Action Space
    ``Discrete(n_pts + 1)``: flip the label of point i, or STOP (= n_pts).

    ## Observation Space
    ``Dict(f=MultiBinary(n_pts), weight=Box(0, inf, (n_pts,), float64), h=MultiBinary(n_pts),
    close=MultiBinary((n_pts, n_pts)))``; n_pts = |V| + 2|E| is fixed by the graph.

    ## Rewards
    Delta U / M per flip, M = 6W + |E| (the total point weight); 0 for STOP.

    ## Starting State
    ``start="all_negative"`` (f = 0) or ``"random"`` (labels iid Bernoulli(1/2) from the reset
    seed). One env is one graph (its size fixes the spaces): with ``source="random"`` it is
    G(n, p) drawn from ``instance_seed`` (default 0); with ``source="file"`` it is ``file``
    from the MaxCut sets packaged with papergym; with ``source="counter"`` it is the counter graph
    with ``levels`` levels (``envs/performative/counter.py``: best improvement needs 4 (2^k - 1)
    flips from its start cut), and the start (``start="path"``, its only start) labels positive the
    vertex points of the cut reached after t0 steps of that path, t0 uniform on 0..4 (2^k - 1) - 1
    from ``instance_seed``: best improvement then needs 4 (2^k - 1) - t0 more flips.
    StrategicJuryTask builds one env per held-out graph.

    ## Episode End
    Terminated on STOP; truncated when the flip budget 4 n_pts is used.

    ## Arguments
    ``source`` (random | file | counter), ``n_vertices``, ``edge_prob``, ``file``, ``levels``
    (counter, 1..10), ``start``, ``instance_seed``, ``oracle_access`` (the instance in the reset
    info; references only).

    ## Tiers
    smoke |V| = 6, p = 0.5; standard |V| in {10, 16, 20}, p in {0.3, 0.6}, and counter graphs
    with 4..10 levels (18..42 vertices); full g05_60/80/100, pw*_100 and generated |V| <= 800.

    ## Reference
    Anagnostides et al., "On the Computational Complexity of Performative Prediction",
    ICML 2026, appendix (strategic local optimum is PLS-hard via Local-MaxCut); Hardt,
    Megiddo, Papadimitriou, Wootters, "Strategic Classification", ITCS 2016.

    ## Version History
    v0: initial release. Added later (every earlier configuration unchanged): ``source="counter"``
    with its ``start="path"``.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": []}

    def __init__(self, source: str = "random", n_vertices: int = 6, edge_prob: float = 0.5,
                 file: str | None = None, start: str | None = None, levels: int = 4,
                 instance_seed: int | None = None, oracle_access: bool = False) -> None:
        if source not in ("random", "file", "counter"):
            raise ValueError(f"source must be 'random', 'file' or 'counter', got {source!r}")
        start = start or ("path" if source == "counter" else "all_negative")
        if (source == "counter") != (start == "path"):
            raise ValueError(f"start={start!r} with source={source!r}: counter graphs start on their "
                             "path (start='path'), other sources from 'all_negative' or 'random'")
        if start not in ("all_negative", "random", "path"):
            raise ValueError(f"start must be 'all_negative' or 'random', got {start!r}")
        if source == "file" and not file:
            raise ValueError("source='file' needs file=<instance name> (e.g. g05_60.1)")
        if source == "counter" and not 1 <= int(levels) <= counter.MAX_LEVELS:
            raise ValueError(f"levels must lie in 1..{counter.MAX_LEVELS}, got {levels}")
        self.source, self.n_vertices, self.edge_prob, self.file = source, n_vertices, edge_prob, file
        self.levels = int(levels)
        self.start, self.oracle_access = start, oracle_access
        self.instance_seed = 0 if instance_seed is None else int(instance_seed)
        self.instance = self._make_instance(self.instance_seed)
        n = self.instance.n_points
        self.flip_budget = FLIPS_PER_POINT * n
        self.action_space = spaces.Discrete(n + 1)
        self.observation_space = spaces.Dict({
            "f": spaces.MultiBinary(n),
            "weight": spaces.Box(0.0, np.inf, (n,), dtype=np.float64),
            "h": spaces.MultiBinary(n),
            "close": spaces.MultiBinary((n, n)),
        })
        self.f = np.zeros(n, dtype=np.int8)
        self.flips = 0

    def _make_instance(self, seed: int) -> JuryInstance:
        if self.source == "file":
            graph = load_maxcut(self.file)
            if graph.weights.min() < 0:
                raise ValueError(f"{self.file}: the gadget needs non-negative weights")
            return build_gadget(graph)
        if self.source == "counter":
            graph, sides = counter.counter_instance(self.levels)
            t0 = int(np.random.default_rng([int(seed), 37]).integers(counter.designed_length(self.levels)))
            for v in counter.designed_flips(self.levels)[:t0]:
                sides[v] ^= 1
            return build_gadget(graph, start_side=sides)
        rng = np.random.default_rng([int(seed), 31])
        graph = random_graph(self.n_vertices, self.edge_prob, rng)
        if graph.edges.shape[0] == 0:  # keep the point count positive: one unit edge
            graph = MaxCutInstance(graph.name, graph.n, np.array([[0, 1]]), np.array([1.0]))
        return build_gadget(graph)

    def _obs(self) -> dict[str, np.ndarray]:
        inst = self.instance
        return {"f": self.f.copy(), "weight": inst.weight.copy(), "h": inst.h.copy(),
                "close": inst.close.astype(np.int8)}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.model = JuryModel(self.instance.weight, self.instance.h, self.instance.close)
        n = self.instance.n_points
        if self.start == "random":
            self.f = self.np_random.integers(0, 2, size=n).astype(np.int8)
        elif self.start == "path":
            self.f = np.zeros(n, dtype=np.int8)
            self.f[: self.instance.n_vertices] = self.instance.start_side
        else:
            self.f = np.zeros(n, dtype=np.int8)
        self.flips = 0
        self.utility = self.model.utility(self.f)
        info: dict[str, Any] = {"utility": self.utility, "flips": 0}
        if self.oracle_access:
            info["instance"] = self.instance
        return self._obs(), info

    def step(self, action):
        i = check_action(self.action_space, action, "papergym/StrategicJury-v0")  # n = STOP
        n = self.instance.n_points
        total = 6.0 * self.instance.total_edge_weight + self.instance.graph.edges.shape[0]
        if i == n:
            return self._obs(), 0.0, True, False, {"utility": self.utility, "flips": self.flips}
        self.f[i] ^= 1
        self.flips += 1
        new_utility = self.model.utility(self.f)
        reward = (new_utility - self.utility) / total
        self.utility = new_utility
        truncated = self.flips >= self.flip_budget
        return self._obs(), reward, False, truncated, {"utility": self.utility, "flips": self.flips}


def jury_env_for(seed: int, **kwargs: Any) -> StrategicJuryEnv:
    """An env whose spaces fit the graph drawn from ``seed`` (sizes vary across random graphs)."""
    return StrategicJuryEnv(instance_seed=seed, **kwargs)


ENV_KEYS = ("source", "n_vertices", "edge_prob", "file", "start", "levels")
TASK_KEYS = ("n_eval_graphs", "n_train_graphs", "train_flips")


class JuryView:
    """Metered training envs on graphs from seeds < 10^6 (``flips`` budget)."""

    problem = "jury"

    def __init__(self, env_kwargs: dict[str, Any], budget: Budget, seed: int, n_train: int,
                 privileges: Privileges | None = None):
        self.env_kwargs, self.budget, self.seed = env_kwargs, budget, seed
        self._privileges = privileges or Privileges()
        rng = np.random.default_rng([seed, 11])
        self.train_instance_seeds = [int(s) for s in rng.integers(0, 10**6 - 1, size=n_train)]

    def make_env(self, instance_seed: int, oracle_access: bool = False) -> gym.Env:
        """A metered env on a training graph; ``oracle_access`` for reference agents only."""
        env = jury_env_for(check_training_seed(instance_seed, "JuryView.make_env"),
                           oracle_access=self._privileges.grant(oracle_access), **self.env_kwargs)
        return MeteredEnv(env, self.budget, "flips", training_seeds_only=True)


def jury_metrics(inst: JuryInstance, f: np.ndarray, flips: int) -> dict[str, float]:
    """Score, local optimality and the checks of the gadget's identities (claim C6)."""
    model = JuryModel(inst.weight, inst.h, inst.close)
    f = np.asarray(f).astype(bool)
    U = model.utility(f)
    nv = inst.n_vertices
    max_cut = max_cut_value(inst.graph)
    U0, U_opt = inst.base_utility, inst.base_utility + max_cut
    # score 1 = strategic maximum; with MaxCut = 0 (all weights zero) only the sign is kept
    score = (U - U0) / (U_opt - U0) if U_opt > U0 else min(1.0, U - U0 + 1.0)
    local_opt = bool(np.all(model.gains(f) <= 1e-9))
    vertex_only = not f[nv:].any()
    identity_violation = above_max = local_violation = 0
    if vertex_only:
        S = f[:nv]
        cut = inst.graph.cut_value(S)
        identity_violation = int(abs(U - (U0 + cut)) > 1e-9)
    if U > U_opt + 1e-9:
        above_max = 1
    if local_opt:
        ok = vertex_only and score >= 0.5 - 1e-12
        if vertex_only:
            S = f[:nv].copy()
            base = inst.graph.cut_value(S)
            for v in range(nv):  # a 1-flip locally maximal cut
                S[v] ^= True
                if inst.graph.cut_value(S) > base + 1e-9:
                    ok = False
                S[v] ^= True
        local_violation = int(not ok)
    return {
        "score": float(score), "local_opt": float(local_opt), "vertex_only": float(vertex_only),
        "flips": float(flips), "utility": U, "utility_opt": U_opt,
        "identity_violations": float(identity_violation + above_max),
        "local_opt_violations": float(local_violation),
    }


@lru_cache(maxsize=16)
def counter_full_path(levels: int) -> int:
    """Best-improvement flips from the counter's first cut to its local optimum, simulated."""
    graph, sides = counter.counter_instance(levels)
    cap = 4 * counter.designed_length(levels)
    return len(counter.best_improvement_path(graph.n, graph.edges, graph.weights, sides, cap))


def counter_path_metrics(levels: int, inst: JuryInstance) -> dict[str, float]:
    """Counter graphs: the best-improvement flips left from this instance's start (``path_length``),
    the env's flip budget, and |simulated full path - 4 (2^k - 1)| (``path_design_gap``)."""
    graph = inst.graph
    cap = 4 * counter.designed_length(levels)
    left = len(counter.best_improvement_path(graph.n, graph.edges, graph.weights, inst.start_side, cap))
    return {"path_length": float(left), "flip_budget": float(FLIPS_PER_POINT * inst.n_points),
            "path_design_gap": float(abs(counter_full_path(levels) - counter.designed_length(levels)))}


class StrategicJuryTask(Task):
    """Score a jury policy on held-out graphs of StrategicJury-v0.

    ## Data
    Training graphs from seeds < 10^6 (``view.make_env(seed)``, ``flips`` budget
    ``train_flips``); ``n_eval_graphs`` held-out graphs from ``Task.eval_seeds`` (source
    ``random``) or the one ``file`` instance (each eval seed a new episode).

    ## Artifact
    A policy observation -> flip index or STOP, optional ``reset()``; ``oracle_access = True``
    policies get ``reset(info)`` with the instance (references only).

    ## Metrics
    Counter graphs (``source="counter"``) add per graph: ``path_length`` (best-improvement flips
    from the start to a local optimum, simulated by the problem; local search fails within the
    budget when it exceeds ``flip_budget`` = 4 n_pts) and ``path_design_gap`` (|simulated path
    from the counter's first cut - 4 (2^k - 1)|, summed; 0 when the construction holds).
    ``score`` (primary, max) = (U(f) - U(0)) / (U_opt - U(0)) with U_opt = 4W + |E| + MaxCut
    (brute force, |V| <= 24; else osv.json); ``local_opt`` (no improving flip),
    ``vertex_only``, ``flips``, ``identity_violations`` (U = 4W + |E| + cut(S) broken on a
    vertex-only labeling, or U above the identity's maximum 4W + |E| + MaxCut) and
    ``local_opt_violations`` (a local optimum that is not a vertex-only 1-flip local max cut
    with score >= 0.5). Counts are summed over graphs.

    Finding [derived, brute-force checked]: with ties, strategic local optima (no strictly
    improving flip) that are not vertex-only exist and can score below 0 (the all-positive
    labeling of a single edge of weight 2: U = 4 < U(0) = 9, score -2.5). Improving-flip
    dynamics from all-negative never reach them: every improving flip from a vertex-only
    labeling is a vertex point, so the spec's "every local optimum is vertex-only" holds for
    the optima those dynamics find (claims C6a/C6b), not for every labeling.

    ## Tiers, Reference, Version History
    As :class:`StrategicJuryEnv`.
    """

    id: ClassVar[str] = "papergym/StrategicJury-v0"
    family: ClassVar[str] = "performative"
    paper: ClassVar[str] = "anagnostides2026"
    task_kwargs: ClassVar[tuple[str, ...]] = TASK_KEYS
    metrics: ClassVar[Mapping[str, str]] = {
        "score": "max", "local_opt": "max", "vertex_only": "max", "flips": "min",
        "utility": "max", "utility_opt": "max", "identity_violations": "min",
        "local_opt_violations": "min", "oracle_access": "min",
        "path_length": "min", "flip_budget": "max", "path_design_gap": "min",
    }

    def __init__(self, tier: str = "smoke", n_eval_graphs: int = 5, n_train_graphs: int = 3,
                 train_flips: int = 100_000, **env_kwargs: Any) -> None:
        super().__init__(tier=tier, **env_kwargs)
        unknown = set(env_kwargs) - set(ENV_KEYS)
        if unknown:
            raise ValueError(f"StrategicJury-v0: unknown arguments {sorted(unknown)}")
        self.env_kwargs = env_kwargs
        self.n_eval_graphs, self.n_train_graphs = int(n_eval_graphs), int(n_train_graphs)
        self.train_flips = int(train_flips)

    @property
    def budget(self) -> Budget:
        return Budget(flips=self.train_flips)

    def train_view(self, seed: int, budget: Budget) -> JuryView:
        return JuryView(self.env_kwargs, budget, seed, self.n_train_graphs, self.privileges)

    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        if not callable(artifact):
            raise TypeError("StrategicJury-v0 expects a policy (observation -> flip index), "
                            f"got {type(artifact).__name__}")
        oracle = self.grant_privilege(getattr(artifact, "oracle_access", False))  # references only
        units = []
        for k, eval_seed in enumerate(self.eval_seeds(seed, self.n_eval_graphs)):
            env = jury_env_for(eval_seed, oracle_access=oracle, **self.env_kwargs)
            observation, info = env.reset(seed=eval_seed)
            if oracle:
                artifact.reset(info)
            elif hasattr(artifact, "reset"):
                artifact.reset()
            done = False
            while not done:
                observation, _, terminated, truncated, _ = env.step(artifact(observation))
                done = terminated or truncated
            unit = {"instance": k, **jury_metrics(env.instance, env.f, env.flips)}
            if env.source == "counter":
                unit.update(counter_path_metrics(env.levels, env.instance))
            units.append(unit)
        metrics = {k: float(np.mean([u[k] for u in units])) for k in units[0] if k != "instance"}
        for name in ("identity_violations", "local_opt_violations", "path_design_gap"):
            if name in metrics:
                metrics[name] = float(np.sum([u[name] for u in units]))
        metrics["oracle_access"] = float(oracle)
        return EvalResult(metrics=metrics, units=units)
