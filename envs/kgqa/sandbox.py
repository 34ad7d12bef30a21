"""The per-question KG sandbox (the only way an agent touches the KG) and the world builder.

``KGSandbox`` exposes ``expand(state)`` (candidate relations with result counts; one KG call
the first time a state is expanded, cached after), ``traverse(state, relation)`` (one KG
call; re-traversing the same (state, relation) returns the cached state at no cost but is a
redundant transition), ``state(state)`` (entity set, depth, path, type counts; free) and
``answer(state | entities)``. Calls beyond ``call_budget`` raise :class:`KGCallRefused` and
are counted; training sandboxes also charge the trial's ``train_kg_calls`` budget.

Every state remembers the path multiplicity of its entities (number of distinct traversal
paths from the topic reaching each one): the submitted ranking orders entities by it (the
answered state's counts, or the sum over the whole history for an entity-set answer), ties
broken by a per-question seeded permutation.

A state also carries a *token pointer* [recon]: how many query tokens its path has used; a
hop uses the next token when its relation's similarity to it reaches ``min_token_sim`` (the
floor every gold hop's token meets by construction; a mediator's first hop does not).
Agents and the Env read it as "tokens left".
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from papergym import cache
from papergym.envs.kgqa.graph import KG, REVERSE
from papergym.envs.kgqa.pykeen_kg import PYKEEN_KGS, load_pykeen_kg
from papergym.envs.kgqa.questions import (
    PublicQuestion,
    Question,
    generate_questions,
    split_topics,
)
from papergym.envs.kgqa.similarity import SimilarityTable, similarity_table
from papergym.envs.kgqa.synth import synthetic_kg
from papergym.envs.kgqa.vault import WorldKey, world_of
from papergym.problem import Budget, BudgetExceeded

DEFAULT_THRESHOLD = {"ngram": 0.45, "minilm": 0.5}
DEFAULT_MIN_TOKEN_SIM = {"ngram": 0.2, "minilm": 0.3}


class KGCallRefused(BudgetExceeded):
    """A KG call beyond the question's call budget."""


@dataclass
class State:
    sid: int
    entities: tuple[int, ...]
    counts: dict[int, float]
    depth: int
    pointer: int
    path: tuple[int, ...]
    parent: int
    relation: int  # relation taken from the parent; -1 at the topic


@dataclass
class World:
    """One KG, its similarity table and the question splits of one trial seed."""

    kg: KG
    sim: SimilarityTable
    threshold: float
    token_threshold: float  # a hop uses a token at or above this similarity
    train: list[Question]
    valid: list[Question]
    test: list[Question]
    n_forward: int
    relation_sim_ids: np.ndarray = field(repr=False)

    def token_relation_sim(self, token: str, relations: list[int]) -> np.ndarray:
        return self.sim.matrix[self.sim.index[token], self.relation_sim_ids[relations]]

    def reverse_of(self, relation: int) -> int:
        return relation + self.n_forward if relation < self.n_forward else relation - self.n_forward


def build_kg_from_kwargs(kg: str, n_entities: int = 200, n_types: int = 8,
                         n_relations: int = 30, mediator_frac: float = 0.3,
                         near_miss_frac: float = 0.3, kg_seed: int = 0) -> KG:
    if kg == "synthetic":
        return synthetic_kg(int(n_entities), int(n_types), int(n_relations),
                            float(mediator_frac), float(near_miss_frac), int(kg_seed))
    if kg in PYKEEN_KGS:
        return load_pykeen_kg(kg)
    raise ValueError(f"unknown kg {kg!r}; choose synthetic or one of {PYKEEN_KGS}")


def world_entry(seed: int, **world_kwargs: Any) -> cache.Entry:
    """The cache entry of one seed's world (KG, similarity table, question splits)."""
    bound = inspect.signature(make_world).bind(int(seed), **world_kwargs)
    bound.apply_defaults()  # an argument left at its default names the same world as given
    return cache.Entry("kgqa/world", dict(bound.arguments),
                       build=lambda: make_world(*bound.args, **bound.kwargs),
                       code=(Path(__file__).parent,))


def build_world(seed: int, **world_kwargs: Any) -> World:
    """One seed's world, built once per (seed, arguments, code) by :mod:`papergym.cache`
    (the runner's prepare phase builds it before the trials; they only read it)."""
    return cache.get(world_entry(seed, **world_kwargs))


def make_world(seed: int, kg: str = "synthetic", n_entities: int = 200, n_types: int = 8,
                n_relations: int = 30, mediator_frac: float = 0.3,
                near_miss_frac: float = 0.3, kg_seed: int = 0, max_hops: int = 2,
                mismatch: float = 0.5, n_train: int = 150, n_valid: int = 25,
                n_test: int = 50, similarity: str = "ngram",
                match_threshold: float | None = None,
                min_token_sim: float | None = None, test_seed: int | None = None,
                exact_mismatch: bool = False) -> World:
    """The world of topic-split ``seed``. Test questions are drawn from the test topics with
    ``test_seed`` (default: ``seed``); the leaderboard Task passes a sealed one.
    ``exact_mismatch`` (v1): each split holds exactly ``round(mismatch * n)`` mismatch
    questions (see :func:`generate_questions`)."""
    base = _train_world(seed, kg, n_entities, n_types, n_relations, mediator_frac,
                        near_miss_frac, kg_seed, max_hops, mismatch, n_train, n_valid,
                        similarity, match_threshold, min_token_sim, bool(exact_mismatch))
    graph, sim = base.kg, base.sim
    test_t = split_topics(graph, seed, TOPIC_FRACTIONS)[2]
    test = generate_questions(graph, sim, test_t, int(n_test), qid_offset=TEST_QID_OFFSET,
                              max_hops=int(max_hops), mismatch=float(mismatch),
                              seed=seed if test_seed is None else int(test_seed),
                              threshold=base.threshold, min_token_sim=base.token_threshold,
                              exact_mismatch=bool(exact_mismatch))
    return replace(base, test=test)


TOPIC_FRACTIONS = (0.6, 0.15, 0.25)
TEST_QID_OFFSET = 2 * 10**6  # qids of test questions; train < 10**6 <= valid < 2 * 10**6


@lru_cache(maxsize=8)
def _train_world(seed: int, kg: str, n_entities: int, n_types: int, n_relations: int,
                 mediator_frac: float, near_miss_frac: float, kg_seed: int, max_hops: int,
                 mismatch: float, n_train: int, n_valid: int, similarity: str,
                 match_threshold: float | None, min_token_sim: float | None,
                 exact_mismatch: bool = False) -> World:
    """KG, similarity table, train and valid questions: everything but the test split."""
    graph = build_kg_from_kwargs(kg, n_entities, n_types, n_relations, mediator_frac,
                                 near_miss_frac, kg_seed)
    vocabulary = sorted(set(graph.relation_names) |
                        {p for h in graph.user_hops for p in h.phrases})
    sim = similarity_table(vocabulary, similarity)
    threshold = DEFAULT_THRESHOLD[similarity] if match_threshold is None else match_threshold
    train_t, valid_t, _ = split_topics(graph, seed, TOPIC_FRACTIONS)
    floor = DEFAULT_MIN_TOKEN_SIM[similarity] if min_token_sim is None else min_token_sim
    gen = dict(max_hops=int(max_hops), mismatch=float(mismatch), seed=seed,
               threshold=threshold, min_token_sim=float(floor), exact_mismatch=exact_mismatch)
    train = generate_questions(graph, sim, train_t, int(n_train), qid_offset=0, **gen)
    valid = generate_questions(graph, sim, valid_t, int(n_valid), qid_offset=10**6, **gen)
    n_forward = int(np.sum(graph.relation_kind != REVERSE))
    return World(graph, sim, threshold, float(floor), train, valid, [], n_forward,
                 sim.ids(graph.relation_names))


class KGSandbox:
    """One question's metered view of the KG. States are ints (0 = the topic).

    The world and the KG are private (an isolated agent's proxy refuses private names): an
    agent reaches the KG only through the metered calls, and the similarity backend through
    :meth:`token_relation_sim`. ``typed=False`` hides the question's expected answer type
    (``answer_type = -1`` in the public question; v1's untyped cells)."""

    def __init__(self, world: World, question: Question | PublicQuestion, call_budget: int,
                 meter: Budget | None = None, meter_name: str = "train_kg_calls",
                 typed: bool = True) -> None:
        self._key = WorldKey(world)  # the world itself stays in the vault
        public = question.public() if isinstance(question, Question) else question
        self.question = public if typed else replace(public, answer_type=-1)
        self.call_budget = int(call_budget)
        self.meter, self.meter_name = meter, meter_name
        self.calls = 0
        self.refused = 0
        self.redundant = 0
        self.backjumps = 0
        self.states: list[State] = [State(0, (question.topic,), {question.topic: 1.0}, 0, 0,
                                          (), -1, -1)]
        self.current = 0
        self._children: dict[tuple[int, int], int] = {}
        self._expanded: dict[int, list[tuple[int, int, float]]] = {}
        self.submitted: list[int] | None = None
        self._seed = question.seed  # tie-break permutation, drawn when an answer is ranked

    # ------------------------------------------------------------------ metering
    def _w(self) -> World:
        """The world, looked up in the vault per call (no attribute holds it)."""
        return world_of(self._key)

    @property
    def calls_left(self) -> int:
        return self.call_budget - self.calls

    def _charge(self, what: str) -> None:
        if self.calls + 1 > self.call_budget:
            self.refused += 1
            raise KGCallRefused(f"KG call budget exhausted: {what} refused after "
                                f"{self.calls} of {self.call_budget} calls")
        if self.meter is not None:
            self.meter.spend(self.meter_name, 1)
        self.calls += 1

    @property
    def match_threshold(self) -> float:
        """The similarity at which a relation matches a token (the backend's threshold)."""
        return self._w().threshold

    def token_relation_sim(self, token: str, relations: list[int]) -> np.ndarray:
        """Similarity of a query token to relations (by id): the backend's, free."""
        return self._w().token_relation_sim(token, relations)

    # ------------------------------------------------------------------ KG calls
    def relation_id(self, relation: str | int) -> int:
        if isinstance(relation, (int, np.integer)):
            return int(relation)
        try:
            return self._w().kg.relation_names.index(relation)
        except ValueError:
            raise ValueError(f"unknown relation {relation!r}") from None

    def expand_ids(self, sid: int) -> list[tuple[int, int, float]]:
        """Candidates of a state as (relation id, result size, fraction of heads having it)."""
        if sid not in self._expanded:
            self._charge(f"expand({sid})")
            options = self._w().kg.expand(self.states[sid].entities)
            self._expanded[sid] = [(r, len(t), f) for r, (t, f) in sorted(options.items())]
        return self._expanded[sid]

    def expand(self, sid: int) -> list[tuple[str, int]]:
        """Candidate relations leaving ``sid`` with the number of entities each reaches."""
        return [(self._w().kg.relation_names[r], n) for r, n, _ in self.expand_ids(sid)]

    def is_expanded(self, sid: int) -> bool:
        return sid in self._expanded

    def traverse(self, sid: int, relation: str | int) -> int:
        """Follow ``relation`` from state ``sid``; returns the new state's id."""
        r = self.relation_id(relation)
        if not 0 <= sid < len(self.states):
            raise ValueError(f"unknown state {sid}")
        parent = self.states[sid]
        if sid != self.current:
            self.backjumps += 1
        key = (sid, r)
        if key in self._children:
            self.redundant += 1
            self.current = self._children[key]
            return self.current
        self._charge(f"traverse({sid}, {self._w().kg.relation_names[r]!r})")
        if parent.relation >= 0 and self._w().reverse_of(parent.relation) == r:
            self.redundant += 1  # immediate return along the reverse relation
        counts = self._w().kg.step_counts(parent.counts, r)
        pointer = parent.pointer
        tokens = self.question.tokens
        if pointer < len(tokens) and \
                self._w().token_relation_sim(tokens[pointer], [r])[0] >= self._w().token_threshold:
            pointer += 1
        state = State(len(self.states), tuple(sorted(counts)), counts, parent.depth + 1,
                      pointer, parent.path + (r,), sid, r)
        self.states.append(state)
        self._children[key] = state.sid
        self.current = state.sid
        return state.sid

    def jump(self, sid: int) -> None:
        """Make an earlier state current (no KG call); a non-local move counts as a backjump."""
        if sid != self.current:
            self.backjumps += 1
        self.current = sid

    def state(self, sid: int) -> dict[str, Any]:
        s = self.states[sid]
        types = self._w().kg.entity_type[list(s.entities)] if s.entities else np.array([], int)
        return {"entities": s.entities, "depth": s.depth, "pointer": s.pointer,
                "path": tuple(self._w().kg.relation_names[r] for r in s.path),
                "type_counts": dict(zip(*np.unique(types, return_counts=True))),
                "parent": s.parent}

    # ------------------------------------------------------------------ answering
    def answer(self, state: int | None = None, entities: Any = None) -> list[int]:
        """Submit a state's entity set (ranked by its path counts) or an entity set (ranked
        by path counts summed over the history). A second answer replaces the first."""
        if state is not None:
            counts = self.states[state].counts
        else:
            wanted = {int(e) for e in (entities or ())}
            counts = {e: 0.0 for e in wanted}
            for s in self.states:
                for e, c in s.counts.items():
                    if e in wanted:
                        counts[e] += c
        perm = np.random.default_rng(self._seed).permutation(self._w().kg.n_entities)
        self.submitted = sorted(counts, key=lambda e: (-counts[e], perm[e]))
        return self.submitted

    def visited_paths(self) -> set[tuple[int, ...]]:
        return {s.path for s in self.states}


def score_answer(question: Question, sandbox: KGSandbox) -> dict[str, float]:
    """Per-question metrics computed by the problem from the sandbox's record."""
    ranking = sandbox.submitted or []
    gold = set(question.gold_answers)
    submitted = set(ranking)
    hits = float(bool(ranking) and ranking[0] in gold)
    overlap = len(gold & submitted)
    f1 = 0.0 if overlap == 0 else 2 * overlap / (len(gold) + len(submitted))
    mismatch = question.mismatch != "none"
    met = float(mismatch and question.literal_path in sandbox.visited_paths())
    return {"hits1": hits, "f1": f1, "exact_match": float(submitted == gold),
            "kg_calls": float(sandbox.calls), "refused_calls": float(sandbox.refused),
            "redundant": float(sandbox.redundant), "backjumps": float(sandbox.backjumps),
            "dead_end_met": met, "recovered": float(met and hits)}
