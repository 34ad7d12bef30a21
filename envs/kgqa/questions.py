"""Question generation with a controllable query-path / schema mismatch [recon].

A question is a topic entity plus one *token* per user hop (a relation phrase: the
canonical name or a paraphrase), an expected answer type (the question's constraint, e.g.
"which city"), the gold path of real relations, and the gold answer set (1-20 entities).

The *literal follower* models a schema-unaware agent: from the topic, for each token in
turn it takes the relation with the highest similarity to the token among the relations
leaving the current set (ties by relation index). It **dead-ends** at depth k when no
relation reaches ``match_threshold`` (no-match), or at depth L when, all tokens used, the
reached set has no entity of the expected type (type check). A question is

- ``none`` (matched): the literal follower reproduces the gold answers;
- a mismatch question otherwise, provided the literal follower dead-ends (questions where it
  silently returns a wrong set are resampled), of one type: ``mediator`` (the user hop where
  the literal path leaves the gold path is realized through a mediator; on pykeen KGs a real
  2-hop path presented as one token paraphrasing its second relation), ``delayed`` (the wrong
  relation is taken before the last hop, yields a non-empty set, and the dead end shows only
  further down), ``alias`` (every other mismatch: no relation matches a paraphrase, or the
  last hop's nearest relation leads to the wrong type).

Recoverable wording [recon]: every token must reach ``min_token_sim`` similarity to the
name of its hop's (last) relation, so a mismatch is a wording or schema gap a similarity-
driven agent can still bridge (the paraphrase is recognizably about the relation, just not
the nearest name at the frontier); questions no similarity could link are resampled.

With probability ``mismatch`` a question targets a mismatch type (uniform over the three);
up to ``max_tries`` draws look for that type, then any mismatch type is accepted, then a
matched question. With ``exact_mismatch`` (v1) exactly ``round(mismatch * n)`` questions of
a split are mismatch questions (their positions a seeded permutation) and a mismatch target
never falls back to a matched question, so every trial of a tier holds the same number of
matched and mismatched questions whatever the (sealed) seed. Stored per question: gold
path, gold answers, mismatch type, the depth of the wrong choice and the depth at which the
literal path dead-ends. Splits are by topic entity (no topic in two splits).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from papergym.envs.kgqa.graph import KG, UserHop
from papergym.envs.kgqa.similarity import SimilarityTable

MISMATCH_TYPES = ("mediator", "alias", "delayed")
MAX_ANSWERS = 20


@dataclass(frozen=True)
class Question:
    qid: int
    topic: int
    tokens: tuple[str, ...]
    answer_type: int
    gold_path: tuple[int, ...]
    gold_answers: tuple[int, ...]
    mismatch: str  # "none" | "mediator" | "alias" | "delayed"
    wrong_depth: int  # -1 for matched questions
    dead_end_depth: int  # -1 for matched questions
    literal_path: tuple[int, ...]  # relations the literal follower took before stopping
    seed: int  # per-question seed (Hits@1 tie-break permutation)

    def public(self) -> PublicQuestion:
        return PublicQuestion(self.qid, self.topic, self.tokens, self.answer_type, self.seed)


@dataclass(frozen=True)
class PublicQuestion:
    """What an agent sees of a test question: no gold path, no answers."""

    qid: int
    topic: int
    tokens: tuple[str, ...]
    answer_type: int
    seed: int


@dataclass(frozen=True)
class LiteralTrace:
    relations: tuple[int, ...]
    answers: tuple[int, ...]
    dead_end_depth: int  # -1 if it completes


def literal_follow(kg: KG, sim: SimilarityTable, topic: int, tokens: tuple[str, ...],
                   answer_type: int, threshold: float) -> LiteralTrace:
    frontier: tuple[int, ...] = (topic,)
    taken: list[int] = []
    for depth, token in enumerate(tokens):
        options = kg.expand(frontier)
        if not options:
            return LiteralTrace(tuple(taken), frontier, depth)
        rels = sorted(options)
        row = sim.matrix[sim.index[token], sim.ids([kg.relation_names[r] for r in rels])]
        best = int(np.argmax(row))
        if row[best] < threshold:
            return LiteralTrace(tuple(taken), frontier, depth)
        taken.append(rels[best])
        frontier = tuple(options[rels[best]][0].tolist())
    if not np.any(kg.entity_type[list(frontier)] == answer_type):
        return LiteralTrace(tuple(taken), frontier, len(tokens))
    return LiteralTrace(tuple(taken), frontier, -1)


def _available_hops(kg: KG, frontier: tuple[int, ...], rng: np.random.Generator,
                    emulate_mediator: bool) -> list[UserHop]:
    options = kg.expand(frontier)
    hops = [h for h in kg.user_hops if h.path[0] in options]
    if emulate_mediator and options:
        # pykeen: a real 2-hop path (r1, r2) said as one token paraphrasing r2.
        r1 = int(rng.choice(sorted(r for r in options if r < len(kg.user_hops))))
        second = kg.expand(tuple(options[r1][0].tolist()))
        firsts = [h for h in kg.user_hops if h.path[0] in second]
        if firsts:
            h2 = firsts[int(rng.integers(len(firsts)))]
            hops = [UserHop(path=(r1, h2.path[0]), phrases=h2.phrases[1:] or h2.phrases,
                            head_type=0, tail_type=0)]
    return hops


def _draw(kg: KG, sim: SimilarityTable, topics: np.ndarray, max_hops: int,
          rng: np.random.Generator, target: str, threshold: float,
          min_token_sim: float) -> dict | None:
    topic = int(rng.choice(topics))
    n_hops = int(rng.integers(1, max_hops + 1))
    synthetic = kg.mediator_type >= 0
    mediator_hop = int(rng.integers(n_hops)) if target == "mediator" else -1
    frontier: tuple[int, ...] = (topic,)
    path: list[int] = []
    tokens: list[str] = []
    hops_used: list[UserHop] = []
    for h in range(n_hops):
        emulate = (not synthetic) and h == mediator_hop
        hops = _available_hops(kg, frontier, rng, emulate)
        if synthetic and target != "none":
            wanted = [u for u in hops if u.mediated == (h == mediator_hop)]
            hops = wanted or hops
        elif synthetic:
            hops = [u for u in hops if not u.mediated] or hops
        if not hops:
            return None
        hop = hops[int(rng.integers(len(hops)))]
        frontier = kg.execute(frontier, hop.path)
        if not frontier:
            return None
        path.extend(hop.path)
        hops_used.append(hop)
        # Matched targets mostly say the canonical name; mismatch targets mostly paraphrase.
        p_canonical = 0.7 if target == "none" else 0.3
        phrases = hop.phrases
        token = phrases[0] if (rng.random() < p_canonical or len(phrases) == 1) else \
            phrases[int(rng.integers(1, len(phrases)))]
        tokens.append(token)
    if not 1 <= len(frontier) <= MAX_ANSWERS or frontier == (topic,):
        return None
    # Recoverable wording: each token is still recognizably about its hop's named relation.
    for hop, token in zip(hops_used, tokens):
        named = kg.relation_names[hop.path[-1]]
        if sim.matrix[sim.index[token], sim.index[named]] < min_token_sim:
            return None
    answer_type = int(kg.entity_type[frontier[0]])
    trace = literal_follow(kg, sim, topic, tuple(tokens), answer_type, threshold)
    if trace.dead_end_depth < 0:
        if trace.answers != frontier:
            return None  # silent wrong answer: neither clean nor an observable dead end
        kind, wrong = "none", -1
    else:
        # Hop index where the literal path leaves the gold path.
        wrong = next((i for i, (hop, r) in enumerate(zip(hops_used, trace.relations))
                      if hop.path[0] != r or hop.mediated), len(trace.relations))
        if wrong < len(hops_used) and hops_used[wrong].mediated:
            kind = "mediator"
        elif trace.dead_end_depth > wrong and wrong < len(tokens) - 1:
            kind = "delayed"
        else:
            kind = "alias"
    return dict(topic=topic, tokens=tuple(tokens), answer_type=answer_type,
                gold_path=tuple(path), gold_answers=frontier, mismatch=kind,
                wrong_depth=wrong, dead_end_depth=trace.dead_end_depth,
                literal_path=trace.relations)


def split_topics(kg: KG, seed: int, fractions: tuple[float, float, float]) -> list[np.ndarray]:
    """Disjoint topic pools (train / valid / test) among entities that start a user hop."""
    starts = np.array([e for e in range(kg.n_entities)
                       if kg.entity_type[e] != kg.mediator_type
                       and any(h.path[0] in kg.out[e] for h in kg.user_hops)])
    rng = np.random.default_rng([11, seed])
    order = rng.permutation(starts)
    cuts = (np.cumsum(fractions)[:-1] * len(order)).astype(int)
    return list(np.split(order, cuts))


def generate_questions(kg: KG, sim: SimilarityTable, topics: np.ndarray, n: int,
                       max_hops: int, mismatch: float, seed: int, threshold: float,
                       min_token_sim: float = 0.0, qid_offset: int = 0,
                       max_tries: int = 60, exact_mismatch: bool = False) -> list[Question]:
    rng = np.random.default_rng([13, seed, qid_offset])
    out: list[Question] = []
    if exact_mismatch:
        flags = np.zeros(n, dtype=bool)
        flags[:int(round(mismatch * n))] = True
        flags = rng.permutation(flags)
    while len(out) < n:
        mismatched = flags[len(out)] if exact_mismatch else rng.random() < mismatch
        target = (MISMATCH_TYPES[int(rng.integers(len(MISMATCH_TYPES)))] if mismatched
                  else "none")
        found = None
        tries = (40 if exact_mismatch and target != "none" else 4) * max_tries
        for attempt in range(tries):
            fallback = "any" if attempt < 3 * max_tries or exact_mismatch else "none"
            want = target if attempt < max_tries else fallback
            draw = _draw(kg, sim, topics, max_hops, rng,
                         target if want != "none" else "none", threshold, min_token_sim)
            if draw is None:
                continue
            ok = (draw["mismatch"] == want or
                  (want == "any" and draw["mismatch"] != "none"))
            if ok:
                found = draw
                break
        if found is None:
            raise RuntimeError(f"could not draw a {target!r} question on {kg.name} after "
                               f"{tries} tries")
        qid = qid_offset + len(out)
        out.append(Question(qid=qid, seed=int(rng.integers(2**31)), **found))
    return out
