"""The knowledge-graph container shared by the synthetic generator and the pykeen loader.

A :class:`KG` stores typed entities and named relations as per-entity adjacency lists
(``out[e][r] -> sorted tail ids``). Inverse relations are added as traversable edges named
``"<r> (reverse)"``. A *user hop* is what a schema-unaware user calls one relation: a path
of one real relation, or of two through a mediator node, with its phrases (the canonical
name first, then paraphrases).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# Relation kinds (recorded per relation; agents never see them directly).
DIRECT, MEDIATOR_IN, MEDIATOR_OUT, NEAR_MISS, ATTRIBUTE, REVERSE = range(6)


@dataclass(frozen=True)
class UserHop:
    """One user-level relation: its real-relation path and the phrases a user may say."""

    path: tuple[int, ...]
    phrases: tuple[str, ...]
    head_type: int
    tail_type: int

    @property
    def mediated(self) -> bool:
        return len(self.path) > 1


@dataclass
class KG:
    name: str
    entity_names: list[str]
    entity_type: np.ndarray  # int, one type per entity
    type_names: list[str]
    relation_names: list[str]
    relation_kind: np.ndarray
    out: list[dict[int, np.ndarray]]
    user_hops: list[UserHop] = field(default_factory=list)
    mediator_type: int = -1  # type id of mediator nodes, -1 if none
    n_triples: int = 0  # forward triples (reverse edges not counted)
    near_miss_of: dict[int, int] = field(default_factory=dict)  # near miss -> user hop index
    _expand_cache: dict = field(default_factory=dict, repr=False)

    def __getstate__(self) -> dict:
        # the expansion memo is rebuilt on use; pickling it would triple a cached world's size
        return {**self.__dict__, "_expand_cache": {}}

    @property
    def n_entities(self) -> int:
        return len(self.entity_names)

    @property
    def n_relations(self) -> int:
        """Forward relations (reverse edges not counted)."""
        return int(np.sum(self.relation_kind != REVERSE))

    def expand(self, entities: tuple[int, ...]) -> dict[int, tuple[np.ndarray, float]]:
        """Relations leaving an entity set: ``r -> (sorted tails, fraction of heads having r)``.

        Cached on the (immutable) KG; sandboxes still charge every call to their budget.
        """
        cached = self._expand_cache.get(entities)
        if cached is not None:
            return cached
        tails: dict[int, list[np.ndarray]] = {}
        for e in entities:
            for r, t in self.out[e].items():
                tails.setdefault(r, []).append(t)
        n = max(1, len(entities))
        result = {
            r: (parts[0] if len(parts) == 1 else np.unique(np.concatenate(parts)), len(parts) / n)
            for r, parts in tails.items()
        }
        if len(self._expand_cache) > 200_000:
            self._expand_cache.clear()
        self._expand_cache[entities] = result
        return result

    def step_counts(self, counts: dict[int, float], relation: int) -> dict[int, float]:
        """Follow ``relation`` from weighted entities; weights add up path multiplicities."""
        new: dict[int, float] = {}
        for e, c in counts.items():
            tails = self.out[e].get(relation)
            if tails is None:
                continue
            for t in tails.tolist():
                new[t] = new.get(t, 0.0) + c
        return new

    def execute(self, start: tuple[int, ...], path: tuple[int, ...]) -> tuple[int, ...]:
        counts = {e: 1.0 for e in start}
        for r in path:
            counts = self.step_counts(counts, r)
        return tuple(sorted(counts))


def build_kg(
    name: str,
    entity_names: list[str],
    entity_type: np.ndarray,
    type_names: list[str],
    relation_names: list[str],
    relation_kind: list[int],
    triples: np.ndarray,
    add_reverse: bool = True,
) -> KG:
    """Assemble a :class:`KG` from (head, relation, tail) index triples."""
    names, kinds = list(relation_names), list(relation_kind)
    n_forward = len(names)
    triples = np.unique(np.asarray(triples, dtype=np.int64).reshape(-1, 3), axis=0)
    all_triples = [triples]
    if add_reverse:
        names += [f"{n} (reverse)" for n in relation_names]
        kinds += [REVERSE] * n_forward
        rev = triples[:, [2, 1, 0]].copy()
        rev[:, 1] += n_forward
        all_triples.append(rev)
    stacked = np.concatenate(all_triples)
    order = np.lexsort((stacked[:, 2], stacked[:, 1], stacked[:, 0]))
    stacked = stacked[order]
    out: list[dict[int, np.ndarray]] = [dict() for _ in entity_names]
    if len(stacked):
        keys = stacked[:, 0] * (len(names) + 1) + stacked[:, 1]
        boundaries = np.flatnonzero(np.diff(keys)) + 1
        for block in np.split(stacked, boundaries):
            out[int(block[0, 0])][int(block[0, 1])] = block[:, 2].copy()
    return KG(name=name, entity_names=list(entity_names), entity_type=np.asarray(entity_type),
              type_names=list(type_names), relation_names=names,
              relation_kind=np.asarray(kinds), out=out, n_triples=len(triples))
