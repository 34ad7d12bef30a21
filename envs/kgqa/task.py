"""``papergym/KGQA-v0``: the leaderboard task scoring question-answering routines."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np

from papergym import cache
from papergym.envs.kgqa.backjump import BackjumpEpisode, EpisodeBatch, check_action
from papergym.envs.kgqa.questions import MISMATCH_TYPES, PublicQuestion, Question
from papergym.envs.kgqa.sandbox import (
    TEST_QID_OFFSET,
    KGCallRefused,
    KGSandbox,
    World,
    build_world,
    score_answer,
    world_entry,
)
from papergym.envs.kgqa.vault import WorldKey, world_of
from papergym.problem import Budget, EvalResult, MetricDeclaration, Task, sealed_seed

WORLD_KWARGS = ("kg", "n_entities", "n_types", "n_relations", "mediator_frac",
                "near_miss_frac", "kg_seed", "max_hops", "mismatch", "n_train", "n_valid",
                "n_test", "similarity", "match_threshold", "min_token_sim", "exact_mismatch")
GROUPS = ("none", *MISMATCH_TYPES)


def run_policy(world: World, sandbox: KGSandbox, question: Question,
               policy: Callable[[dict], Any], allow_backjump: bool = True,
               mask_redundant: bool = False) -> BackjumpEpisode:
    """Drive one question's sandbox with an observation -> action policy (the Env's rules)."""
    if hasattr(policy, "reset"):
        policy.reset()
    episode = BackjumpEpisode(world, sandbox, question, allow_backjump=allow_backjump,
                              mask_redundant=mask_redundant)
    obs = episode.observation()
    while not episode.done:
        episode.step(check_action(policy(obs)))
        if not episode.done:
            obs = episode.observation()
    return episode


class KGQAView:
    """What an agent may use: train / valid questions with gold, metered sandboxes, similarity.

    ``sandbox(question)`` opens a sandbox on a train or valid question (its KG calls also
    spend the trial's ``train_kg_calls``); ``episode(question)`` wraps one in the Env's
    four-operation machine. The view holds a world without a test split: test questions
    (drawn with the sealed eval salt) are built by ``evaluate`` only. ``typed=False`` (v1's
    untyped cells): every question it hands out has ``answer_type = -1``.
    """

    def __init__(self, world: World, budget: Budget, seed: int, call_budget: int,
                 f1_bonus: bool, typed: bool = True, mask_redundant: bool = False) -> None:
        self._key = WorldKey(replace(world, test=[]))  # the KG stays out of the view
        self.budget, self.seed = budget, seed
        self.call_budget, self.f1_bonus = call_budget, f1_bonus
        self.typed, self.mask_redundant = typed, mask_redundant
        hide = (lambda qs: qs) if typed else (
            lambda qs: [replace(q, answer_type=-1) for q in qs])
        self._train, self._valid = hide(self._w().train), hide(self._w().valid)

    def _w(self) -> World:
        """The world, looked up in the vault per call (no attribute holds it)."""
        return world_of(self._key)

    @property
    def train(self) -> list[Question]:
        return self._train

    @property
    def valid(self) -> list[Question]:
        return self._valid

    @property
    def relation_names(self) -> list[str]:
        return self._w().kg.relation_names

    @property
    def match_threshold(self) -> float:
        return self._w().threshold

    def similarity(self, a: str, b: str) -> float:
        return self._w().sim(a, b)

    def token_relation_sim(self, token: str, relations: list[int]) -> np.ndarray:
        return self._w().token_relation_sim(token, relations)

    def phrase_vector(self, text: str) -> np.ndarray:
        """The similarity backend's embedding of a phrase of the KG vocabulary."""
        return self._w().sim.vectors[self._w().sim.index[text]]

    def phrase_vectors(self) -> dict[str, np.ndarray]:
        """Every phrase of the KG vocabulary (relation names and question phrases) with its
        embedding: a copy an artifact may keep (the view closes when ``solve`` returns)."""
        sim = self._w().sim
        return {text: np.array(sim.vectors[i]) for text, i in sim.index.items()}

    def entity_types(self, entities: Any) -> np.ndarray:
        return self._w().kg.entity_type[np.asarray(list(entities), dtype=np.int64)]

    def sandbox(self, question: Question) -> KGSandbox:
        if question.qid >= TEST_QID_OFFSET:
            raise PermissionError("test questions are not part of the training view")
        return KGSandbox(self._w(), question, self.call_budget, meter=self.budget,
                         typed=self.typed)

    def episodes(self, questions: list[Question]) -> EpisodeBatch:
        """Episodes on several train / valid questions stepped in lockstep (one call per step
        for all; see :class:`EpisodeBatch`)."""
        return EpisodeBatch([self.episode(q) for q in questions])

    def episode(self, question: Question, allow_backjump: bool = True) -> BackjumpEpisode:
        return BackjumpEpisode(self._w(), self.sandbox(question), question,
                               f1_bonus=self.f1_bonus, allow_backjump=allow_backjump,
                               mask_redundant=self.mask_redundant)


class KGQATask(Task):
    """
    ## Description
    Knowledge-graph question answering under a KG-call budget, where the relation path a
    question implies may not match the KG schema (LLM-free, offline analogue of the problem of
    Backjump-on-Graph, Zhang et al., ICML 2026). Each test question gets its own sandbox
    (``expand`` / ``traverse`` / ``answer``; calls beyond ``call_budget`` are refused).

    ## Data
    ``train_view(seed)``: :class:`KGQAView` with train and valid questions (topic, tokens,
    expected answer type, gold path, gold answers, mismatch type) and metered sandboxes on
    them; KGs: a seeded synthetic typed KG with mediators and near misses, or Nations /
    Kinships / UMLS read from the installed pykeen wheel. Test questions (disjoint topics) are
    used only by ``evaluate``.

    ## Artifact
    Either a routine with ``answer(question: PublicQuestion, sandbox: KGSandbox)`` that calls
    ``sandbox.answer(...)`` (a refused call ends it; no answer = empty answer), or a policy
    ``obs -> action`` for ``KGBackjump-v0``'s observation, run by the Env's episode machine on
    each test sandbox. A routine with ``privileged = True`` (the oracle reference) receives the
    full question including the gold path.

    ## Metrics
    Per question, averaged: ``hits1`` (the top-ranked submitted entity is gold; ranking by
    path multiplicity in the agent's own history, ties by a per-question seeded permutation),
    ``f1``, ``exact_match``, ``kg_calls``, ``redundant`` (redundant transitions), ``backjumps``
    (non-local moves); ``dead_end_recovery`` (mismatch questions whose literal dead-end state
    the agent visited and still answered correctly); ``hits1_<type>`` for ``none`` (matched),
    ``mediator``, ``alias``, ``delayed``, and ``hits1_mismatch``. Units: one row per test
    question (``instance`` = question id) with ``hits1``, ``f1``, ``redundant``, ``kg_calls``
    and ``hits1_matched`` or ``hits1_mismatch``. A metric of an empty group is omitted.

    ## Episode End
    A routine ends when it returns, answers, or a KG call is refused.

    ## Arguments
    World: ``kg``, ``n_entities``, ``n_types``, ``n_relations``, ``mediator_frac``,
    ``near_miss_frac``, ``kg_seed``, ``max_hops``, ``mismatch``, ``n_train``, ``n_valid``,
    ``n_test``, ``similarity`` (ngram | minilm), ``match_threshold``, ``min_token_sim``;
    ``call_budget`` (KG calls
    per question); ``train_kg_calls`` (KG calls for the whole of training); ``f1_bonus``.

    ## Tiers
    smoke: synthetic 200 entities / 8 types / 30 relation names or Nations; 150/25/50
    questions; L <= 2; mismatch 0.5; budget 10. standard: synthetic 5,000 entities / 20 types /
    120 names, UMLS, Kinships; L <= 3; mismatch in {0, 0.3, 0.6}; budget 20 (question counts
    scaled down in the benchmark spec). full: WebQSP / CWQ / GrailQA with an LLM policy,
    interface only (not run).

    ## Reference
    Zhang et al., "Backjump-on-Graph: Empowering LLMs with Reinforced Retrospective
    Exploration for Agentic KG Reasoning", ICML 2026 (PMLR 306). Baselines: ToG (Sun et al.,
    ICLR 2024), RoG (Luo et al., ICLR 2024). Everything beyond the abstract is reconstructed.

    ## Version History
    - v0: initial release. Superseded by ``KGQA-v1`` (:class:`KGQATaskV1`): its policies may
      BACKJUMP to exhausted entries until the step cap, every question carries its expected
      answer type (a perfect plausible-answer verifier), and the mismatch share of a split is
      random, so per-question claim units did not line up across sealed draws.
    """

    id: ClassVar[str] = "papergym/KGQA-v0"
    family: ClassVar[str] = "kgqa"
    paper: ClassVar[str] = "zhang2026bog"
    metrics: ClassVar[Mapping[str, MetricDeclaration]] = {
        "hits1": ("max", 0.0, 1.0), "f1": ("max", 0.0, 1.0), "exact_match": ("max", 0.0, 1.0),
        "kg_calls": ("min", 0.0, None), "redundant": ("min", 0.0, None),
        "backjumps": ("min", 0.0, None), "dead_end_recovery": ("max", 0.0, 1.0),
        "hits1_mismatch": ("max", 0.0, 1.0), **{f"hits1_{g}": ("max", 0.0, 1.0) for g in GROUPS},
    }
    task_kwargs: ClassVar[tuple[str, ...]] = ("train_kg_calls",)
    extra_arguments: ClassVar[tuple[str, ...]] = WORLD_KWARGS

    defaults: ClassVar[dict[str, Any]] = {}

    def __init__(self, tier: str = "smoke", kg: str = "synthetic", call_budget: int = 10,
                 train_kg_calls: int = 200_000, f1_bonus: bool = False, split: str = "test",
                 question_seed: int = 0, typed: bool = True, mask_redundant: bool | None = None,
                 **world_kwargs: Any) -> None:
        super().__init__(tier=tier, kg=kg, call_budget=call_budget, typed=typed, **world_kwargs)
        unknown = set(world_kwargs) - set(WORLD_KWARGS)
        if unknown:
            raise TypeError(f"{self.id.split('/')[-1]}: unknown arguments {sorted(unknown)}; "
                            f"world arguments are {WORLD_KWARGS}")
        world_kwargs = {**{k: v for k, v in self.defaults.items() if k in WORLD_KWARGS},
                        **world_kwargs}
        self.world_kwargs = {"kg": kg, **world_kwargs}
        self.typed = bool(typed)
        self.mask_redundant = bool(self.defaults.get("mask_redundant", False)
                                   if mask_redundant is None else mask_redundant)
        self.call_budget = int(call_budget)
        self.train_kg_calls = int(train_kg_calls)
        self.f1_bonus = bool(f1_bonus)

    def world(self, seed: int, sealed: bool = False) -> World:
        """The world of trial ``seed``; ``sealed``: with the held-out test questions, drawn
        from the test topics with a salted seed (with no salt set: the Env's public test
        split of ``seed``)."""
        test_seed = sealed_seed(seed, TEST_QID_OFFSET) if sealed else None
        return build_world(int(seed), **self.seed_world_kwargs(seed), test_seed=test_seed)

    def seed_world_kwargs(self, seed: int) -> dict[str, Any]:
        """The world arguments of trial ``seed`` (v0, v1: the task's own, the same KG for
        every seed)."""
        return self.world_kwargs

    def cache_entries(self, seeds: Sequence[int]) -> list[cache.Entry]:
        """Every seed's two worlds, built once before the trials (each agent of a seed reads
        them): the training view's (no test split) and the evaluator's (the sealed test split)."""
        return [entry for s in seeds for entry in (
            world_entry(int(s), **{**self.seed_world_kwargs(s), "n_test": 0}),
            world_entry(int(s), **self.seed_world_kwargs(s),
                        test_seed=sealed_seed(int(s), TEST_QID_OFFSET)))]

    @property
    def budget(self) -> Budget:
        return Budget(train_kg_calls=self.train_kg_calls)

    def train_view(self, seed: int, budget: Budget) -> KGQAView:
        world = build_world(int(seed), **{**self.seed_world_kwargs(seed), "n_test": 0})
        return KGQAView(world, budget, seed, self.call_budget, self.f1_bonus, self.typed,
                        self.mask_redundant)

    def answer_question(self, artifact: Any, world: World, question: Question) -> KGSandbox:
        """One test question; ``world`` must hold no test split (the artifact reaches it)."""
        sandbox = KGSandbox(world, question, self.call_budget, typed=self.typed)
        if hasattr(artifact, "answer"):
            # the gold path only for a reference agent (the oracle), recorded: never ranked
            privileged = self.grant_privilege(getattr(artifact, "privileged", False))
            shown: Question | PublicQuestion = question if privileged else sandbox.question
            try:
                artifact.answer(shown, sandbox)
            except KGCallRefused:
                pass
        else:
            run_policy(world, sandbox, question, artifact, mask_redundant=self.mask_redundant)
        return sandbox

    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        if not (hasattr(artifact, "answer") or callable(artifact)):
            raise TypeError(
                "KGQA-v0 expects a routine with answer(question, sandbox) or a KGBackjump-v0 "
                f"policy (observation -> action), got {type(artifact).__name__}")
        world = self.world(seed, sealed=True)
        shown = replace(world, test=[])  # what sandboxes and episodes carry: no test split
        units = []
        for question in world.test:
            row = score_answer(question, self.answer_question(artifact, shown, question))
            units.append({"instance": question.qid, "mismatch": question.mismatch, **row})
        return EvalResult(metrics=aggregate(units), units=[_unit(u) for u in units])


class KGQATaskV1(KGQATask):
    """
    ## Description
    As ``KGQA-v0`` (KG question answering under a KG-call budget with query-path / schema
    mismatch, the LLM-free analogue of Backjump-on-Graph), with v1's rules: policies run
    under ``KGBackjump-v1``'s mask (no BACKJUMP to the current or an exhausted entry, no
    re-FORWARD along a traversed edge), ``typed=False`` removes the expected answer type from
    every question (dead ends are then seen only through similarity: no relation matches the
    next token), and each split holds exactly ``round(mismatch * n)`` mismatch questions.

    ## Data
    As v0; with ``typed=False`` the view's train and valid questions and every test question
    carry ``answer_type = -1`` (gold paths and answers of train / valid questions are kept).

    ## Artifact
    As v0 (a routine ``answer(question, sandbox)`` or a ``KGBackjump-v1`` policy).

    ## Metrics
    As v0. Units: one row per test question; the count of matched and mismatched rows per
    trial is fixed by the tier (``round(mismatch * n_test)`` mismatched).

    ## Episode End
    As v0.

    ## Arguments
    As v0, plus ``typed`` (default True), ``exact_mismatch`` (default True) and
    ``mask_redundant`` (default True).

    ## Tiers
    smoke: synthetic 200 entities / 8 types / 30 relation names or Nations; 150 / 25 / 50
    questions; L <= 2; mismatch 0.5; budget 10. standard: synthetic 5,000 entities / 20 types
    / 120 names; L <= 3; budget 10 (the benchmark spec's cells: mismatch 0.6 typed and untyped,
    mismatch 0). full: interface only (not run).

    ## Reference
    As v0.

    ## Version History
    - v1: redundant moves masked; ``typed`` (the answer-type verifier is optional); exact
      mismatch share per split; the sandbox's world and KG are private (only metered calls and
      the similarity backend are public); standard budget 10. Superseded by ``KGQA-v2``
      (:class:`KGQATaskV2`): one KG for every seed, a public function of ``kg_seed``.
    - v0: initial release (superseded).
    """

    id: ClassVar[str] = "papergym/KGQA-v1"
    defaults: ClassVar[dict[str, Any]] = {"exact_mismatch": True, "mask_redundant": True}


KG_SEED_PART = 3  # the sealed stream naming a trial's private synthetic KG (v2)


class KGQATaskV2(KGQATaskV1):
    """
    ## Description
    As ``KGQA-v1`` (KG question answering under a KG-call budget with query-path / schema
    mismatch, the LLM-free analogue of Backjump-on-Graph), with a private knowledge graph: each
    trial's synthetic KG is drawn from the sealed evaluation stream of its seed, so an agent
    that knows the seed and every argument cannot rebuild it (v1 drew one KG for every seed
    from the public ``kg_seed``, so ``build_world`` in the agent's own process gave the whole
    graph). The agent reaches the KG only through metered sandbox calls.

    ## Data
    As v1. The train / valid questions and the sealed test questions of a trial share its
    private KG. Nations / Kinships / UMLS are public files: with ``kg`` set to one of them the
    graph is public by nature (no standard cell uses them).

    ## Artifact
    As v1 (a routine ``answer(question, sandbox)`` or a ``KGBackjump-v1`` policy: the
    observation holds no relation or entity identity, so a policy trained on any KG is scored
    unchanged).

    ## Metrics
    As v1.

    ## Episode End
    As v1.

    ## Arguments
    As v1; ``kg_seed`` now offsets the trial's sealed KG draw (with no evaluation salt set,
    e.g. in a notebook, the draw is public: KG seed = ``kg_seed`` + trial seed).

    ## Tiers
    As ``KGQA-v1``.

    ## Reference
    As v0.

    ## Version History
    - v2: the synthetic KG is private to the trial (drawn from the sealed seed stream), a new
      KG per seed instead of one public KG for all seeds.
    - v1: redundant moves masked; ``typed``; exact mismatch share per split; standard budget
      10 (superseded: its KG was a public function of ``kg_seed``).
    - v0: initial release (superseded).
    """

    id: ClassVar[str] = "papergym/KGQA-v2"

    def seed_world_kwargs(self, seed: int) -> dict[str, Any]:
        """The world arguments of trial ``seed``: a synthetic KG drawn from the sealed stream
        of ``(seed, KG_SEED_PART)`` (public only when no evaluation salt is set)."""
        kwargs = dict(self.world_kwargs)
        if kwargs["kg"] == "synthetic":
            offset = int(kwargs.get("kg_seed", 0))
            kwargs["kg_seed"] = (offset + sealed_seed(int(seed), KG_SEED_PART)) % 2**63
        return kwargs


def _unit(row: dict[str, Any]) -> dict[str, Any]:
    group = "hits1_matched" if row["mismatch"] == "none" else "hits1_mismatch"
    return {"instance": row["instance"], "hits1": row["hits1"], "f1": row["f1"],
            "redundant": row["redundant"], "kg_calls": row["kg_calls"], group: row["hits1"]}


def aggregate(units: list[dict[str, Any]]) -> dict[str, float]:
    mean = lambda rows, key: float(np.mean([r[key] for r in rows]))  # noqa: E731
    metrics = {k: mean(units, k) for k in
               ("hits1", "f1", "exact_match", "kg_calls", "redundant", "backjumps")}
    for group in GROUPS:
        rows = [u for u in units if u["mismatch"] == group]
        if rows:
            metrics[f"hits1_{group}"] = mean(rows, "hits1")
    mismatched = [u for u in units if u["mismatch"] != "none"]
    if mismatched:
        metrics["hits1_mismatch"] = mean(mismatched, "hits1")
    met = [u for u in mismatched if u["dead_end_met"]]
    if met:
        metrics["dead_end_recovery"] = mean(met, "recovered")
    return metrics
