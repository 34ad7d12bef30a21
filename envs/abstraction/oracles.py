"""Exact oracles: coarsest label-aware bisimulation, the behavioural metric, and a bundle of
every reference structure of one instance.

- Bisimulation by partition refinement [classic]: start from the classes of (L(s), R(s, .))
  rounded to ``tol``, split every block by the vector of block masses P(s, a, B) until stable.
  Its blocks are the kernel of the largest homomorphism (model-irrelevance abstraction).
- Metric (Ferns et al. 2004, label-aware) [spec, derived]:
  d(s, t) = max(c_L [L(s) != L(t)], max_a |R(s,a) - R(t,a)| + gamma W1_d(P(.|s,a), P(.|t,a))),
  c_L = 1/(1 - gamma): the least fixed point of a gamma-contraction, iterated from 0 until the
  sup-change is <= 1e-9 V_range. Sound (|V*(s) - V*(t)| <= d(s, t)) and zero exactly on
  bisimilar pairs. W1 problems with supports of at most 3 points use the tree solver; larger
  ones the transport LP.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from papergym.envs.abstraction.core import (
    MDP,
    block_matrix,
    canonical,
    induced_model,
    optimal_values,
    safety_invariant,
)
from papergym.envs.abstraction.transport import MAX_TREE_SUPPORT, TreeTransport, pad_support, w1_linprog

BISIM_TOL = 1e-9
METRIC_TOL = 1e-9  # sup-change stopping rule, times V_range


def _classes(keys: np.ndarray) -> np.ndarray:
    return canonical(np.unique(keys, axis=0, return_inverse=True)[1].ravel())


def one_step_partition(mdp: MDP, tol: float = BISIM_TOL) -> np.ndarray:
    """Classes of the one-step signature (L(s), R(s, .)) rounded to ``tol``."""
    keys = np.column_stack([mdp.unsafe.astype(float), np.round(mdp.R / tol)])
    return _classes(keys)


def coarsest_bisimulation(mdp: MDP, tol: float = BISIM_TOL, max_rounds: int | None = None
                          ) -> np.ndarray:
    """Partition refinement: split blocks by (block, rounded P(s, a, B)) until no block splits.
    ``max_rounds`` stops early (0 rounds = the one-step partition)."""
    labels = one_step_partition(mdp, tol)
    rounds = 0
    while max_rounds is None or rounds < max_rounds:
        mass = mdp.P @ block_matrix(labels)                     # (S, A, k)
        keys = np.column_stack([labels, np.round(mass.reshape(mdp.n_states, -1) / tol)])
        new = _classes(keys)
        rounds += 1
        if new.max() == labels.max():
            break
        labels = new
    return labels


def is_bisimulation(mdp: MDP, labels: np.ndarray, atol: float = 1e-9) -> bool:
    """Whether the equivalence of ``labels`` is a bisimulation: equal labels, rewards and block
    masses within each block (the one-step condition of Phi(E) c E)."""
    mass = mdp.P @ block_matrix(labels)
    for block in range(labels.max() + 1):
        members = labels == block
        for arr in (mdp.unsafe[members].astype(float), mdp.R[members], mass[members]):
            if np.ptp(arr, axis=0).max(initial=0.0) > atol:
                return False
    return True


# ----------------------------------------------------------------------------- the metric


def metric_shortfall(mdp: MDP, tol: float = METRIC_TOL) -> float:
    """How far below its fixed point d* the metric of :func:`bisimulation_metric` may stop: the
    iteration from 0 rises monotonically to d*, and a gamma-contraction whose last change is
    <= delta = tol V_range is within gamma delta / (1 - gamma) of its fixed point (Banach), plus
    float round-off. Soundness, |V*(s) - V*(t)| <= d*(s, t), is checked at this tolerance: at
    1e-9 a 6-state lazy chain (gamma 0.9) showed 16 false violations."""
    return tol * mdp.v_range * mdp.gamma / (1.0 - mdp.gamma) + 1e-12 * mdp.v_range


def one_step_metric(mdp: MDP) -> np.ndarray:
    """The metric operator's first iterate from 0: max(c_L [L(s) != L(t)], max_a |R(s, a) -
    R(t, a)|), the local one-step description without composition (transport against d = 0 is
    free)."""
    unsafe = mdp.unsafe.astype(bool)
    d = np.abs(mdp.R[:, None, :] - mdp.R[None, :, :]).max(axis=2)
    return np.where(unsafe[:, None] != unsafe[None, :], 1.0 / (1.0 - mdp.gamma), d)


def bisimulation_metric(mdp: MDP, tol: float = METRIC_TOL, max_iter: int = 100_000
                        ) -> tuple[np.ndarray, int]:
    """(d, iterations): the label-aware bisimulation metric by fixed-point iteration from 0."""
    S, A, gamma = mdp.n_states, mdp.n_actions, mdp.gamma
    c_label = 1.0 / (1.0 - gamma)
    unsafe = mdp.unsafe.astype(bool)
    s_idx, t_idx = np.triu_indices(S, 1)
    # pairs with different labels sit at c_L: the reward part never exceeds 1 + gamma c_L = c_L
    same = unsafe[s_idx] == unsafe[t_idx]
    s_idx, t_idx = s_idx[same], t_idx[same]
    d = np.zeros((S, S))
    mismatch = unsafe[:, None] != unsafe[None, :]
    d[mismatch] = c_label
    if s_idx.size == 0:
        return d, 0
    dR = np.abs(mdp.R[s_idx] - mdp.R[t_idx])                    # (pairs, A)
    rows = mdp.P.reshape(S * A, S)
    small = (rows > 0).sum(axis=1).max() <= MAX_TREE_SUPPORT
    if small:
        idx, mass = pad_support(rows)
        idx, mass = idx.reshape(S, A, -1), mass.reshape(S, A, -1)
        solvers = [TreeTransport(mass[s_idx, a], mass[t_idx, a], idx[s_idx, a], idx[t_idx, a])
                   for a in range(A)]
    for iteration in range(1, max_iter + 1):
        if small:
            W = np.column_stack([solver.cost(d) for solver in solvers])
        else:
            W = _w1_general(mdp, s_idx, t_idx, d)
        values = np.maximum((dR + gamma * np.maximum(W, 0.0)).max(axis=1), 0.0)
        change = np.abs(values - d[s_idx, t_idx]).max()
        d[s_idx, t_idx] = values
        d[t_idx, s_idx] = values
        if change <= tol * mdp.v_range:
            return d, iteration
    raise RuntimeError(f"bisimulation metric did not converge in {max_iter} iterations")


def _w1_general(mdp: MDP, s_idx: np.ndarray, t_idx: np.ndarray, d: np.ndarray) -> np.ndarray:
    W = np.zeros((s_idx.size, mdp.n_actions))
    for p, (s, t) in enumerate(zip(s_idx, t_idx)):
        for a in range(mdp.n_actions):
            xs, ys = np.nonzero(mdp.P[s, a])[0], np.nonzero(mdp.P[t, a])[0]
            W[p, a] = w1_linprog(mdp.P[s, a, xs], mdp.P[t, a, ys], d[np.ix_(xs, ys)])
    return W


def metric_operator(mdp: MDP, d: np.ndarray) -> np.ndarray:
    """One application of the metric's one-step operator, every pair by the transport LP (a slow
    reference used by the tests to check the fixed point)."""
    S = mdp.n_states
    c_label = 1.0 / (1.0 - mdp.gamma)
    out = np.zeros((S, S))
    for s in range(S):
        for t in range(s + 1, S):
            if mdp.unsafe[s] != mdp.unsafe[t]:
                value = c_label
            else:
                value = 0.0
                for a in range(mdp.n_actions):
                    xs, ys = np.nonzero(mdp.P[s, a])[0], np.nonzero(mdp.P[t, a])[0]
                    w = w1_linprog(mdp.P[s, a, xs], mdp.P[t, a, ys], d[np.ix_(xs, ys)])
                    value = max(value, abs(mdp.R[s, a] - mdp.R[t, a]) + mdp.gamma * w)
            out[s, t] = out[t, s] = value
    return out


# ----------------------------------------------------------------------------- the bundle


@dataclass(frozen=True)
class Oracle:
    """Every reference structure of one instance (computed by the problem, never shown)."""

    V: np.ndarray
    Q: np.ndarray
    invariant: np.ndarray
    bisim: np.ndarray
    k_ref: int
    metric: np.ndarray | None
    checks: dict


def build_oracle(mdp: MDP, planted: np.ndarray | None = None, abstract: MDP | None = None,
                 ref_labels: np.ndarray | None = None, with_metric: bool = False) -> Oracle:
    """V*, Q*, I*, the coarsest bisimulation, k_ref (blocks of the bisimulation, or of the
    planted h for perturbed instances) and, with ``with_metric``, d with its checks.

    ``checks`` holds the transfer and soundness counts of the family's consistency claims."""
    V, Q = optimal_values(mdp)
    invariant = safety_invariant(mdp.P, mdp.unsafe)
    bisim = coarsest_bisimulation(mdp)
    reference = bisim if ref_labels is None else canonical(ref_labels)
    checks: dict = {}
    if planted is not None and abstract is not None:
        V_bar, _ = optimal_values(abstract)
        I_bar = safety_invariant(abstract.P, abstract.unsafe)
        quotient = induced_model(mdp, canonical(planted))
        checks.update(
            value_transfer_error=float(np.abs(V - V_bar[planted]).max() / mdp.v_range),
            invariant_transfer_errors=int(np.sum(I_bar[planted] != invariant)),
            planted_is_bisimulation=int(is_bisimulation(mdp, canonical(planted))),
            planted_is_coarsest=int(np.array_equal(canonical(planted), bisim)),
            quotient_size=int(quotient.n_states),
        )
    metric = None
    if with_metric:
        metric, iterations = bisimulation_metric(mdp)
        gap = np.abs(V[:, None] - V[None, :])
        same = bisim[:, None] == bisim[None, :]
        checks.update(
            metric_iterations=iterations,
            soundness_violations=int(np.sum(gap > metric + metric_shortfall(mdp))),
            zero_set_violations=int(np.sum((metric <= 1e-9) != same)),
        )
    return Oracle(V, Q, invariant, bisim, int(reference.max() + 1), metric, checks)
