"""Finite labelled MDPs and the exact one-step semantics the family is built on.

A labelled MDP M = (S, A, R, P, L, gamma) with R(s, a) in [0, 1] (the grid: [-0.01, 1]),
P(.|s, a) a distribution over S and L(s) in {safe, unsafe}, an atomic proposition outside the
reward. As a coalgebra c(s) = (L(s), (R(s, a), P(.|s, a))_a) [spec, recon]. Every behavioural
structure below is the fixed point of a monotone one-step operator Phi:

- value:     Phi(V)(s) = max_a R(s, a) + gamma sum_s' P(s'|s, a) V(s')        (least = only)
- invariant: Phi(I) = Safe n {s : exists a, supp P(.|s, a) c I}               (greatest)
- partition (abstraction) phi: S -> {0..k-1} and its induced model: R_bar(B, a) = mean_{s in B}
  R(s, a), P_bar(B'|B, a) = mean_{s in B} P(phi^-1(B')|s, a), block unsafe if any member is.

Bisimulation and the behavioural metric are in ``oracles.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

VI_TOL = 1e-13  # value iteration stops at this sup-change times V_range


@dataclass(frozen=True)
class MDP:
    """A finite labelled MDP: ``R`` (S, A), ``P`` (S, A, S) row-stochastic, ``unsafe`` (S,) bool.

    ``features`` (S, F) describe states to agents (one-hot index unless the family has
    coordinates); ``start`` is the start state where one exists (the grid)."""

    R: np.ndarray
    P: np.ndarray
    unsafe: np.ndarray
    gamma: float
    features: np.ndarray | None = None
    start: int | None = None
    name: str = ""
    meta: dict = field(default_factory=dict, compare=False)

    @property
    def n_states(self) -> int:
        return int(self.R.shape[0])

    @property
    def n_actions(self) -> int:
        return int(self.R.shape[1])

    @property
    def v_range(self) -> float:
        return 1.0 / (1.0 - self.gamma)

    def check(self, atol: float = 1e-12) -> None:
        """Raise ``ValueError`` unless the arrays describe a labelled MDP."""
        S, A = self.R.shape
        if self.P.shape != (S, A, S) or self.unsafe.shape != (S,):
            raise ValueError(f"MDP {self.name}: shapes R {self.R.shape}, P {self.P.shape}, "
                             f"unsafe {self.unsafe.shape} do not agree")
        if not 0 < self.gamma < 1:
            raise ValueError(f"MDP {self.name}: gamma must be in (0, 1), got {self.gamma}")
        if np.any(self.P < 0) or np.abs(self.P.sum(-1) - 1).max() > atol:
            raise ValueError(f"MDP {self.name}: rows of P must be distributions")


# ----------------------------------------------------------------------------- values


def bellman_q(mdp: MDP, V: np.ndarray) -> np.ndarray:
    return mdp.R + mdp.gamma * mdp.P @ V


def policy_value(mdp: MDP, policy: np.ndarray) -> np.ndarray:
    """V^pi by an exact linear solve (I - gamma P_pi) V = R_pi."""
    idx = np.arange(mdp.n_states)
    P_pi = mdp.P[idx, policy]
    R_pi = mdp.R[idx, policy]
    return np.linalg.solve(np.eye(mdp.n_states) - mdp.gamma * P_pi, R_pi)


def greedy(Q: np.ndarray, tie_tol: float = 0.0) -> np.ndarray:
    """The greedy action, ties (within ``tie_tol``) broken to the lowest action."""
    best = Q.max(axis=1, keepdims=True)
    return np.argmax(Q >= best - tie_tol, axis=1)


def optimal_values(mdp: MDP) -> tuple[np.ndarray, np.ndarray]:
    """(V*, Q*): value iteration to a sup-change of 1e-13 V_range, then the exact value of the
    greedy policy, improved until it is greedy with respect to its own value (Howard)."""
    V = np.zeros(mdp.n_states)
    for _ in range(100_000):
        V_new = bellman_q(mdp, V).max(axis=1)
        done = np.abs(V_new - V).max() <= VI_TOL * mdp.v_range
        V = V_new
        if done:
            break
    policy = greedy(bellman_q(mdp, V))
    for _ in range(100):
        V = policy_value(mdp, policy)
        Q = bellman_q(mdp, V)
        better = Q.max(axis=1) > Q[np.arange(mdp.n_states), policy] + 1e-13 * mdp.v_range
        if not better.any():
            break
        policy = np.where(better, Q.argmax(axis=1), policy)
    return V, bellman_q(mdp, V)


# ----------------------------------------------------------------------------- invariant


def safety_invariant(P: np.ndarray, unsafe: np.ndarray) -> np.ndarray:
    """I* = the greatest fixed point of Phi(I) = Safe n {s : exists a, supp P(.|s,a) c I},
    iterated down from Safe. Supports are exact: P > 0."""
    inside = ~unsafe.astype(bool)
    while True:
        leaks = (P > 0) & ~inside[None, None, :]       # mass that leaves I
        keep = inside & np.any(~leaks.any(axis=2), axis=1)
        if np.array_equal(keep, inside):
            return inside
        inside = keep


# ----------------------------------------------------------------------------- partitions


def canonical(labels: np.ndarray) -> np.ndarray:
    """Relabel blocks 0..k-1 in order of first occurrence (equal partitions compare equal)."""
    labels = np.asarray(labels)
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))
    return order[inverse.ravel()].astype(np.int64)


def check_partition(labels: object, n_states: int, where: str) -> np.ndarray:
    """A partition returned by an agent: integers, one per state; else ``ValueError``."""
    arr = np.asarray(labels)
    if arr.shape != (n_states,):
        raise ValueError(f"{where}: an abstraction maps each of the {n_states} states to a block "
                         f"id; got an array of shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        if arr.dtype.kind != "f" or not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ValueError(f"{where}: block ids must be integers, got dtype {arr.dtype}")
    return canonical(arr.astype(np.int64))


def block_matrix(labels: np.ndarray, k: int | None = None) -> np.ndarray:
    """(S, k) one-hot membership matrix."""
    k = int(labels.max()) + 1 if k is None else k
    E = np.zeros((labels.size, k))
    E[np.arange(labels.size), labels] = 1.0
    return E


def same_block_pairs(labels: np.ndarray) -> np.ndarray:
    """Boolean (S, S) upper-triangle mask of pairs s < t in the same block."""
    same = labels[:, None] == labels[None, :]
    return np.triu(same, 1)


def induced_model(mdp: MDP, labels: np.ndarray) -> MDP:
    """M_bar of a partition (uniform weights, conservative labels) [spec, recon]."""
    E = block_matrix(labels)
    sizes = E.sum(axis=0)
    R_bar = (E.T @ mdp.R) / sizes[:, None]
    mass = mdp.P @ E                                   # (S, A, k): P(phi^-1(B')|s, a)
    P_bar = np.einsum("sk,sab->kab", E, mass) / sizes[:, None, None]
    unsafe_bar = (E.T @ mdp.unsafe.astype(float)) > 0
    return MDP(R_bar, P_bar, unsafe_bar, mdp.gamma, name=f"{mdp.name}/bar")


def pullback_homomorphism_errors(mdp: MDP, abstract: MDP, h: np.ndarray) -> dict[str, float]:
    """How far h: S -> S_bar is from a homomorphism onto ``abstract``: sup errors of
    R = R_bar o h, h_# P = P_bar o h, and the number of label mismatches."""
    E = block_matrix(h, abstract.n_states)
    return {"reward": float(np.abs(mdp.R - abstract.R[h]).max()),
            "transition": float(np.abs(mdp.P @ E - abstract.P[h]).max()),
            "label": float(np.sum(mdp.unsafe != abstract.unsafe[h]))}


def value_loss(mdp: MDP, labels: np.ndarray, V_star: np.ndarray) -> float:
    """||V* - V^{pi_bar o phi}||_inf / V_range for the greedy-optimal policy of the induced model
    (ties to the lowest action)."""
    _, Q_bar = optimal_values(induced_model(mdp, labels))
    policy = greedy(Q_bar, tie_tol=1e-12 * mdp.v_range)[labels]
    return float(np.abs(V_star - policy_value(mdp, policy)).max() / mdp.v_range)
