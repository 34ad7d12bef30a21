"""The exact per-block-plus-merge objective: the cut QAOA² reaches from a first-level partition
when every subproblem is solved exactly.

QAOA² (``qaoa2.py``) solves each block, then solves MaxCut on the coarse graph of blocks to
decide which blocks flip. With an exact subsolver both steps are exact: every block gets a
maximum cut (brute force over its ≤ n_max nodes; the first maximum in enumeration order wins
ties) and the merge takes a maximum cut of the coarse graph, so that

    oracle(labels) = Σ_i maxcut(H_i) + Σ_{i<j} w⁺_ij + maxcut(W),   W_ij = w⁻_ij − w⁺_ij,

is the best cut consistent with those block solutions (each block kept or flipped as a
whole). It depends on the partition only, not on angles or sampling noise, so it separates how
good a partition is from how well an evaluator predicts it [recon: the oracle evaluator of
Neural QAOA²'s ablations]. The merge is exact up to ``max_exact`` super-nodes (every graph of
up to 16·n_max nodes); a larger coarse graph is split into contiguous chunks of n_max and
solved by the same rule recursively (then a lower bound of the exact merge).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from papergym import cache
from papergym.envs.qaoa import partitions, qaoa2
from papergym.envs.qaoa.instances import get_instance
from papergym.envs.qaoa.qaoa2 import coarsen, compact_labels, repair_assignment

MAX_EXACT_MERGE = 16


@lru_cache(maxsize=32)
def _spins(m: int) -> np.ndarray:
    """(2^(m−1), m) spins ±1 of every assignment with the last node fixed at +1."""
    codes = np.arange(1 << max(m - 1, 0), dtype=np.int64)
    free = ((codes[:, None] >> np.arange(max(m - 1, 0))) & 1).astype(np.float64)
    spins = np.ones((codes.size, m))
    spins[:, : m - 1] = 1.0 - 2.0 * free
    return spins


def exact_block_cuts(blocks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Maximum cuts of a stack of (B, m, m) symmetric zero-diagonal weights (zero padding
    allowed) by enumeration: cut(s) = (Σ_{u<v} w_uv − ½ sᵀWs)/2 over spins s. Returns the
    (B,) values and the (B, m) sides (0/1) of the first maximum."""
    blocks = np.asarray(blocks, dtype=np.float64)
    spins = _spins(blocks.shape[1])
    quadratic = np.einsum("sm,bmn,sn->bs", spins, blocks, spins, optimize=True)
    cuts = (blocks.sum(axis=(1, 2)) / 2.0)[:, None] / 2.0 - quadratic / 4.0
    best = np.argmax(cuts, axis=1)
    return cuts[np.arange(len(blocks)), best], (spins[best] < 0).astype(np.int8)


def exact_objective(weights: np.ndarray, labels: np.ndarray, n_max: int,
                    max_exact: int = MAX_EXACT_MERGE) -> tuple[float, np.ndarray]:
    """(cut, sides): the oracle cut of a first-level partition and the assignment reaching it
    (over-full blocks are first repaired as the environment repairs them)."""
    weights = np.asarray(weights, dtype=np.float64)
    n = weights.shape[0]
    if n <= n_max:
        value, sides = exact_block_cuts(weights[None])
        return float(value[0]), sides[0]
    labels, _ = repair_assignment(np.asarray(labels, dtype=np.int64), n_max)
    labels, _ = compact_labels(labels)
    k = int(labels.max()) + 1
    members = [np.flatnonzero(labels == block) for block in range(k)]
    size = max(m.size for m in members)
    stacked = np.zeros((k, size, size))
    for block, nodes in enumerate(members):
        stacked[block, : nodes.size, : nodes.size] = weights[np.ix_(nodes, nodes)]
    block_values, block_sides = exact_block_cuts(stacked)
    bits = np.zeros(n, dtype=np.int8)
    for block, nodes in enumerate(members):
        bits[nodes] = block_sides[block, : nodes.size]
    coarse, cross = coarsen(weights, labels, bits)
    if k <= max_exact:
        merged, flips = exact_block_cuts(coarse[None])
        merged, flips = float(merged[0]), flips[0]
    else:
        merged, flips = exact_objective(coarse, np.arange(k) // n_max, n_max, max_exact)
    return float(block_values.sum()) + cross + merged, bits ^ flips[labels]


def objective_ratio(weights: np.ndarray, cut: float) -> float:
    """A cut as (cut − SumNeg)/(Σw⁺ − SumNeg) ∈ [0, 1]: r with the trivial upper bound Σw⁺ in
    place of OPT, comparable within a graph without knowing OPT."""
    upper = np.triu(np.asarray(weights, dtype=np.float64), 1)
    negative, positive = float(upper[upper < 0].sum()), float(upper[upper > 0].sum())
    return (cut - negative) / max(positive - negative, 1e-12)


def oracle_of_check_plans(names: list[str], n_max: int, per_instance: int, seed: int
                          ) -> dict[str, list[float]]:
    """name -> the oracle ratio of each of its check partitions (``logs.check_plans``)."""
    from papergym.envs.qaoa.logs import check_plans_entry

    plans = cache.get(check_plans_entry(names, n_max, per_instance, seed))
    out = {}
    for name in names:
        weights = get_instance(name).adjacency()
        out[name] = [objective_ratio(weights, exact_objective(weights, labels, n_max)[0])
                     for _, labels in plans[name]]
    return out


def oracle_check_entry(names: list[str], n_max: int, per_instance: int, seed: int
                       ) -> cache.Entry:
    config = {"names": list(names), "n_max": n_max, "per_instance": per_instance, "seed": seed}
    return cache.Entry("qaoa/check_oracle", config,
                       build=lambda: oracle_of_check_plans(list(names), n_max, per_instance,
                                                           seed),
                       code=(partitions, qaoa2, exact_block_cuts, exact_objective,
                             oracle_of_check_plans))
