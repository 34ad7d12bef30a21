"""Seeded synthetic typed KG with mediator (CVT-like) nodes and near-miss relations [recon].

Recipe (spec: envs/kgqa, "Synthetic typed KG"): ``n_types`` entity types with Zipf
popularity share ``n_entities``. User-level relations ``r: type -> type`` take their names
from :data:`RELATION_PHRASES`; each head gets a Poisson(1.5) number of tails. A fraction
``mediator_frac`` of user relations is realized only through a mediator node
``A -[noun]-> m -[name]-> B`` (the mediator type has no direct edge between A's and B's
types; the mediator also carries 1-2 distractor attribute edges). A fraction
``near_miss_frac`` gets a distractor relation ``head type -> wrong type`` whose name is a
modifier plus one of the target's phrases (it shares words with the target). Reverse edges
are added for every relation.

Relation count [recon]: ``n_relations`` is the total number of forward relation names; half
are user relations (capped by the 60-phrase table), the rest are mediator first hops,
near misses and 4 attribute relations, so the realized total is about ``1.6 x half + 4``
(smoke 30 -> 28, standard 120 -> 100).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from papergym.envs.kgqa.graph import (
    ATTRIBUTE,
    DIRECT,
    KG,
    MEDIATOR_IN,
    MEDIATOR_OUT,
    NEAR_MISS,
    UserHop,
    build_kg,
)
from papergym.envs.kgqa.phrases import (
    ATTRIBUTE_RELATIONS,
    MEDIATOR_NOUNS,
    NEAR_MISS_MODIFIERS,
    RELATION_PHRASES,
)


@lru_cache(maxsize=8)
def synthetic_kg(n_entities: int = 200, n_types: int = 8, n_relations: int = 30,
                 mediator_frac: float = 0.3, near_miss_frac: float = 0.3,
                 kg_seed: int = 0) -> KG:
    rng = np.random.default_rng([7_013, kg_seed])
    popularity = 1.0 / np.arange(1, n_types + 1)
    popularity /= popularity.sum()
    # At least 3 entities per type, the rest by Zipf popularity.
    counts = 3 + rng.multinomial(n_entities - 3 * n_types, popularity)
    entity_type = np.repeat(np.arange(n_types), counts)
    by_type = [np.flatnonzero(entity_type == t) for t in range(n_types)]
    n_user = max(2, min(len(RELATION_PHRASES), n_relations // 2))
    phrase_ids = rng.permutation(len(RELATION_PHRASES))[:n_user]
    n_mediated = int(round(mediator_frac * n_user))
    n_near = int(round(near_miss_frac * n_user))
    mediated = set(rng.permutation(n_user)[:n_mediated].tolist())
    near = set(rng.permutation(n_user)[:n_near].tolist())

    names: list[str] = []
    kinds: list[int] = []
    triples: list[tuple[int, int, int]] = []
    n_ent = n_entities
    mediator_type = n_types
    extra_types: list[int] = []

    def new_relation(name: str, kind: int) -> int:
        names.append(name)
        kinds.append(kind)
        return len(names) - 1

    attribute_ids = [new_relation(a, ATTRIBUTE) for a in ATTRIBUTE_RELATIONS]
    hops: list[UserHop] = []
    near_miss_of: dict[int, int] = {}  # near-miss relation -> index of the user hop it mimics
    for u, pid in enumerate(phrase_ids.tolist()):
        phrases = RELATION_PHRASES[pid]
        head_t, tail_t = (int(x) for x in rng.choice(n_types, size=2, p=popularity))
        heads, tails = by_type[head_t], by_type[tail_t]
        if u in mediated:
            noun = MEDIATOR_NOUNS[int(rng.integers(len(MEDIATOR_NOUNS)))]
            r_in = new_relation(f"{noun} {u}", MEDIATOR_IN)
            r_out = new_relation(phrases[0], MEDIATOR_OUT)
            for h in heads.tolist():
                for _ in range(int(rng.poisson(1.5))):
                    m = n_ent
                    n_ent += 1
                    extra_types.append(mediator_type)
                    triples.append((h, r_in, m))
                    triples.append((m, r_out, int(rng.choice(tails))))
                    for a in rng.choice(attribute_ids, size=int(rng.integers(1, 3)),
                                        replace=False).tolist():
                        triples.append((m, a, int(rng.integers(n_entities))))
            path = (r_in, r_out)
        else:
            r = new_relation(phrases[0], DIRECT)
            for h in heads.tolist():
                for t in rng.choice(tails, size=int(rng.poisson(1.5))).tolist():
                    triples.append((h, r, int(t)))
            path = (r,)
        hops.append(UserHop(path=path, phrases=tuple(phrases), head_type=head_t,
                            tail_type=tail_t))
        if u in near:
            wrong_types = [t for t in range(n_types) if t != tail_t]
            wrong_t = int(rng.choice(wrong_types))
            modifier = NEAR_MISS_MODIFIERS[int(rng.integers(len(NEAR_MISS_MODIFIERS)))]
            shared = phrases[int(rng.integers(len(phrases)))]
            r_near = new_relation(f"{modifier} {shared}", NEAR_MISS)
            near_miss_of[r_near] = u
            for h in heads.tolist():
                for t in rng.choice(by_type[wrong_t], size=int(rng.poisson(1.0))).tolist():
                    triples.append((h, r_near, int(t)))

    all_types = np.concatenate([entity_type, np.array(extra_types, dtype=np.int64)])
    entity_names = [f"e{i}" for i in range(n_entities)] + [
        f"m{i}" for i in range(n_ent - n_entities)]
    type_names = [f"type{t}" for t in range(n_types)] + ["mediator"]
    kg = build_kg("synthetic", entity_names, all_types, type_names, names, kinds,
                  np.array(triples, dtype=np.int64))
    kg.user_hops = hops
    kg.mediator_type = mediator_type
    kg.near_miss_of = near_miss_of
    return kg
