"""The relational prior: random schemas, one structural causal model per table, foreign keys
chosen by the child's own causal score, and the three binary task types.

A database is a set of tables in topological order (parents first). An edge parent -> child means
the child holds a foreign key ``fk_<parent>`` into the parent's primary key (its row index).
Every table has an SCM: a random MLP whose inputs are its own noise causes and, for a child row,
the causal outputs of the parent rows it points to. Features are read from random hidden units;
``CAUSAL`` further units are passed on to children, and one unit is the edge score ``e`` that
decides which candidate child rows survive (so which parents get children, and how many, depends
on features) [code: the official Relational Prior Generator; sizes reconstructed, see the spec].
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

NOISE_CAUSES = 6  # per row (official 10)
CAUSAL = 4  # causal outputs a parent passes to each child row (official 10)
CANDIDATE_RATIO = 10  # a child of n rows is selected from r * n candidates [code]
TIME_SPAN = 1000.0
ACTIVATIONS = {
    "tanh": np.tanh,
    "relu": lambda z: np.maximum(z, 0.0),
    "sin": np.sin,
    "abs": np.abs,
    "softplus": lambda z: np.logaddexp(0.0, z),
}


@dataclass(frozen=True)
class Hyper:
    """The hyper-distribution databases are drawn from (``PRIOR``: in distribution; ``SHIFT``)."""

    tables: tuple[int, int] = (2, 5)
    features: tuple[int, int] = (3, 8)
    root_rows: tuple[int, int] = (50, 300)
    child_rows: tuple[int, int] = (100, 1000)
    activations: tuple[str, ...] = ("tanh", "relu", "sin", "abs")
    zipf: tuple[float, float] = (0.5, 1.5)
    deep_bias: float = 1.0  # weight multiplier per depth level of a candidate parent
    layers: tuple[int, int] = (2, 4)
    hidden: tuple[int, int] = (16, 32)
    noise: tuple[float, float] = (0.01, 0.1)
    time_probability: float = 0.5


PRIOR = Hyper()
SHIFT = Hyper(features=(6, 12), activations=("softplus", "sin", "relu"), zipf=(1.5, 2.5), deep_bias=2.0)


@dataclass
class Table:
    """One table: ``columns`` (features, float; categoricals hold integer codes), ``cat`` (the
    categorical names), foreign keys ``fks`` (parent -> row indices into it), an optional
    ``time`` per row, and ``hidden``: the SCM's causal outputs (never a column: task targets)."""

    name: str
    columns: dict[str, np.ndarray]
    cat: frozenset[str]
    fks: dict[str, np.ndarray] = field(default_factory=dict)
    time: np.ndarray | None = None
    hidden: np.ndarray | None = None  # (n, CAUSAL)

    @property
    def n(self) -> int:
        return len(next(iter(self.columns.values()))) if self.columns else len(self.hidden)


@dataclass
class Database:
    tables: dict[str, Table]  # topological order: parents first
    edges: list[tuple[str, str]]  # (parent, child)

    def parents(self, name: str) -> list[str]:
        return [p for p, c in self.edges if c == name]

    def children(self, name: str) -> list[str]:
        return [c for p, c in self.edges if p == name]


@dataclass
class RelationalTask:
    """A binary task on one entity table of a database. ``entities``: the target rows used;
    ``cutoff``: per-entity cutoff time (temporal tasks) or None; ``y`` in {0, 1}."""

    db: Database
    target: str
    kind: str  # hidden | temporal | child | single | package
    entities: np.ndarray
    y: np.ndarray
    cutoff: np.ndarray | None = None
    name: str = ""


# ----------------------------------------------------------------------------- schema


def depths(edges: list[tuple[str, str]], names: list[str]) -> dict[str, int]:
    """Longest path (in edges) from a root to each table; ``names`` in topological order."""
    depth = {n: 0 for n in names}
    for n in names:
        for p, c in edges:
            if c == n:
                depth[n] = max(depth[n], depth[p] + 1)
    return depth


def sample_schema(rng: np.random.Generator, hyper: Hyper) -> tuple[list[str], list[tuple[str, str]]]:
    """A random DAG on 2..5 tables, <= 2 parents per child, depth <= 3; table j's parents are
    drawn among tables < j, so the order is topological and the graph acyclic."""
    k = int(rng.integers(hyper.tables[0], hyper.tables[1] + 1))
    names = [f"t{j}" for j in range(k)]
    edges: list[tuple[str, str]] = []
    depth = {names[0]: 0}
    for j in range(1, k):
        allowed = [p for p in names[:j] if depth[p] < 3]
        w = np.array([hyper.deep_bias ** depth[p] for p in allowed], dtype=float)
        first = allowed[int(rng.choice(len(allowed), p=w / w.sum()))]
        parents = [first]
        rest = [p for p in allowed if p != first]
        if rest and rng.random() < 0.35:
            parents.append(rest[int(rng.integers(len(rest)))])
        edges += [(p, names[j]) for p in parents]
        depth[names[j]] = 1 + max(depth[p] for p in parents)
    return names, edges


# ----------------------------------------------------------------------------- SCM


class SCM:
    """A random MLP per table (2-4 layers, hidden 16-32, one activation, Gaussian noise per
    layer); hidden units of all layers form the pool features and causal outputs are read from."""

    def __init__(self, rng: np.random.Generator, hyper: Hyper, n_inputs: int, n_features: int) -> None:
        layers = int(rng.integers(hyper.layers[0], hyper.layers[1] + 1))
        width = int(rng.integers(hyper.hidden[0], hyper.hidden[1] + 1))
        self.activation = ACTIVATIONS[hyper.activations[int(rng.integers(len(hyper.activations)))]]
        self.noise = float(rng.uniform(*hyper.noise))
        sizes = [n_inputs] + [width] * layers
        self.weights = [rng.normal(0.0, 1.0 / np.sqrt(a), size=(a, b)).astype(np.float32)
                        for a, b in zip(sizes[:-1], sizes[1:])]
        self.biases = [rng.normal(0.0, 0.3, size=b).astype(np.float32) for b in sizes[1:]]
        pool = layers * width
        picks = rng.choice(pool, size=min(pool, n_features + CAUSAL + 1), replace=False)
        self.feature_units = picks[:n_features]
        self.causal_units = picks[n_features:n_features + CAUSAL]
        self.edge_unit = picks[-1]

    def __call__(self, inputs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        h, hidden = inputs.astype(np.float32), []
        for W, b in zip(self.weights, self.biases):
            noise = rng.standard_normal(size=(len(h), W.shape[1]), dtype=np.float32)
            h = self.activation(h @ W + b) + np.float32(self.noise) * noise
            hidden.append(h)
        return np.concatenate(hidden, axis=1).astype(np.float64)


def weighted_without_replacement(weights: np.ndarray, k: int, rng: np.random.Generator,
                                 eps: float = 1e-6) -> np.ndarray:
    """k distinct indices, drawn one after another with probability proportional to
    ``weights + eps`` among those left (Gumbel top-k: sorting log w + Gumbel noise)."""
    w = np.asarray(weights, dtype=float) + eps
    if np.any(w < 0) or k > np.count_nonzero(w > 0):
        raise ValueError(f"cannot draw {k} distinct items from {np.count_nonzero(w > 0)} positive weights")
    with np.errstate(divide="ignore"):
        keys = np.log(w) + rng.gumbel(size=len(w))
    return np.argsort(-keys, kind="stable")[:k]


def parent_choice(rng: np.random.Generator, n_parent: int, size: int, alpha: float | None) -> np.ndarray:
    """Each candidate's parent row: uniform, or Zipf(alpha) over a random popularity order."""
    if alpha is None:
        return rng.integers(n_parent, size=size)
    order = rng.permutation(n_parent)
    p = 1.0 / np.arange(1, n_parent + 1) ** alpha
    return order[rng.choice(n_parent, size=size, p=p / p.sum())]


def _minmax(x: np.ndarray) -> np.ndarray:
    span = x.max() - x.min()
    return (x - x.min()) / span if span > 0 else np.zeros_like(x)


def postprocess(raw: np.ndarray, n_categories: list[int], rng: np.random.Generator) -> np.ndarray:
    """4-sigma clipping, standardization, and quantile binning of the categorical columns
    (``n_categories[j] > 0``) into codes with a random class permutation [code]."""
    out = np.empty_like(raw)
    for j in range(raw.shape[1]):
        x = raw[:, j]
        mu, sd = x.mean(), x.std()
        x = np.clip(x, mu - 4 * sd, mu + 4 * sd)
        x = (x - x.mean()) / (x.std() + 1e-8)
        c = n_categories[j]
        if c > 0:
            edges = np.quantile(x, np.linspace(0, 1, c + 1)[1:-1])
            x = rng.permutation(c)[np.searchsorted(edges, x)].astype(float)
        out[:, j] = x
    return out


def sample_database(rng: np.random.Generator, hyper: Hyper = PRIOR, rows_scale: float = 1.0,
                    single: bool = False) -> Database:
    """One database from ``hyper`` (``single``: one table, no relations)."""
    names, edges = (["t0"], []) if single else sample_schema(rng, hyper)
    tables: dict[str, Table] = {}
    for name in names:
        parents = [p for p, c in edges if c == name]
        lo, hi = hyper.child_rows if parents else hyper.root_rows
        n = max(10, int(round(int(rng.integers(lo, hi + 1)) * rows_scale)))
        f = int(rng.integers(hyper.features[0], hyper.features[1] + 1))
        scm = SCM(rng, hyper, NOISE_CAUSES + CAUSAL * len(parents), f)
        m = n * CANDIDATE_RATIO if parents else n
        fks = {}
        inputs = [rng.standard_normal(size=(m, NOISE_CAUSES), dtype=np.float32)]
        for p in parents:
            alpha = None if rng.random() < 0.5 else float(rng.uniform(*hyper.zipf))
            fks[p] = parent_choice(rng, tables[p].n, m, alpha)
            inputs.append(tables[p].hidden[fks[p]])
        hidden = scm(np.concatenate(inputs, axis=1), rng)
        if parents:  # keep n of the r*n candidates, weights ~ min-max normalized edge score [code]
            keep = np.sort(weighted_without_replacement(_minmax(hidden[:, scm.edge_unit]), n, rng))
            hidden, fks = hidden[keep], {p: k[keep] for p, k in fks.items()}
        cats = [0 if j % 2 == 0 else int(rng.integers(2, 10)) for j in range(f)]
        values = postprocess(hidden[:, scm.feature_units], cats, rng)
        causal = hidden[:, scm.causal_units]
        causal = (causal - causal.mean(0)) / (causal.std(0) + 1e-8)
        columns = {f"x{j}": values[:, j] for j in range(f)}
        time = None
        if parents and rng.random() < hyper.time_probability:  # [recon]: a monotone map of an output
            source = hidden[:, scm.causal_units[0]]
            z = source + rng.normal(0.0, 0.5, size=n) * source.std()
            time = TIME_SPAN * (np.argsort(np.argsort(z, kind="stable"), kind="stable") + 0.5) / n
        categorical = frozenset(f"x{j}" for j in range(f) if cats[j])
        tables[name] = Table(name, columns, categorical, fks, time, causal)
    return Database(tables, edges)


# ----------------------------------------------------------------------------- tasks

WINDOW = 200.0  # temporal tasks: label on children in (tau, tau + WINDOW]


def _above_median(v: np.ndarray) -> np.ndarray:
    return (v > np.median(v)).astype(np.int64)


def task_kinds(db: Database) -> list[str]:
    """Which task types this database supports."""
    kinds = []
    if any(db.children(t) for t in db.tables):
        kinds.append("hidden")
    if any(db.tables[c].time is not None for _, c in db.edges):
        kinds.append("temporal")
    if db.edges:
        kinds.append("child")
    return kinds


def make_task(db: Database, rng: np.random.Generator, kind: str | None = None, min_entities: int = 10
              ) -> RelationalTask | None:
    """A binary task of type (i) hidden parent attribute, (ii) temporal aggregation or (iii)
    child-row attribute; a single table gives (single) a hidden attribute of its rows. None when
    the database supports no such task with both classes present."""
    if len(db.tables) == 1:
        kind, target = "single", "t0"
    else:
        kinds = task_kinds(db)
        if kind is None:
            kind = kinds[int(rng.integers(len(kinds)))]
        elif kind not in kinds:
            return None
        if kind == "hidden":
            options = [t for t in db.tables if db.children(t)]
        elif kind == "temporal":
            options = sorted({p for p, c in db.edges if db.tables[c].time is not None})
        else:
            options = [t for t in db.tables if db.parents(t)]
        target = options[int(rng.integers(len(options)))]
    table = db.tables[target]
    cutoff = None
    if kind == "temporal":
        timed = [c for c in db.children(target) if db.tables[c].time is not None]
        child = db.tables[timed[int(rng.integers(len(timed)))]]
        cutoff = rng.uniform(0.3, 0.7) * TIME_SPAN + rng.uniform(-50.0, 50.0, size=table.n)
        fk, t = child.fks[target], child.time
        window = (t > cutoff[fk]) & (t <= cutoff[fk] + WINDOW)
        if rng.random() < 0.5:
            value = np.bincount(fk[window], minlength=table.n).astype(float)
            entities = np.arange(table.n)
        else:  # mean of one float feature of the window's children; entities with an empty window drop
            col = [c for c in child.columns if c not in child.cat][0]
            s = np.bincount(fk[window], weights=child.columns[col][window], minlength=table.n)
            k = np.bincount(fk[window], minlength=table.n)
            entities = np.flatnonzero(k > 0)
            value = (s[entities] / k[entities])
        y = _above_median(value) if len(value) else np.zeros(0, dtype=np.int64)
    else:
        value = table.hidden[:, int(rng.integers(CAUSAL))]
        entities, y = np.arange(table.n), _above_median(value)
    if len(entities) < min_entities or y.min(initial=1) == y.max(initial=0):
        return None
    return RelationalTask(db, target, kind, entities, y, None if cutoff is None else cutoff[entities])


def sample_task(rng: np.random.Generator, hyper: Hyper = PRIOR, single: bool = False, rows_scale: float = 1.0,
                min_entities: int = 10, tries: int = 20, kind: str | None = None) -> RelationalTask:
    """Draw databases until one supports a task (of ``kind``, if given; every draw flows from ``rng``)."""
    for _ in range(tries):
        db = sample_database(rng, hyper, rows_scale, single=single)
        task = make_task(db, rng, kind=kind, min_entities=min_entities)
        if task is not None:
            return task
    raise RuntimeError(f"no task with >= {min_entities} entities in {tries} databases")


def with_extra_rows(db: Database, table: str, rows: dict[str, np.ndarray], fks: dict[str, np.ndarray],
                    time: np.ndarray | None) -> Database:
    """A copy of ``db`` with rows appended to one table (tests: poisoned future rows)."""
    t = db.tables[table]
    new = replace(t, columns={k: np.concatenate([v, rows[k]]) for k, v in t.columns.items()},
                  fks={k: np.concatenate([v, fks[k]]) for k, v in t.fks.items()},
                  time=None if t.time is None else np.concatenate([t.time, time]),
                  hidden=None if t.hidden is None else np.concatenate(
                      [t.hidden, np.zeros((len(time if time is not None else next(iter(rows.values()))),
                                           t.hidden.shape[1]))]))
    return Database({**db.tables, table: new}, list(db.edges))
