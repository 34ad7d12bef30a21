"""KGQA-v1 / KGBackjump-v1: exact mismatch share per split, redundant moves masked (a greedy
policy cannot loop to the step cap), the optional answer-type verifier, the lockstep episode
batch, and a training view whose public surface reaches no unmetered KG."""

from __future__ import annotations

import types

import numpy as np
import pytest

import papergym
from papergym.envs.kgqa.backjump import (
    BACKJUMP0,
    EpisodeBatch,
    KGBackjumpEnv,
    KGBackjumpEnvV1,
)
from papergym.envs.kgqa.graph import KG
from papergym.envs.kgqa.sandbox import KGSandbox, World, build_world

SMOKE = dict(kg="synthetic", n_entities=200, n_types=8, n_relations=30, max_hops=2,
             mismatch=0.5, n_train=150, n_valid=25, n_test=50)


def test_exact_mismatch_share_whatever_the_test_seed():
    """The claim units line up across sealed draws: every split holds round(m n) mismatched."""
    for test_seed in (0, 12345, 999_999):
        world = build_world(0, **SMOKE, exact_mismatch=True, test_seed=test_seed)
        for split, n in ((world.train, 150), (world.valid, 25), (world.test, 50)):
            assert len(split) == n
            assert sum(q.mismatch != "none" for q in split) == round(0.5 * n)
    task = papergym.make_task("papergym/KGQA-v1", tier="smoke")
    assert task.world_kwargs["exact_mismatch"] is True


class _BackjumpFirst:
    """The looping policy of the issue: BACKJUMP whenever allowed (to the deepest allowed
    entry), else re-FORWARD the first allowed candidate, YIELD only when nothing else is."""

    def __call__(self, obs):
        valid = np.flatnonzero(obs["action_mask"])
        jumps = valid[valid >= BACKJUMP0]
        if len(jumps):
            return int(jumps[-1])
        moves = valid[valid >= 2]
        return int(moves[0]) if len(moves) else int(valid[0])


def _episodes(env_cls, n=25):
    env = env_cls(**SMOKE, call_budget=10)
    policy, out = _BackjumpFirst(), []
    for i in range(n):
        env.reset(seed=i, options={"index": i})
        steps, done, truncated = 0, False, False
        while not done:
            _, _, term, truncated, info = env.step(policy(env.episode.observation()))
            steps += 1
            done = term or truncated
        out.append((steps, truncated, info))
    return out


def test_greedy_backjumping_cannot_loop_to_the_step_cap_in_v1():
    v1 = _episodes(KGBackjumpEnvV1)
    for steps, truncated, info in v1:
        # every FORWARD spends a KG call and every BACKJUMP pops an entry
        assert steps <= 2 * 10 + 1 and not truncated
        assert info["invalid"] == 0
    # the masked-out moves (jump to the current or an exhausted entry, re-FORWARD) are gone:
    # the only redundant transition left is an immediate reverse hop
    v0 = _episodes(KGBackjumpEnv)
    assert any(truncated for _, truncated, _ in v0)  # v0: the same policy loops to the cap
    assert sum(i["redundant"] for *_, i in v0) > 5 * sum(i["redundant"] for *_, i in v1)


def test_untyped_cell_hides_the_answer_type_everywhere():
    task = papergym.make_task("papergym/KGQA-v1", tier="smoke", typed=False)
    view = task.train_view(0, task.budget)
    assert {q.answer_type for q in view.train + view.valid} == {-1}
    assert all(q.gold_answers for q in view.train)  # gold is kept for training
    episode = view.episode(view.train[0])
    obs = episode.observation()
    assert obs["question"][-1] == 0 and obs["frontier"][11] == 0
    assert np.all(obs["candidates"][:, 11] == 0)
    seen = []

    class Spy:
        def answer(self, question, sandbox):
            seen.append((question.answer_type, sandbox.question.answer_type))

    task.evaluate(Spy(), 0)
    assert set(seen) == {(-1, -1)}
    typed = papergym.make_task("papergym/KGQA-v1", tier="smoke")
    assert typed.train_view(0, typed.budget).train[0].answer_type >= 0


def test_episode_batch_steps_like_single_episodes():
    task = papergym.make_task("papergym/KGQA-v1", tier="smoke")
    view = task.train_view(0, task.budget)
    questions = view.train[:6]
    batch = view.episodes(questions)
    assert isinstance(batch, EpisodeBatch) and len(batch) == 6
    singles = [view.episode(q) for q in questions]
    policy = _BackjumpFirst()
    while batch.active():
        active = batch.active()
        obs = batch.observations()
        actions = [policy({k: v[row] for k, v in obs.items()}) for row in range(len(active))]
        rewards = batch.step(actions)
        for row, i in enumerate(active):
            assert np.array_equal(singles[i].observation()["action_mask"], obs["action_mask"][row])
            assert singles[i].step(actions[row])[0] == pytest.approx(rewards[row])
    assert all(e.done for e in singles)
    with pytest.raises(ValueError, match="actions"):
        view.episodes(questions[:2]).step([0])


def _public_reach(root, limit=200_000):
    """Objects reachable through public attributes, containers and method results' owners:
    what an isolated agent can touch (its proxy refuses private names)."""
    seen, stack = {}, [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, (types.ModuleType, type, str, bytes, int, float,
                                               bool, np.ndarray, np.generic)):
            continue
        seen[id(obj)] = obj
        assert len(seen) < limit
        if isinstance(obj, dict):
            stack += list(obj.values())
        elif isinstance(obj, (list, tuple, set)):
            stack += list(obj)
        elif hasattr(obj, "__dict__"):
            stack += [v for k, v in vars(obj).items() if not k.startswith("_")]
    return list(seen.values())


def test_view_sandbox_and_episode_reach_no_unmetered_kg():
    task = papergym.make_task("papergym/KGQA-v1", tier="smoke")
    view = task.train_view(0, task.budget)
    q = view.train[0]
    for root in (view, view.sandbox(q), view.episode(q), view.episodes([q])):
        leaks = [type(o).__name__ for o in _public_reach(root) if isinstance(o, (KG, World))]
        assert not leaks, (type(root).__name__, leaks)
    # the walk can fail: a v0-style public world attribute is found
    leaky = KGSandbox.__new__(KGSandbox)
    leaky.world = view.sandbox(q)._w()
    assert any(isinstance(o, World) for o in _public_reach(leaky))
