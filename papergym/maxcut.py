"""Weighted MaxCut instances: the shared loader, cut values and exact brute force.

Used by every family that touches MaxCut (qaoa; performative's StrategicJury gadget). The
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
        """Sum of the weights of edges whose ends are on different sides."""
        side = np.asarray(assignment).astype(bool)
        if side.shape != (self.n,):
            raise ValueError(f"{self.name}: assignment must have shape ({self.n},), got {side.shape}")
        return float(self.weights[side[self.edges[:, 0]] != side[self.edges[:, 1]]].sum())


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


def best_known_cut(name: str) -> float:
    """Optimal or best-known cut value from osv.json."""
    table = _osv_table()
    if name not in table:
        raise KeyError(f"osv.json has no value for {name!r}")
    return table[name]


def brute_force_maxcut(instance: MaxCutInstance, max_nodes: int = 24) -> tuple[float, np.ndarray]:
    """Exact MaxCut by enumerating all 2^(n-1) cuts (node n-1 fixed on side 0), vectorized."""
    n = instance.n
    if n > max_nodes:
        raise ValueError(f"{instance.name}: brute force is limited to {max_nodes} nodes, got {n}")
    if n <= 1:
        return 0.0, np.zeros(n, dtype=np.int8)
    best_value, best_code = -np.inf, 0
    chunk = 1 << min(n - 1, 20)
    bits = np.arange(n - 1, dtype=np.int64)
    u, v, w = instance.edges[:, 0], instance.edges[:, 1], instance.weights
    for start in range(0, 1 << (n - 1), chunk):
        codes = np.arange(start, min(start + chunk, 1 << (n - 1)), dtype=np.int64)
        sides = np.zeros((codes.size, n), dtype=bool)
        sides[:, : n - 1] = (codes[:, None] >> bits) & 1
        values = ((sides[:, u] != sides[:, v]) * w).sum(axis=1)
        i = int(np.argmax(values))
        if values[i] > best_value:
            best_value, best_code = float(values[i]), int(codes[i])
    assignment = np.zeros(n, dtype=np.int8)
    assignment[: n - 1] = (best_code >> bits) & 1
    return best_value, assignment
