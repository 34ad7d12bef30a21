"""StateAbstraction-v0: score a state-abstraction routine on held-out generated MDPs."""

from __future__ import annotations

import json
import time
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from papergym import cache
from papergym.envs.abstraction.core import (
    MDP,
    check_partition,
    induced_model,
    optimal_values,
    policy_value,
    safety_invariant,
    same_block_pairs,
    value_loss,
)
from papergym.envs.abstraction.grid import GOAL_REWARD, LAVA_REWARD, STEP_REWARD
from papergym.envs.abstraction.instances import FAMILIES, Instance, make_instance
from papergym.envs.abstraction.oracles import Oracle, build_oracle, metric_shortfall
from papergym.problem import (
    Budget,
    BudgetExceeded,
    EvalResult,
    MetricDeclaration,
    Privileges,
    Task,
    instance_id,
)
from papergym.tuning import TuningRecord, cached_score
from papergym.tuning import canonical as canonical_config

PAPER = "zhang2026behavioral"
TAU = 0.02                 # value-loss tolerance of safe compression
GENERATOR_KEYS = ("n_states", "n_abstract", "copies", "n_actions", "branching", "twin_frac",
                  "label_rate", "delta", "spread", "gamma", "size", "n_bits", "slip")
V1_GENERATOR_KEYS = (*GENERATOR_KEYS, "reward_levels")
FAMILY_ARGUMENTS = {
    "garnet": ("n_states", "n_actions", "branching", "label_rate", "gamma", "reward_levels"),
    "lifted": ("n_abstract", "copies", "n_actions", "branching", "twin_frac", "label_rate", "gamma",
               "spread", "reward_levels"),
    "perturbed": ("delta", "n_abstract", "copies", "n_actions", "branching", "twin_frac",
                  "label_rate", "gamma", "spread", "reward_levels"),
    "grid": ("size", "n_bits", "slip"),
}
TASK_KEYS = ("family", "n_eval_instances", "n_train_instances", "sample_factor", "oracle_metric",
             "tau", "learner_episodes", "learner_runs", "tuning_runs")
TUNING_SEED = 900_000      # the validation MDPs' seed: a training seed shared by every trial
TRANSFER_TOL = 1e-8        # V* = V_bar* o phi within this times V_range (C1's tolerance)


def _jsonable(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


# ----------------------------------------------------------------------------- sample access


class TransitionSampler:
    """Sample access to one MDP: ``sample(states, actions) -> (rewards, next_states, unsafe)``
    for arrays of (s, a), each transition charged against this MDP's ``limit`` (and, for
    training MDPs, the trial's ``train_transitions`` budget). The model itself is not exposed."""

    def __init__(self, mdp: MDP, limit: int, seed: Sequence[int], budget: Budget | None = None
                 ) -> None:
        self._mdp, self._budget = mdp, budget
        self._rng = np.random.default_rng(list(seed))
        self._cum = np.cumsum(mdp.P, axis=2)
        self.limit, self.used = int(limit), 0
        self.n_states, self.n_actions, self.gamma = mdp.n_states, mdp.n_actions, mdp.gamma
        self.features = None if mdp.features is None else mdp.features.copy()

    def remaining(self) -> int:
        return self.limit - self.used

    def sample(self, states: Any, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        s = np.asarray(states, dtype=np.int64).ravel()
        a = np.asarray(actions, dtype=np.int64).ravel()
        if s.shape != a.shape or (s.size and (s.min() < 0 or s.max() >= self.n_states
                                              or a.min() < 0 or a.max() >= self.n_actions)):
            raise ValueError(f"sample: states in [0, {self.n_states}) and actions in "
                             f"[0, {self.n_actions}), of equal length")
        if self.used + s.size > self.limit:
            raise BudgetExceeded(f"transition budget of this MDP exhausted: used {self.used} of "
                                 f"{self.limit}, asked for {s.size} more")
        if self._budget is not None:
            self._budget.spend("train_transitions", s.size)
        self.used += s.size
        u = self._rng.random(s.size)
        nxt = np.minimum((self._cum[s, a] < u[:, None]).sum(axis=1), self.n_states - 1)
        return self._mdp.R[s, a].copy(), nxt, self._mdp.unsafe[s].copy()


class StateAbstractionView:
    """What an agent may use: ``n_train`` training MDPs of the cell's family (``mdps``: the full
    models, drawn from seeds < 10^6) and ``sampler(i)`` for sample access to them, metered by the
    ``train_transitions`` budget. ``tau``, ``gamma``, ``family`` and ``sample_limit(mdp)`` (the
    per-MDP transition budget at evaluation) describe the cell. ``k_hint(i)`` (the reference
    partition's number of blocks) is granted to reference agents only.

    ``validation_score(routine, config)`` is the tuning protocol's run (``papergym.tuning``): the
    problem applies ``routine`` to its validation MDPs (``n_train_instances`` drawn from the fixed
    tuning seed, the same for every trial) and returns their mean safe compression (where the
    cell has no reference abstraction, as on garnets: compression when VL <= tau and IT = 0,
    else 0). The score is cached under the trial agent's identity (set by the harness) and
    ``config`` (plain data naming every setting of ``routine``); each call spends one of the
    ``tuning_runs`` (``view.tuning_runs``), and the problem records every run."""

    def __init__(self, instances: list[Instance], k_refs: list[int], budget: Budget, seed: int,
                 family: str, tau: float, sample_factor: int, privileges: Privileges,
                 tuning_runs: int = 0,
                 validation: Callable[[Any, Mapping[str, Any]], float] | None = None) -> None:
        self.mdps = [inst.mdp for inst in instances]
        self._k_refs, self._privileges = k_refs, privileges
        self.budget, self.seed, self.family, self.tau = budget, seed, family, tau
        self.sample_factor = int(sample_factor)
        self.gamma = self.mdps[0].gamma if self.mdps else 0.9
        self.n_train = len(self.mdps)
        self.tuning_runs = int(tuning_runs) if validation is not None else 0
        self.tuning = TuningRecord(self.tuning_runs)  # the problem's record of the tuning runs
        self._validation = validation

    def validation_score(self, routine: Any, config: Mapping[str, Any]) -> float:
        if self._validation is None:
            raise PermissionError("this view grants no tuning runs")
        canonical_config(config)  # plain data, or a TypeError before any budget is spent
        self.budget.spend("tuning_runs", 1)
        score = float(self._validation(routine, config))
        self.tuning.add(config, score)
        return score

    def sample_limit(self, n_states: int, n_actions: int) -> int:
        return self.sample_factor * n_states * n_actions

    def sampler(self, i: int) -> TransitionSampler:
        mdp = self.mdps[int(i)]
        return TransitionSampler(mdp, self.sample_limit(mdp.n_states, mdp.n_actions),
                                 (self.seed, int(i), 5), self.budget)

    def k_hint(self, i: int, requested: bool = True) -> int | None:
        return self._k_refs[int(i)] if self._privileges.grant(requested) else None


# ----------------------------------------------------------------------------- scoring


def partition_metrics(mdp: MDP, oracle: Oracle, labels: np.ndarray, tau: float,
                      metric: np.ndarray | None = None) -> dict[str, float]:
    """Every reported number of one abstraction of one MDP (spec "Metrics per MDP")."""
    S, k = mdp.n_states, int(labels.max()) + 1
    v_range = mdp.v_range
    bar = induced_model(mdp, labels)
    V_bar, _ = optimal_values(bar)
    loss = value_loss(mdp, labels, oracle.V)
    transfer_error = float(np.abs(oracle.V - V_bar[labels]).max() / v_range)
    I_bar = safety_invariant(bar.P, bar.unsafe)
    invariant_error = float(np.sum(I_bar[labels] != oracle.invariant) / S)
    merged, bisimilar = same_block_pairs(labels), same_block_pairs(oracle.bisim)
    n_merged, n_bisimilar = merged.sum(), bisimilar.sum()
    n_other = S * (S - 1) // 2 - n_bisimilar
    both = np.sum(merged & bisimilar)
    row = {
        "blocks": float(k), "compression": 1.0 - k / S,
        "value_loss": loss,
        "value_transfer_error": transfer_error,
        "invariant_transfer_error": invariant_error,
        "exact_transfer": float(transfer_error <= TRANSFER_TOL and invariant_error == 0),
        "it_positive": float(invariant_error > 0),
        "merge_precision": float(both / n_merged) if n_merged else 1.0,
        "merge_recall": float(both / n_bisimilar) if n_bisimilar else 1.0,
        "false_merge_rate": float(np.sum(merged & ~bisimilar) / n_other) if n_other else 0.0,
        "is_identity": float(k == S),
        "meets_constraints": float(loss <= tau and invariant_error == 0),
    }
    if oracle.k_ref < S:
        row["safe_compression"] = (S - k) / (S - oracle.k_ref) * row["meets_constraints"]
    if metric is not None:
        d = np.asarray(metric, dtype=float)
        if d.shape != (S, S) or not np.all(np.isfinite(d)):
            raise ValueError(f"an abstraction's metric must be a finite ({S}, {S}) array")
        gap = np.abs(oracle.V[:, None] - oracle.V[None, :])
        violated = np.triu(gap > d + metric_shortfall(mdp), 1)  # the oracle's own tolerance
        row["soundness_violations"] = float(violated.sum())
        row["spread_violations"] = float(np.sum(violated & merged))
    return row


def q_learning(mdp: MDP, phi: np.ndarray, episodes: int, rng: np.random.Generator,
               v_star_start: float, max_steps: int = 100, alpha: float = 0.1, epsilon: float = 0.1,
               check_every: int = 10, target: float = 0.95) -> dict[str, float]:
    """The fixed tabular Q-learner of the grid metric, learning on phi(s): episodes until the
    greedy policy's exact start value reaches ``target`` V*(start), and lava entries until then
    (censored at ``episodes``)."""
    k = int(phi.max()) + 1
    Q = np.zeros((k, mdp.n_actions))
    cum = np.cumsum(mdp.P, axis=2)
    goal, terminal = mdp.meta["goal"], mdp.meta["terminal"]
    lava = 0
    for episode in range(1, episodes + 1):
        s = mdp.start + int(rng.integers(mdp.meta["bit_values"]))   # bits uniform at reset
        for _ in range(max_steps):
            z = phi[s]
            a = int(rng.integers(mdp.n_actions)) if rng.random() < epsilon else int(np.argmax(Q[z]))
            s_next = min(int(np.searchsorted(cum[s, a], rng.random(), side="right")),
                         mdp.n_states - 1)
            done = bool(terminal[s_next])
            r = GOAL_REWARD if goal[s_next] else LAVA_REWARD if mdp.unsafe[s_next] else STEP_REWARD
            target_q = r if done else r + mdp.gamma * Q[phi[s_next]].max()
            Q[z, a] += alpha * (target_q - Q[z, a])
            lava += int(mdp.unsafe[s_next])
            s = s_next
            if done:
                break
        if episode % check_every == 0:
            value = policy_value(mdp, np.argmax(Q, axis=1)[phi])[mdp.start]
            if value >= target * v_star_start:
                return {"episodes_to_95": float(episode), "reached_95": 1.0, "lava_entries": lava}
    return {"episodes_to_95": float(episodes), "reached_95": 0.0, "lava_entries": float(lava)}


# ----------------------------------------------------------------------------- cells


@dataclass(frozen=True)
class Cell:
    """One cell's instance generator: ``family``, its generator arguments, the extra seed words
    ``stream`` and whether oracles include the metric. ``instance(seed)`` draws an instance,
    ``oracle_entry(seeds)`` is the cached list of their oracles."""

    family: str
    generator: Mapping[str, Any]
    stream: tuple[int, ...] = ()
    oracle_metric: bool = False

    def instance(self, seed: int) -> Instance:
        kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in self.generator.items()}
        return make_instance(self.family, seed, self.stream, **kwargs)

    def oracle(self, inst: Instance) -> Oracle:
        ref = inst.planted if inst.family == "perturbed" else None
        abstract = inst.abstract if inst.family == "lifted" else None
        return build_oracle(inst.mdp, inst.planted if abstract is not None else None, abstract,
                            ref_labels=ref, with_metric=self.oracle_metric)

    def oracle_entry(self, instance_seeds: Sequence[int]) -> cache.Entry:
        seeds = [int(s) for s in instance_seeds]
        config = {"family": self.family, "generator": dict(self.generator), "seeds": seeds,
                  "metric": self.oracle_metric, **({"stream": list(self.stream)} if self.stream
                                                   else {})}
        return cache.Entry("abstraction/oracles", config,
                           build=lambda: [self.oracle(self.instance(s)) for s in seeds],
                           code=(Path(__file__).parent,))


@dataclass(frozen=True)
class ValidationRuns:
    """The tuning protocol's runs of one cell (held by the view; no Task, no held-out seed):
    ``routine`` applied to the validation MDPs (``seeds``: training seeds of the fixed tuning
    seed), scored by their mean safe compression (compression when VL <= tau and IT = 0, else 0,
    where the cell has no reference abstraction), cached per trial ``agent`` and ``config``."""

    problem: str
    cell: Cell
    seeds: tuple[int, ...]
    tau: float
    sample_factor: int
    agent: str | None

    def __call__(self, routine: Any, config: Mapping[str, Any]) -> float:
        def run() -> float:
            oracles = cache.get(self.cell.oracle_entry(self.seeds))
            scores = []
            for index, (inst_seed, oracle) in enumerate(zip(self.seeds, oracles)):
                mdp = self.cell.instance(inst_seed).mdp
                if getattr(routine, "access", "model") == "samples":
                    handed: Any = TransitionSampler(mdp, self.sample_factor * mdp.n_states
                                                    * mdp.n_actions, (TUNING_SEED, index, 13))
                else:
                    handed = MDP(mdp.R.copy(), mdp.P.copy(), mdp.unsafe.copy(), mdp.gamma,
                                 (mdp.features if mdp.features is not None
                                  else np.eye(mdp.n_states)).copy(), mdp.start,
                                 name="validation", meta=dict(mdp.meta))
                out = routine(handed)
                labels = check_partition(out["labels"] if isinstance(out, dict) else out,
                                         mdp.n_states, self.problem)
                row = partition_metrics(mdp, oracle, labels, self.tau)
                scores.append(row.get("safe_compression",
                                      row["compression"] * row["meets_constraints"]))
            return float(np.mean(scores))

        setting = {"problem": self.problem, "family": self.cell.family,
                   "generator": dict(self.cell.generator), "stream": list(self.cell.stream),
                   "seeds": list(self.seeds), "tau": self.tau}
        return cached_score("abstraction/tuning", setting, self.agent, config, run,
                            (Path(__file__).parent,))


# ----------------------------------------------------------------------------- the Task


class StateAbstractionTask(Task):
    """Score a state-abstraction routine: the quotient it builds on held-out MDPs.

    ## Description
    Behavioural structures (values, safety invariants, bisimulations, behavioural metrics) as
    fixed points of one-step semantics, and their transfer along abstractions. An agent returns
    a routine that, handed an MDP it has never seen, returns a partition of its states; the
    problem builds the induced abstract model (block-mean rewards and transitions, a block unsafe
    if any member is) and measures what the abstraction preserves against exact oracles.

    ## Data
    ``family``: ``garnet`` (no planted structure), ``lifted`` (a planted exact homomorphism,
    optionally with value-equal twins of opposite label), ``perturbed`` (a delta-approximate
    homomorphism) or ``grid`` (AbstractedGrid-v0's MDP). Training: ``view.mdps``, the full models
    of ``n_train_instances`` MDPs from seeds < 10^6, and ``view.sampler(i)`` (metered
    ``train_transitions``). Evaluation: ``n_eval_instances`` MDPs from ``Task.eval_seeds``.

    ## Artifact
    A callable ``routine(mdp) -> labels`` (one integer block id per state) or
    ``-> {"labels": ..., "metric": (S, S) array}``. It receives the held-out ``MDP`` (R, P,
    unsafe, gamma, features) unless it declares ``access = "samples"``, in which case it gets a
    :class:`TransitionSampler` with ``sample_factor`` |S| |A| transitions. A reference routine
    with ``oracle_k = True`` also gets the reference number of blocks (``mdp.meta["k_hint"]``);
    its rows are privileged (never ranked). Its wall time is measured.

    ## Metrics
    Per MDP (V_range = 1/(1 - gamma)): ``blocks`` k, ``compression`` 1 - k/|S|, ``value_loss``
    ||V* - V^{pi_bar o phi}||_inf / V_range (pi_bar greedy on the induced model, ties to the
    lowest action, V^pi by a linear solve), ``value_transfer_error`` ||V* - V_bar* o phi|| /
    V_range, ``invariant_transfer_error`` |phi^-1(I_bar*) xor I*| / |S| and ``it_positive``,
    ``exact_transfer`` (V* = V_bar* o phi within 1e-8 V_range and phi^-1(I_bar*) = I*: the
    value and the invariant transfer along phi), ``merge_precision`` / ``merge_recall`` against
    the coarsest bisimulation,
    ``false_merge_rate`` (merged non-bisimilar pairs / non-bisimilar pairs), ``is_identity``,
    ``meets_constraints`` (VL <= tau and IT = 0), ``safe_compression`` (primary) = (|S| - k) /
    (|S| - k_ref) if the constraints hold else 0, with k_ref the blocks of the coarsest
    bisimulation (planted h for ``perturbed``; absent where k_ref = |S|),
    ``equals_reference`` (phi is that reference partition); with a returned metric,
    ``soundness_violations`` (pairs with |V*(s) - V*(t)| > d(s, t) + the metric iteration's own
    shortfall bound, ``oracles.metric_shortfall``: 9e-8 at gamma 0.9) and
    ``spread_violations`` (those inside one block). Consistency checks from the oracles:
    ``transfer_violation`` (lifted: V* != V_bar* o h beyond 1e-8 V_range, h^-1(I_bar*) != I*, or
    ker h not the coarsest bisimulation) and ``c1_violation`` (that, or phi != ker h);
    ``c2_violation`` (``oracle_metric``: the oracle metric unsound or not zero exactly on
    bisimilar pairs). Grid: a fixed Q-learner (alpha 0.1, epsilon-greedy 0.1, zero init) learns
    on phi(s) for ``learner_episodes`` episodes, ``learner_runs`` runs per trial:
    ``episodes_to_95`` (the greedy policy's exact start value >= 0.95 V*(start), checked every
    10 episodes; censored at the cap), ``reached_95``, ``lava_entries``. ``abstraction_seconds``:
    the routine's wall time per MDP. Trial metrics are means over the units (one per MDP or
    learner run).

    ## Episode End
    No episodes: one call of the routine per held-out MDP (grid: one call, then the learner runs).

    ## Arguments
    ``family``; generator arguments (the family's only): garnet ``n_states``, ``n_actions``,
    ``branching``, ``label_rate``, ``gamma``; lifted / perturbed ``n_abstract`` (an int or [lo, hi]),
    ``copies`` ([1, c_max]), ``n_actions``, ``branching``, ``twin_frac``, ``label_rate``, ``gamma``,
    ``spread`` (0: mass over every copy), ``delta`` (perturbed); grid ``size``, ``n_bits``,
    ``slip``. Task arguments: ``n_eval_instances``, ``n_train_instances``, ``sample_factor`` (200),
    ``oracle_metric`` (compute the oracle metric and its checks), ``tau`` (0.02),
    ``learner_episodes``, ``learner_runs``, ``tuning_runs`` (8: the tuning protocol's
    validation runs the view grants every agent, ``view.validation_score``).

    ## Tiers
    smoke: garnet 12 states, lifted 5 abstract states x 1-3 copies, 20 instances. standard:
    transfer (lifted, 6-10 abstract states, 1,000 instances), twins and perturbed (delta 0.01,
    0.05) pareto cells of at most 36 states, garnet 50 and 200 states, grid 9 x 9 with 3 bits.
    full: lifted 500 abstract states, grid 25 x 25 with 6 bits, gamma 0.99.

    ## Reference
    Zhang, Luo, Baltieri, "Compositional Behavioral Semantics (and Metrics) for State
    Abstraction in RL" (ICML 2026, arXiv 2606.25357); Li, Walsh & Littman (2006); Ferns,
    Panangaden & Precup (2004). The formal reading (labels as atomic propositions, the induced
    model, the twin construction, tau and safe compression) is reconstructed from the abstract.

    ## Version History
    v0: initial release. Superseded by ``StateAbstraction-v1``: with rewards drawn from
    U[0, 1] the one-step partition equals the coarsest bisimulation on every generated instance
    (200 of 200), so nothing tested the compositional part of the construction.
    """

    id: ClassVar[str] = "papergym/StateAbstraction-v0"
    family: ClassVar[str] = "abstraction"
    paper: ClassVar[str] = PAPER
    task_kwargs: ClassVar[tuple[str, ...]] = TASK_KEYS
    extra_arguments: ClassVar[tuple[str, ...]] = GENERATOR_KEYS
    generator_defaults: ClassVar[Mapping[str, Any]] = {}
    metrics: ClassVar[Mapping[str, MetricDeclaration]] = {
        "safe_compression": ("max", 0.0, None), "value_loss": ("min", 0.0, None),
        "value_transfer_error": ("min", 0.0, None), "invariant_transfer_error": ("min", 0.0, 1.0),
        "it_positive": ("min", 0.0, 1.0), "blocks": ("min", 1.0, None),
        "compression": ("max", 0.0, 1.0), "merge_precision": ("max", 0.0, 1.0),
        "merge_recall": ("max", 0.0, 1.0), "false_merge_rate": ("min", 0.0, 1.0),
        "is_identity": ("max", 0.0, 1.0), "meets_constraints": ("max", 0.0, 1.0),
        "exact_transfer": ("max", 0.0, 1.0),
        "equals_reference": ("max", 0.0, 1.0), "soundness_violations": ("min", 0.0, None),
        "spread_violations": ("min", 0.0, None), "transfer_violation": ("min", 0.0, 1.0),
        "c1_violation": ("min", 0.0, 1.0), "c2_violation": ("min", 0.0, 1.0),
        "episodes_to_95": ("min", 0.0, None), "reached_95": ("max", 0.0, 1.0),
        "lava_entries": ("min", 0.0, None), "abstraction_seconds": ("min", 0.0, None),
        "oracle_k": ("min", 0.0, 1.0),
    }
    nondeterministic_metrics: ClassVar[frozenset[str]] = frozenset({"abstraction_seconds"})

    def __init__(self, tier: str = "smoke", family: str = "lifted", n_eval_instances: int = 20,
                 n_train_instances: int = 5, sample_factor: int = 200, oracle_metric: bool = False,
                 tau: float = TAU, learner_episodes: int = 200, learner_runs: int = 1,
                 tuning_runs: int = 8, **generator: Any) -> None:
        super().__init__(tier=tier, family=family, **generator)
        if family not in FAMILIES:
            raise ValueError(f"{self.id}: family must be one of {', '.join(FAMILIES)}, got {family!r}")
        unknown = set(generator) - set(self.extra_arguments)
        if unknown:
            raise ValueError(f"{self.id}: unknown arguments {sorted(unknown)}; generator "
                             f"arguments are {', '.join(self.extra_arguments)}")
        generator = {**self.generator_defaults, **generator}
        self.instance_family = family
        # each family's generator takes its own arguments; the others (tier defaults) drop out
        self.generator = {k: _jsonable(v) for k, v in generator.items()
                          if k in FAMILY_ARGUMENTS[family]}
        self.n_eval = int(n_eval_instances)
        self.n_train = int(n_train_instances)
        self.sample_factor = int(sample_factor)
        self.oracle_metric = bool(oracle_metric)
        self.tau = float(tau)
        self.learner_episodes, self.learner_runs = int(learner_episodes), int(learner_runs)
        self.tuning_runs = int(tuning_runs)
        if min(self.n_eval, self.n_train + 1, self.sample_factor, self.learner_runs,
               self.tuning_runs + 1) < 1:
            raise ValueError(f"{self.id}: n_eval_instances, sample_factor and learner_runs must "
                             "be >= 1, n_train_instances and tuning_runs >= 0")
        self.cell = Cell(family, dict(self.generator), self._stream(), self.oracle_metric)
        self._view: StateAbstractionView | None = None

    # --- instances and their oracles ---------------------------------------------------------

    def _instance(self, seed: int) -> Instance:
        return self.cell.instance(seed)

    def _stream(self) -> tuple[int, ...]:
        """Extra seed words of this cell's instances: none in v0 (every cell of one seed drew
        the same base instances, e.g. one lifted MDP perturbed by each delta)."""
        return ()

    def _instance_seeds(self, seed: int) -> list[int]:
        if self.instance_family == "grid":
            return [0]
        return self.eval_seeds(seed, self.n_eval)

    def oracle_entry(self, instance_seeds: list[int]) -> cache.Entry:
        return self.cell.oracle_entry(instance_seeds)

    def cache_entries(self, seeds: Sequence[int]) -> list[cache.Entry]:
        entries = [self.oracle_entry(self._instance_seeds(int(s))) for s in seeds]
        if self.tuning_runs and self.n_train:
            entries.append(self.oracle_entry(self._validation_seeds()))
        return entries

    def _validation_seeds(self) -> list[int]:
        if self.instance_family == "grid":
            return [0]
        rng = np.random.default_rng([TUNING_SEED, 19])
        return [int(s) for s in rng.integers(0, 10**6, size=self.n_train)]

    # --- the contract ------------------------------------------------------------------------

    @property
    def budget(self) -> Budget:
        return Budget(train_transitions=max(1, self.n_train) * self.sample_factor
                      * self._max_states() * int(self.generator.get("n_actions", 4)),
                      tuning_runs=self.tuning_runs)

    def _max_states(self) -> int:
        """An upper bound on |S| of this cell's MDPs (sizes vary by seed)."""
        g = self.generator
        if self.instance_family == "grid":
            return int(g.get("size", 5)) ** 2 * 2 ** int(g.get("n_bits", 1))
        if self.instance_family == "garnet":
            n = g.get("n_states", 12)
            return int(max(n) if isinstance(n, list) else n)
        n = g.get("n_abstract", 5)
        n = int(max(n) if isinstance(n, list) else n)
        twins = int(round(float(g.get("twin_frac", 0.0)) * n))
        return (n + twins) * int(list(g.get("copies", [1, 3]))[1])

    def train_view(self, seed: int, budget: Budget) -> StateAbstractionView:
        rng = np.random.default_rng([int(seed), 17])
        seeds = [int(s) for s in rng.integers(0, 10**6, size=self.n_train)]
        if self.instance_family == "grid":
            seeds = [0] * min(1, self.n_train)
        instances = [self._instance(s) for s in seeds]
        k_refs = [int(self._oracle_k(inst)) for inst in instances]
        validation = None
        if self.tuning_runs > 0 and self.n_train > 0:
            validation = ValidationRuns(self.id, self.cell, tuple(self._validation_seeds()),
                                        self.tau, self.sample_factor, self.shared_runs.agent)
        self._view = StateAbstractionView(
            instances, k_refs, budget, seed, self.instance_family, self.tau, self.sample_factor,
            self.privileges, self.tuning_runs, validation)
        return self._view

    @staticmethod
    def _oracle_k(inst: Instance) -> int:
        from papergym.envs.abstraction.oracles import coarsest_bisimulation

        labels = inst.planted if inst.family == "perturbed" else coarsest_bisimulation(inst.mdp)
        return int(np.unique(labels).size)

    def _hand_over(self, artifact: Any, mdp: MDP, oracle: Oracle, seed: int, index: int,
                   oracle_k: bool) -> Any:
        if getattr(artifact, "access", "model") == "samples":
            return TransitionSampler(mdp, self.sample_factor * mdp.n_states * mdp.n_actions,
                                     (seed, index, 11, *self._salt_words()))
        meta = {**mdp.meta, "k_hint": oracle.k_ref} if oracle_k else dict(mdp.meta)
        features = mdp.features if mdp.features is not None else np.eye(mdp.n_states)
        return MDP(mdp.R.copy(), mdp.P.copy(), mdp.unsafe.copy(), mdp.gamma, features.copy(),
                   mdp.start, name="heldout", meta=meta)

    @staticmethod
    def _salt_words() -> tuple[int, ...]:
        from papergym.problem import eval_entropy

        return eval_entropy()

    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        if not callable(artifact):
            raise TypeError(f"{self.id} expects an abstraction routine (a callable MDP -> labels "
                            f"or {{'labels', 'metric'}}), got {type(artifact).__name__}")
        oracle_k = self.grant_privilege(getattr(artifact, "oracle_k", False))  # references only
        instance_seeds = self._instance_seeds(seed)
        oracles = cache.get(self.oracle_entry(instance_seeds))
        units: list[dict[str, Any]] = []
        for index, (inst_seed, oracle) in enumerate(zip(instance_seeds, oracles)):
            inst = self._instance(inst_seed)
            mdp = inst.mdp
            handed = self._hand_over(artifact, mdp, oracle, seed, index, oracle_k)
            started = time.perf_counter()
            out = artifact(handed)
            seconds = time.perf_counter() - started
            metric = None
            if isinstance(out, dict):
                if "labels" not in out:
                    raise ValueError(f"{self.id}: a dict artifact output needs 'labels'")
                metric = out.get("metric")
                out = out["labels"]
            labels = check_partition(out, mdp.n_states, self.id)
            row = partition_metrics(mdp, oracle, labels, self.tau, metric)
            reference = inst.planted if inst.family == "perturbed" else oracle.bisim
            row["equals_reference"] = float(np.array_equal(check_partition(
                reference, mdp.n_states, self.id), labels))
            row["abstraction_seconds"] = seconds
            if inst.family == "lifted":
                c = oracle.checks
                row["transfer_violation"] = float(
                    c["value_transfer_error"] > 1e-8 or c["invariant_transfer_errors"] > 0
                    or not c["planted_is_bisimulation"] or not c["planted_is_coarsest"])
                planted = check_partition(inst.planted, mdp.n_states, self.id)
                row["c1_violation"] = float(row["transfer_violation"] or not np.array_equal(
                    planted, labels))
            if self.oracle_metric:
                row["c2_violation"] = float(oracle.checks["soundness_violations"] > 0
                                            or oracle.checks["zero_set_violations"] > 0)
            if inst.family == "grid":
                for run, run_seed in enumerate(self.eval_seeds(seed, self.learner_runs)):
                    learned = q_learning(mdp, labels, self.learner_episodes,
                                         np.random.default_rng(run_seed), float(oracle.V[mdp.start]))
                    units.append({"instance": run, **row, **learned})
            else:
                units.append({"instance": index, "instance_id": instance_id(inst_seed), **row})
        names = sorted({k for u in units for k in u} - {"instance", "instance_id"})
        metrics = {k: float(np.mean([u[k] for u in units if k in u])) for k in names}
        metrics["oracle_k"] = float(oracle_k)
        view = self._view
        tuning = view.tuning.summary() if view is not None and view.seed == seed else None
        return EvalResult(metrics=metrics, units=units, info={"tuning": tuning} if tuning else {})


class StateAbstractionTaskV1(StateAbstractionTask):
    """Score a state-abstraction routine on held-out MDPs whose one-step signatures collide.

    ## Description
    As ``StateAbstraction-v0`` (behavioural structures as fixed points of one-step semantics,
    scored on the induced abstract model against exact oracles), with rewards drawn from a few
    repeated values: abstract states share their one-step signature (L(s), R(s, .)) while their
    transitions differ, so the local description alone (the one-step partition) is coarser than
    the coarsest bisimulation, and only closing it under composition (the fixed point) recovers
    the behaviour. On 200 lifted instances (6-10 abstract states, 1-3 copies, 2 actions,
    branching 2) the two partitions differ on 190; with 3 actions on 109-120.

    ## Data
    As v0; garnet, lifted and perturbed rewards (before the perturbation) are drawn uniformly
    from {0, 1/(L - 1), ..., 1} with L = ``reward_levels`` (3: {0, 0.5, 1}; 0: U[0, 1] as v0).
    Instances are seeded by the instance seed and the cell's generator arguments, so two cells
    (two deltas, two sizes) never share their instances.

    ## Artifact
    As v0.

    ## Metrics
    As v0 (``exact_transfer`` among them).

    ## Episode End
    As v0.

    ## Arguments
    As v0, plus ``reward_levels`` (3).

    ## Tiers
    As v0, with ``reward_levels`` 3 at every tier.

    ## Reference
    As v0.

    ## Version History
    v1: rewards from ``reward_levels`` repeated values (3), so one-step signatures and the
    coarsest bisimulation differ; every cell draws its own instances (v0: the cells of one
    seed shared their base instances, e.g. one lifted MDP perturbed by each delta).
    v0: initial release (superseded).
    """

    id: ClassVar[str] = "papergym/StateAbstraction-v1"
    extra_arguments: ClassVar[tuple[str, ...]] = V1_GENERATOR_KEYS
    generator_defaults: ClassVar[Mapping[str, Any]] = {"reward_levels": 3}

    def _stream(self) -> tuple[int, ...]:
        """A word from the cell's generator arguments: cells (each delta, each size) draw
        independent instances, so a claim's (cell, seed) clusters are independent units."""
        return (zlib.crc32(json.dumps([self.instance_family, self.generator],
                                      sort_keys=True).encode()),)
