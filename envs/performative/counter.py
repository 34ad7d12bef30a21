"""Local-MaxCut graphs whose best-improvement flip path doubles with every level (the jury's hard family).

The PLS-hardness of a strategic local optimum (Anagnostides et al. 2026, appendix) goes through
Local-MaxCut, where flip dynamics can need exponentially many improving flips (Haken & Luby 1988;
Schaffer & Yannakakis 1991: weighted chains of gadgets, weights growing along the chain; Monien &
Tscheuschner 2010). Those papers' gadgets are not reproduced here [reconstructed]: this module
designs its own chain and lets a linear program find the weights.

Construction [reconstructed; verified by simulation in tests/envs/test_performative.py]. Two
anchors z (side 1) and z' (side 0) and ``levels`` levels of four vertices (a, b, c, d), starting on
sides (0, 1, 0, 1); level ``levels - 1`` is the top. A level's *response* is: flip a and b, let the
level below respond, flip c and d, let the level below respond; the next response of the same level
runs the mirror order (d, c, below, b, a, below). The top responds once, so the designed sequence
has L(k) = 4 + 2 L(k - 1) = 4 (2^k - 1) flips. Edges join the anchors to every vertex, vertices of
one level, and vertices of adjacent levels. The LP (HiGHS through scipy) minimises the total weight
subject to: at every step of the designed sequence its vertex has the strictly largest flip gain
(by >= 1) and a positive one, and at the end no flip improves. Weights are then scaled and rounded
to integers with margins that survive the rounding, and the path is re-simulated exactly.

``design_counter`` runs the LP (seconds up to 8 levels, about a minute at 10);
``counter_instance`` reads the weights shipped in ``papergym/data/maxcut/counter.json`` (written by
``python -m papergym.envs.performative.counter``).
"""

from __future__ import annotations

import hashlib
import json
import sys
from functools import lru_cache

import numpy as np

from papergym.maxcut import MaxCutInstance, packaged_json

WIDTH = 4  # vertices per level
ANCHORS = 2  # z (side 1), z' (side 0)
START_PATTERN = (0, 1, 0, 1)
MAX_LEVELS = 10


def n_vertices(levels: int) -> int:
    return ANCHORS + WIDTH * levels


def designed_length(levels: int) -> int:
    """L(k) = 4 (2^k - 1) flips (L(1) = 4, L(k) = 4 + 2 L(k - 1))."""
    return WIDTH * (2**levels - 1)


def designed_flips(levels: int) -> list[int]:
    """The vertex flipped at each step of the designed best-improvement path."""
    forward = (0, 1, None, 2, 3, None)  # None: the level below responds
    mirror = (3, 2, None, 1, 0, None)
    responses = [0] * levels
    sequence: list[int] = []

    def respond(level: int) -> None:
        order = forward if responses[level] % 2 == 0 else mirror
        responses[level] += 1
        for slot in order:
            if slot is None:
                if level > 0:
                    respond(level - 1)
            else:
                sequence.append(ANCHORS + WIDTH * level + slot)

    respond(levels - 1)
    return sequence


def start_sides(levels: int) -> np.ndarray:
    sides = np.zeros(n_vertices(levels), dtype=np.int8)
    sides[0] = 1
    sides[ANCHORS:] = np.tile(START_PATTERN, levels)
    return sides


def candidate_edges(levels: int) -> np.ndarray:
    level = [-1] * ANCHORS + [v // WIDTH for v in range(WIDTH * levels)]
    n = n_vertices(levels)
    pairs = [(0, 1)]
    for u in range(n):
        for v in range(max(u + 1, ANCHORS), n):
            if level[u] == -1 or abs(level[u] - level[v]) <= 1:
                pairs.append((u, v))
    return np.array(pairs, dtype=np.int64)


def flip_gains(n: int, edges: np.ndarray, weights: np.ndarray, sides: np.ndarray) -> np.ndarray:
    """cut(s with v flipped) - cut(s) for every v: sum of w_uv over neighbours on v's side minus the rest."""
    u, v = edges[:, 0], edges[:, 1]
    sign = np.where(sides[u] == sides[v], 1.0, -1.0) * weights
    gains = np.zeros(n)
    np.add.at(gains, u, sign)
    np.add.at(gains, v, sign)
    return gains


def design_counter(levels: int) -> tuple[np.ndarray, np.ndarray]:
    """(edges, integer weights) whose best-improvement path from ``start_sides`` is the designed one."""
    from scipy.optimize import linprog
    from scipy.sparse import csr_matrix, vstack

    if not 1 <= levels:
        raise ValueError(f"levels must be >= 1, got {levels}")
    n, edges = n_vertices(levels), candidate_edges(levels)
    m = edges.shape[0]
    incidence = np.zeros((n, m))
    incidence[edges[:, 0], np.arange(m)] = 1.0
    incidence[edges[:, 1], np.arange(m)] = 1.0
    sides = start_sides(levels).astype(bool)
    blocks = []
    for vertex in designed_flips(levels):
        # gain rows: g_u = sum_e incidence[u, e] * sign_e(s) * w_e
        rows = incidence * np.where(sides[edges[:, 0]] == sides[edges[:, 1]], 1.0, -1.0)
        others = np.delete(np.arange(n), vertex)
        blocks.append(csr_matrix(rows[others] - rows[vertex]))  # g_u - g_v <= -1
        blocks.append(csr_matrix(-rows[vertex][None]))  # g_v >= 1
        sides[vertex] = ~sides[vertex]
    rows = incidence * np.where(sides[edges[:, 0]] == sides[edges[:, 1]], 1.0, -1.0)
    blocks.append(csr_matrix(rows))  # a strict local optimum at the end
    A = vstack(blocks).tocsr()
    res = linprog(np.ones(m), A_ub=A, b_ub=-np.ones(A.shape[0]), bounds=(0, None), method="highs")
    if res.status != 0:
        raise RuntimeError(f"counter LP with {levels} levels: {res.message}")
    keep = res.x > 1e-9
    edges, weights = edges[keep], res.x[keep]
    # margins 1 -> 2 * max degree; rounding moves a gain difference by at most max degree
    degree = np.bincount(edges.ravel(), minlength=n).max()
    weights = np.round(weights * 2 * degree)
    keep = weights > 0
    edges, weights = edges[keep], weights[keep]
    path = best_improvement_path(n, edges, weights, start_sides(levels), cap=designed_length(levels) + 1)
    if path != designed_flips(levels):
        raise RuntimeError(f"counter with {levels} levels: rounded weights leave the designed path")
    return edges, weights


def best_improvement_path(n: int, edges: np.ndarray, weights: np.ndarray, sides: np.ndarray,
                          cap: int) -> list[int]:
    """Flips of steepest-ascent local MaxCut from ``sides`` (lowest index on ties), at most ``cap``."""
    sides = np.asarray(sides).astype(np.int8).copy()
    path: list[int] = []
    while len(path) < cap:
        gains = flip_gains(n, edges, weights, sides)
        v = int(np.argmax(gains))
        if gains[v] <= 1e-9:
            break
        sides[v] ^= 1
        path.append(v)
    return path


@lru_cache(maxsize=1)
def _shipped() -> dict[str, dict]:
    return packaged_json("counter.json")


def counter_instance(levels: int, relabel_seed: int | None = None) -> tuple[MaxCutInstance, np.ndarray]:
    """The shipped counter graph with ``levels`` levels and its start sides; ``relabel_seed``
    permutes the vertex ids (best improvement follows the same path: its margins leave no ties)."""
    table = _shipped()
    if str(levels) not in table:
        raise ValueError(f"counter graphs ship for levels in 1..{len(table)}, got {levels}")
    entry = table[str(levels)]
    edges = np.asarray(entry["edges"], dtype=np.int64)
    weights = np.asarray(entry["weights"], dtype=float)
    sides = start_sides(levels)
    n = n_vertices(levels)
    if relabel_seed is not None:
        perm = np.random.default_rng([int(relabel_seed), 47]).permutation(n)  # old id -> new id
        edges = perm[edges]
        new_sides = np.empty_like(sides)
        new_sides[perm] = sides
        sides = new_sides
    return MaxCutInstance(f"counter_{levels}", n, edges, weights), sides


def main(argv: list[str]) -> None:
    """Write (or update) papergym/data/maxcut/counter.json for levels 1..MAX_LEVELS (or those given);
    then refresh its line in papergym/data/maxcut/SHA256SUMS."""
    from pathlib import Path

    levels = [int(a) for a in argv] or list(range(1, MAX_LEVELS + 1))
    out = Path(__file__).resolve().parents[2] / "papergym" / "data" / "maxcut" / "counter.json"
    table = json.loads(out.read_text()) if out.exists() else {}
    for k in levels:
        edges, weights = design_counter(k)
        table[str(k)] = {"edges": edges.tolist(), "weights": weights.astype(int).tolist()}
        print(f"levels {k}: {n_vertices(k)} vertices, {len(weights)} edges, path {designed_length(k)}",
              flush=True)
        table = dict(sorted(table.items(), key=lambda item: int(item[0])))
        out.write_text(json.dumps(table, separators=(",", ":")) + "\n")
    manifest = out.parent / "SHA256SUMS"
    digest = hashlib.sha256(out.read_bytes()).hexdigest()
    lines = [ln for ln in manifest.read_text().splitlines() if ln.strip() and not ln.endswith(out.name)]
    manifest.write_text("\n".join([*lines, f"{digest}  {out.name}"]) + "\n")
    print(f"wrote {out} and its line in {manifest.name}")


if __name__ == "__main__":
    main(sys.argv[1:])
