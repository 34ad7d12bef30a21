"""QAOA² bookkeeping (Zhou, Du, Tian & Tao 2022, as ported in the official Neural QAOA² code).

One level: split the current graph into blocks of at most ``n_max`` nodes, solve every block
with the fixed subsolver, then build the coarse graph whose nodes are the blocks. For blocks
i < j with block solutions x_i, x_j::

    w⁺_ij = Σ_{u∈H_i, v∈H_j} w_uv [x(u) ≠ x(v)]     (cut across if neither block flips)
    w⁻_ij = Σ_{u∈H_i, v∈H_j} w_uv [x(u) = x(v)]     (cut across if exactly one flips)
    W_ij = w⁻_ij − w⁺_ij,   const += w⁺_ij,  const += Σ_i cut_i

so that const + cut_coarse(flips) is the cut of the original graph. Choosing which blocks to
flip is MaxCut on the coarse graph, hence the recursion. The final side of an original node
is its block bit XOR the flip bits of its super-nodes, level by level.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from papergym.envs.qaoa.subsolver import solve_blocks


def repair_assignment(labels: np.ndarray, n_max: int) -> tuple[np.ndarray, int]:
    """Make every block hold at most ``n_max`` nodes, keeping the agent's label values.

    Excess nodes of an over-full block (highest index first) move to the emptiest block with
    room; when every used block is full they open the smallest unused label. Returns the
    repaired labels and the number of nodes moved.
    """
    labels = np.asarray(labels, dtype=np.int64).copy()
    counts: dict[int, int] = {int(c): int(k) for c, k in zip(*np.unique(labels, return_counts=True))}
    moved = 0
    for block in sorted(counts):
        if counts[block] <= n_max:
            continue
        members = np.flatnonzero(labels == block)[::-1]  # highest index first
        for node in members[: counts[block] - n_max]:
            candidates = [c for c in counts if c != block and counts[c] < n_max]
            if not candidates:
                fresh = next(c for c in range(labels.size + len(counts) + 1) if c not in counts)
                counts[fresh] = 0
                candidates = [fresh]
            target = min(candidates, key=lambda c: (counts[c], c))
            labels[node] = target
            counts[block] -= 1
            counts[target] += 1
            moved += 1
    return labels, moved


def compact_labels(labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Labels renumbered 0..k−1 (in increasing label order) and the original label of each."""
    original, compact = np.unique(labels, return_inverse=True)
    return compact.astype(np.int64), original


def coarsen(weights: np.ndarray, labels: np.ndarray, bits: np.ndarray) -> tuple[np.ndarray, float]:
    """Coarse weights W = w⁻ − w⁺ between blocks and the cross-block constant Σ_{i<j} w⁺_ij."""
    k = int(labels.max()) + 1
    member = np.zeros((labels.size, k))
    member[np.arange(labels.size), labels] = 1.0
    differ = bits[:, None] != bits[None, :]
    w_plus = member.T @ (weights * differ) @ member
    w_minus = member.T @ (weights * ~differ) @ member
    coarse = w_minus - w_plus
    np.fill_diagonal(coarse, 0.0)
    upper_plus = np.triu(w_plus, 1).sum()
    return coarse, float(upper_plus)


@dataclass
class LevelResult:
    coarse: np.ndarray
    labels: np.ndarray
    bits: np.ndarray  # per node of this level
    block_cut: float
    cross_const: float
    closed_form_evals: int
    shots: int
    n_repaired: int
    block_expectations: list[float] = field(default_factory=list)


def run_level(
    weights: np.ndarray, labels: np.ndarray, params: np.ndarray, n_max: int,
    rng: np.random.Generator, **subsolver_kwargs,
) -> LevelResult:
    """Solve each block with its initial (γ, β) = params[label] and coarsen."""
    labels, n_repaired = repair_assignment(labels, n_max)
    labels, original = compact_labels(labels)
    bits = np.zeros(labels.size, dtype=np.int8)
    members = [np.flatnonzero(labels == block) for block in range(int(labels.max()) + 1)]
    angles = np.array([params[original[block] % len(params)] for block in range(len(members))])
    solutions = solve_blocks([weights[np.ix_(nodes, nodes)] for nodes in members], angles, rng,
                             **subsolver_kwargs)
    for nodes, solution in zip(members, solutions):
        bits[nodes] = solution.bits
    block_cut = float(sum(s.cut for s in solutions))
    evals = sum(s.closed_form_evals for s in solutions)
    shots = sum(s.shots for s in solutions)
    expectations = [s.expectation for s in solutions]
    coarse, cross = coarsen(weights, labels, bits)
    return LevelResult(coarse, labels, bits, block_cut, cross, evals, shots, n_repaired,
                       expectations)
