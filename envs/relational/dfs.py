"""Deep feature synthesis (DFS) in pandas: a relational task becomes one feature matrix.

For the target table [code: depth 2; primitives count, mean, sum, min, max, mode; no transform
primitives]: its own columns; forward features (the columns of its parents and of their parents,
joined through the foreign keys); backward aggregates of each child table (COUNT, and MEAN, SUM,
MIN, MAX of its float columns, MODE of its categoricals); and depth-2 aggregates of aggregates
(per child row, COUNT and MEAN of each grandchild table's float columns; then their MEAN and MAX
over the entity's children). Cutoffs: a temporal task gives each entity a cutoff time tau; a
timestamped child or grandchild row enters an entity's aggregates only if its time is <= tau, and
a grandchild only through a child row that entered. Empty groups give COUNT 0 and NaN elsewhere.
Categoricals stay integer codes, marked in the categorical mask.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from papergym.envs.relational.generator import Database

FLOAT_AGGREGATES = ("mean", "sum", "min", "max")


@dataclass(frozen=True)
class Features:
    X: np.ndarray  # (entities, columns), float64, NaN where a group was empty
    names: tuple[str, ...]
    cat: np.ndarray  # bool per column: categorical codes
    own: np.ndarray  # bool per column: the target table's own columns (the target-only ablation)


def _mode(frame: pd.DataFrame, key: str, col: str) -> pd.Series:
    """The most frequent value per group (ties: the smallest code)."""
    counts = frame.groupby([key, col]).size().reset_index(name="_n")
    counts = counts.sort_values([key, "_n", col], ascending=[True, False, True], kind="stable")
    return counts.drop_duplicates(key).set_index(key)[col]


def aggregate(frame: pd.DataFrame, key: str, n: int, floats: list[str], cats: list[str], prefix: str
              ) -> tuple[dict[str, np.ndarray], set[str]]:
    """Backward aggregates of ``frame``'s rows per value of ``key`` in 0..n-1."""
    index = pd.RangeIndex(n)
    out = {f"COUNT({prefix})": frame.groupby(key).size().reindex(index, fill_value=0).to_numpy(float)}
    if floats:
        agg = frame.groupby(key)[floats].agg(list(FLOAT_AGGREGATES)).reindex(index)
        for col in floats:
            for fn in FLOAT_AGGREGATES:
                out[f"{fn.upper()}({prefix}.{col})"] = agg[(col, fn)].to_numpy(float)
    categorical = set()
    for col in cats:
        name = f"MODE({prefix}.{col})"
        out[name] = _mode(frame, key, col).reindex(index).to_numpy(float)
        categorical.add(name)
    return out, categorical


def _split(table) -> tuple[list[str], list[str]]:
    return ([c for c in table.columns if c not in table.cat], [c for c in table.columns if c in table.cat])


def linearize(db: Database, target: str, entities: np.ndarray, cutoff: np.ndarray | None = None) -> Features:
    """The DFS feature matrix of rows ``entities`` of table ``target`` (``cutoff``: per entity)."""
    T = db.tables[target]
    entities = np.asarray(entities, dtype=np.int64)
    m = len(entities)
    position = np.full(T.n, -1, dtype=np.int64)
    position[entities] = np.arange(m)
    columns: dict[str, np.ndarray] = {}
    categorical: set[str] = set()
    own: set[str] = set()
    for c, v in T.columns.items():  # the entity's own row
        columns[f"{target}.{c}"] = v[entities].astype(float)
        own.add(f"{target}.{c}")
        if c in T.cat:
            categorical.add(f"{target}.{c}")
    for p in db.parents(target):  # forward, depth 1 and 2
        P, rows = db.tables[p], T.fks[p][entities]
        for c, v in P.columns.items():
            columns[f"{target}.{p}.{c}"] = v[rows].astype(float)
            if c in P.cat:
                categorical.add(f"{target}.{p}.{c}")
        for q in db.parents(p):
            Q, rows2 = db.tables[q], P.fks[q][rows]
            for c, v in Q.columns.items():
                columns[f"{target}.{p}.{q}.{c}"] = v[rows2].astype(float)
                if c in Q.cat:
                    categorical.add(f"{target}.{p}.{q}.{c}")
    for c in db.children(target):  # backward, depth 1 and 2
        C = db.tables[c]
        owner = position[C.fks[target]]
        valid = owner >= 0
        if cutoff is not None and C.time is not None:
            valid &= C.time <= np.where(valid, cutoff[np.maximum(owner, 0)], -np.inf)
        floats, cats = _split(C)
        frame = pd.DataFrame({k: C.columns[k][valid] for k in C.columns})
        frame["_entity"] = owner[valid]
        agg, cat = aggregate(frame, "_entity", m, floats, cats, c)
        columns.update(agg)
        categorical |= cat
        for g in db.children(c):
            G = db.tables[g]
            parent_row = G.fks[c]
            gvalid = valid[parent_row]
            if cutoff is not None and G.time is not None:
                tau = np.where(gvalid, cutoff[np.maximum(owner[parent_row], 0)], -np.inf)
                gvalid &= G.time <= tau
            gfloats, _ = _split(G)
            gframe = pd.DataFrame({k: G.columns[k][gvalid] for k in gfloats})
            gframe["_row"] = parent_row[gvalid]
            per_row = {f"COUNT({g})": gframe.groupby("_row").size().reindex(pd.RangeIndex(C.n), fill_value=0)}
            if gfloats:
                means = gframe.groupby("_row")[gfloats].mean().reindex(pd.RangeIndex(C.n))
                per_row.update({f"MEAN({g}.{k})": means[k] for k in gfloats})
            inner = pd.DataFrame({k: v.to_numpy(float)[valid] for k, v in per_row.items()})
            inner["_entity"] = owner[valid]
            outer = inner.groupby("_entity")[list(per_row)].agg(["mean", "max"]).reindex(pd.RangeIndex(m))
            for k in per_row:
                for fn in ("mean", "max"):
                    columns[f"{fn.upper()}({c}.{k})"] = outer[(k, fn)].to_numpy(float)
    names = tuple(columns)
    X = np.column_stack([columns[k] for k in names]) if names else np.zeros((m, 0))
    return Features(X, names, np.array([k in categorical for k in names], dtype=bool),
                    np.array([k in own for k in names], dtype=bool))
