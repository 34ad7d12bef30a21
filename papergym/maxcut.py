"""Weighted MaxCut instances: the shared loader, the cut value and the exact solver.

Used by every family that touches MaxCut (qaoa; performative's StrategicJury gadget): one
cut-value function (:func:`cut_value`, for an instance's edge list or a dense weight matrix,
one side vector or a batch of them) and one exact solver (:func:`exact_maxcut`, Gray-code
enumeration up to ``EXACT_MAX_NODES`` nodes). The
instance sets ship inside the package (``papergym/data/maxcut``: one LZMA zip per subset,
``osv.json``, the source's MIT licence, ``SOURCE.md``) and are read through
:mod:`importlib.resources`, so an installed copy needs nothing beside it. Every file is checked
against the SHA-256 manifest ``SHA256SUMS`` the first time it is opened. File format: first
line ``N M``; then ``M`` lines ``u v w`` with 1-based ids.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import numpy as np

SUBSETS = ("train_instances_only", "test_instances_only", "generalization_instances_only_1")
MANIFEST = "SHA256SUMS"


@dataclass(frozen=True)
class MaxCutInstance:
    """A weighted graph on nodes 0..n-1; ``edges`` is (m, 2) int, ``weights`` is (m,) float."""

    name: str
    n: int
    edges: np.ndarray
    weights: np.ndarray

    def adjacency(self) -> np.ndarray:
        """Dense symmetric weight matrix (parallel edges are summed)."""
        w = np.zeros((self.n, self.n))
        np.add.at(w, (self.edges[:, 0], self.edges[:, 1]), self.weights)
        np.add.at(w, (self.edges[:, 1], self.edges[:, 0]), self.weights)
        return w

    def cut_value(self, assignment: np.ndarray) -> float:
        """Sum of the weights of edges whose ends are on different sides (:func:`cut_value`)."""
        return float(cut_value(self, assignment))


def _data_dir() -> Traversable:
    """The packaged data folder (inside the installed package, editable or not)."""
    return resources.files("papergym").joinpath("data", "maxcut")


@lru_cache(maxsize=1)
def _manifest() -> dict[str, str]:
    """File name -> SHA-256 from ``SHA256SUMS`` (``sha256sum`` format)."""
    table = {}
    for line in _data_dir().joinpath(MANIFEST).read_text().splitlines():
        if line.strip():
            digest, name = line.split(maxsplit=1)
            table[name.lstrip("*")] = digest
    return table


def subset_path(subset: str) -> Path:
    """The packaged archive of one subset (a file of the installed package)."""
    return Path(str(_data_dir().joinpath(f"{subset}.zip")))


@lru_cache(maxsize=8)
def _verified_bytes(filename: str) -> bytes:
    """A packaged data file's bytes, refused unless they match the manifest."""
    expected = _manifest().get(filename)
    if expected is None:
        raise FileNotFoundError(f"papergym/data/maxcut/{MANIFEST} lists no file {filename!r}")
    data = _data_dir().joinpath(filename).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != expected:
        raise ValueError(f"papergym/data/maxcut/{filename}: SHA-256 {digest[:16]}… does not match "
                         f"{MANIFEST} ({expected[:16]}…); the packaged data is damaged, reinstall")
    return data


@lru_cache(maxsize=len(SUBSETS))
def _archive(subset: str) -> zipfile.ZipFile:
    if subset not in SUBSETS:
        raise ValueError(f"unknown MaxCut subset {subset!r}; choose one of {', '.join(SUBSETS)}")
    return zipfile.ZipFile(io.BytesIO(_verified_bytes(f"{subset}.zip")))


@lru_cache(maxsize=len(SUBSETS))
def _members(subset: str) -> frozenset[str]:
    return frozenset(_archive(subset).namelist())


def parse_maxcut(text: str, name: str = "instance") -> MaxCutInstance:
    lines = [ln.split() for ln in text.strip().splitlines() if ln.strip()]
    n, m = int(lines[0][0]), int(lines[0][1])
    body = lines[1 : 1 + m]
    if len(body) != m:
        raise ValueError(f"{name}: header announces {m} edges, file has {len(body)}")
    edges = np.array([[int(u) - 1, int(v) - 1] for u, v, _ in body], dtype=np.int64).reshape(-1, 2)
    weights = np.array([float(w) for _, _, w in body], dtype=float)
    if edges.size and (edges.min() < 0 or edges.max() >= n):
        raise ValueError(f"{name}: node ids must lie in 1..{n}")
    return MaxCutInstance(name=name, n=n, edges=edges, weights=weights)


def load_maxcut(name: str) -> MaxCutInstance:
    """Load instance ``name`` (file stem) from whichever packaged subset holds it."""
    for subset in SUBSETS:
        if f"{name}.txt" in _members(subset):
            return parse_maxcut(_archive(subset).read(f"{name}.txt").decode(), name=name)
    raise FileNotFoundError(f"no MaxCut instance {name!r} in the packaged sets ({', '.join(SUBSETS)})")


def list_instances(subset: str) -> list[str]:
    """Stems of the instance files of one subset, sorted."""
    return sorted(member.removesuffix(".txt") for member in _members(subset))


@lru_cache(maxsize=1)
def _osv_table() -> dict[str, float]:
    return {k: float(v) for k, v in json.loads(_verified_bytes("osv.json")).items()}


def packaged_json(filename: str) -> dict:
    """A JSON file of the packaged MaxCut data, checked against the SHA-256 manifest."""
    return json.loads(_verified_bytes(filename))


def best_known_cut(name: str) -> float:
    """Optimal or best-known cut value from osv.json."""
    table = _osv_table()
    if name not in table:
        raise KeyError(f"osv.json has no value for {name!r}")
    return table[name]


EXACT_MAX_NODES = 24


def cut_value(graph: MaxCutInstance | np.ndarray, sides: np.ndarray) -> float | np.ndarray:
    """cut(s) = Σ_{uv∈E} w_uv [s_u ≠ s_v] of a graph (an instance, or a dense symmetric weight
    matrix) for one side vector (n,) -> float, or a batch (b, n) -> (b,) array."""
    sides = np.asarray(sides).astype(bool)
    n = graph.n if isinstance(graph, MaxCutInstance) else np.asarray(graph).shape[0]
    if sides.shape[-1:] != (n,) or sides.ndim > 2:
        name = graph.name if isinstance(graph, MaxCutInstance) else "graph"
        raise ValueError(f"{name}: sides must have shape ({n},) or (batch, {n}), got {sides.shape}")
    if isinstance(graph, MaxCutInstance):
        u, v, w = graph.edges[:, 0], graph.edges[:, 1], graph.weights
    else:
        weights = np.asarray(graph, dtype=float)
        u, v = np.nonzero(np.triu(weights, 1))
        w = weights[u, v]
    values = (sides[..., u] != sides[..., v]) @ w
    return float(values) if sides.ndim == 1 else np.asarray(values, dtype=float)


def exact_maxcut(graph: MaxCutInstance | np.ndarray, chunk_bits: int = 16) -> tuple[float, np.ndarray]:
    """Exact MaxCut of an instance or a dense weight matrix (n ≤ ``EXACT_MAX_NODES``):
    node n−1 fixed on side 0, the other 2^(n−1) assignments in Gray-code order.

    Consecutive Gray codes differ in one bit k, so cut(next) = cut(prev) + Δ with
    Δ = Σ_j w_kj (1 − 2[s_k ≠ s_j]) evaluated before the flip: O(n) per code instead of
    O(|E|). Vectorized per chunk of codes, with the running cut carried across chunks.
    Returns (value, sides); the first maximum in Gray order wins ties.
    """
    weights = graph.adjacency() if isinstance(graph, MaxCutInstance) else np.asarray(graph, float)
    n = weights.shape[0]
    if n > EXACT_MAX_NODES:
        raise ValueError(f"exact MaxCut is limited to {EXACT_MAX_NODES} nodes, got {n}")
    if n <= 1:
        return 0.0, np.zeros(n, dtype=np.int8)
    free = n - 1
    total_codes = 1 << free
    best_value, best_gray = 0.0, 0  # code 0: every node on side 0, cut 0
    running = 0.0
    bits = np.arange(free, dtype=np.int64)
    chunk = 1 << min(free, chunk_bits)
    for start in range(1, total_codes, chunk):
        t = np.arange(start, min(start + chunk, total_codes), dtype=np.int64)
        previous_gray = (t - 1) ^ ((t - 1) >> 1)
        flipped = np.log2((t & -t).astype(float)).astype(np.int64)  # the bit that changes
        sides = ((previous_gray[:, None] >> bits) & 1).astype(np.int8)  # before the flip
        own = sides[np.arange(t.size), flipped]
        differ = sides != own[:, None]  # s_j ≠ s_k over the free nodes; node n−1 is side 0
        row = weights[flipped, :free]
        delta = (row * (1 - 2 * differ)).sum(axis=1) + weights[flipped, free] * (1 - 2 * own)
        values = running + np.cumsum(delta)
        i = int(np.argmax(values))
        if values[i] > best_value + 1e-12 * max(1.0, abs(best_value)):
            best_value, best_gray = float(values[i]), int(t[i] ^ (t[i] >> 1))
        running = float(values[-1])
    assignment = np.zeros(n, dtype=np.int8)
    assignment[:free] = (best_gray >> bits) & 1
    # the running sum drifts by rounding; report the cut of the assignment itself
    return float(cut_value(weights, assignment)), assignment


def exact_maxcut_frontier(graph: MaxCutInstance, max_width: int = 20) -> tuple[float, np.ndarray]:
    """Exact MaxCut by dynamic programming over the vertex order 0..n-1, for graphs of any size
    whose *frontier* stays small (the processed vertices that still have unprocessed neighbours:
    a path decomposition; chains of gadgets have width of a few gadgets).

    Adding vertex v on either side adds w_uv for every frontier neighbour u on the other side; a
    vertex leaves the frontier (maximised out, argmax kept for the trace-back) once its last
    neighbour is added. O(n 2^width). Raises ``ValueError`` when the frontier exceeds ``max_width``.
    """
    n = graph.n
    if n == 0:
        return 0.0, np.zeros(0, dtype=np.int8)
    weights = graph.adjacency()
    last = np.array([max([v, *np.nonzero(weights[v])[0]]) for v in range(n)])
    width = frontier_width(last)
    if width > max_width:
        raise ValueError(f"{graph.name}: frontier width {width} in vertex order exceeds {max_width}")
    frontier: list[int] = []
    table = np.zeros(1)
    trail: list[tuple[str, int, np.ndarray | None]] = []
    for v in range(n):
        states = np.arange(table.size)
        bits = (states[:, None] >> np.arange(len(frontier))) & 1
        w = weights[v, frontier] if frontier else np.zeros(0)
        to_one = bits @ w  # v on side 0: edges to frontier vertices on side 1 are cut
        to_zero = w.sum() - to_one
        table = np.concatenate([table + to_one, table + to_zero])  # v's bit is the highest
        frontier.append(v)
        trail.append(("add", v, None))
        for u in [u for u in frontier if last[u] <= v]:
            p = frontier.index(u)
            r = np.arange(table.size // 2)
            lo = (r & ((1 << p) - 1)) | ((r >> p) << (p + 1))
            hi = lo | (1 << p)
            pick = table[hi] > table[lo]
            table = np.where(pick, table[hi], table[lo])
            frontier.pop(p)
            trail.append(("drop", p, pick))
    value = float(table[0])
    sides = np.zeros(n, dtype=np.int8)
    state, width = 0, 0  # frontier state after the last step: empty
    for kind, item, pick in reversed(trail):
        if kind == "drop":  # re-insert the dropped bit at position item
            bit = int(pick[state])
            state = (state & ((1 << item) - 1)) | (bit << item) | ((state >> item) << (item + 1))
            width += 1
        else:  # item was added as the highest bit
            width -= 1
            sides[item] = (state >> width) & 1
            state &= (1 << width) - 1
    cut = float(cut_value(graph, sides))
    if abs(cut - value) > 1e-6 * max(1.0, abs(value)):
        raise RuntimeError(f"{graph.name}: frontier trace-back gives cut {cut}, the table {value}")
    return cut, sides


def frontier_width(last: np.ndarray) -> int:
    """Largest frontier of the DP, given each vertex's last neighbour (or itself) in vertex order."""
    n = last.size
    leaving = np.bincount(last, minlength=n)  # vertices that leave after step v
    return int(np.max(np.arange(1, n + 1) - np.concatenate([[0], np.cumsum(leaving)[:-1]])))
