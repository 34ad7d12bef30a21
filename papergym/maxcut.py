"""Weighted MaxCut instances: the shared loader, cut values and exact brute force.

Used by every family that touches MaxCut (qaoa; performative's StrategicJury gadget). The
instance files are read in place from the shared data folder and never copied into the
repository. File format: first line ``N M``; then ``M`` lines ``u v w`` with 1-based ids.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

SUBSETS = ("train_instances_only", "test_instances_only", "generalization_instances_only_1")


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


def shared_data_root(root: str | Path | None = None) -> Path:
    """The MaxCut data folder: ``root``, else $PAPERGYM_SHARED/data/maxcut, else ../shared."""
    if root is not None:
        return Path(root)
    env = os.environ.get("PAPERGYM_SHARED")
    if env:
        return Path(env) / "data" / "maxcut"
    project_root = Path(__file__).resolve().parent.parent
    return project_root.parent / "shared" / "data" / "maxcut"


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


def load_maxcut(name: str, root: str | Path | None = None) -> MaxCutInstance:
    """Load instance ``name`` (file stem) from whichever subset folder holds it."""
    base = shared_data_root(root)
    if not base.is_dir():
        raise FileNotFoundError(
            f"MaxCut data folder {base} not found; set PAPERGYM_SHARED or pass root="
        )
    for subset in SUBSETS:
        path = base / subset / f"{name}.txt"
        if path.is_file():
            return parse_maxcut(path.read_text(), name=name)
    raise FileNotFoundError(f"no MaxCut instance {name!r} under {base} ({', '.join(SUBSETS)})")


def list_instances(subset: str, root: str | Path | None = None) -> list[str]:
    folder = shared_data_root(root) / subset
    return sorted(p.stem for p in folder.glob("*.txt"))


@lru_cache(maxsize=4)
def _osv_table(base: str) -> dict[str, float]:
    return {k: float(v) for k, v in json.loads((Path(base) / "osv.json").read_text()).items()}


def best_known_cut(name: str, root: str | Path | None = None) -> float:
    """Optimal or best-known cut value from osv.json."""
    table = _osv_table(str(shared_data_root(root)))
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
