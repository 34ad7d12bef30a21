"""``papergym/KGBackjump-v0``: the four atomic operations over the per-question sandbox.

The episode machine (:class:`BackjumpEpisode`) is shared by the Gymnasium env and by
``KGQA-v0``'s evaluator, so a policy trained here is scored there unchanged, under the same
KG-call budget.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from papergym.actions import check_action as check_in_space
from papergym.envs.kgqa.graph import KG
from papergym.envs.kgqa.questions import Question
from papergym.envs.kgqa.sandbox import KGSandbox, World, build_world, score_answer
from papergym.envs.kgqa.vault import WorldKey, world_of

R_MAX = 32  # candidate relations shown per state
H = 8  # history (stack) entries
L_MAX = 4  # query tokens
N_TYPES_OBS = 32
CAND_FEATURES = 12
HIST_FEATURES = 6
FRONTIER_FEATURES = 13
YIELD, HALT = 0, 1
FORWARD0 = 2
BACKJUMP0 = FORWARD0 + R_MAX
N_ACTIONS = BACKJUMP0 + H
FEATURE_HIGH = 16.0

REDUNDANT_PENALTY = 0.05
STEP_PENALTY = 0.01


def _range_bucket(kg: KG, tails: np.ndarray) -> int:
    """Majority type of a result set hashed to 4 buckets (mediators get their own)."""
    types = kg.entity_type[tails]
    majority = int(np.bincount(types).argmax())
    return 3 if majority == kg.mediator_type else majority % 3


class BackjumpEpisode:
    """FORWARD(i) / BACKJUMP(j) / YIELD / HALT over one question's sandbox [recon].

    FORWARD(i): follow candidate i of the current state (one traverse call, plus one expand
    call on first arrival at the new state); pushes the new state. BACKJUMP(j): restore stack
    entry j (any earlier state); entries after j are popped but stay visited (their
    traversals are remembered). YIELD: submit the current state's entity set. HALT: stop
    without an answer. Actions outside the mask are no-ops counted in ``invalid``.

    ``mask_redundant`` (v1): BACKJUMP to the current entry or to an entry with no untried
    candidate left (or none affordable), and FORWARD along an already traversed (state,
    relation), are masked. Every FORWARD then spends at least one KG call and every BACKJUMP
    pops at least one entry, so an episode ends within 2 x budget + 1 steps: a greedy policy
    cannot loop to the step cap. The features read the *public* question: with an untyped
    sandbox the expected-answer-type features are 0.
    """

    def __init__(self, world: World, sandbox: KGSandbox, question: Question,
                 f1_bonus: bool = False, allow_backjump: bool = True,
                 mask_redundant: bool = False) -> None:
        self._key, self.sandbox, self.question = WorldKey(world), sandbox, question
        self.mask_redundant = mask_redundant
        self.answer_type = sandbox.question.answer_type  # -1: hidden (untyped)
        self.tokens = sandbox.question.tokens
        self.token_ids = [world.sim.index[t] for t in self.tokens]
        self.f1_bonus = f1_bonus
        self.allow_backjump = allow_backjump
        self.stack: list[int] = [0]
        self.steps = 0
        self.invalid = 0
        self.done = False
        self.answered = False
        self._cands: dict[int, list[int]] = {}
        self._static: dict[int, np.ndarray] = {}
        self._memo: dict[tuple, Any] = {}  # mask / untried of the current step (cleared by step)
        self._arrive(0)

    # ------------------------------------------------------------------ state features
    def _w(self) -> World:
        """The world, looked up in the vault per call (no attribute holds it)."""
        return world_of(self._key)

    def _arrive(self, sid: int) -> None:
        if not self.sandbox.is_expanded(sid) and self.sandbox.calls_left > 0:
            self.sandbox.expand_ids(sid)

    def _token_sims(self, pointer: int, relations: list[int]) -> np.ndarray:
        """(len(relations), L_MAX) similarity to the tokens from ``pointer`` on."""
        out = np.zeros((len(relations), L_MAX), dtype=np.float32)
        if relations:
            rel_ids = self._w().relation_sim_ids[relations]
            for j in range(L_MAX):
                if pointer + j < len(self.tokens):
                    out[:, j] = self._w().sim.matrix[self.token_ids[pointer + j], rel_ids]
        return out

    def candidates(self, sid: int) -> list[int]:
        """Relation ids of the listed candidates (best similarity to the current token first)."""
        if sid in self._cands:
            return self._cands[sid]
        if not self.sandbox.is_expanded(sid):
            return []
        listing = self.sandbox.expand_ids(sid)
        state = self.sandbox.states[sid]
        rels = [r for r, _, _ in listing]
        sims = self._token_sims(state.pointer, rels)
        order = sorted(range(len(rels)), key=lambda i: (-sims[i, 0], -sims[i].max(), rels[i]))
        order = order[:R_MAX]
        chosen = [rels[i] for i in order]
        feats = np.zeros((len(chosen), CAND_FEATURES), dtype=np.float32)
        options = self._w().kg.expand(state.entities)
        for row, i in enumerate(order):
            r, n, frac = listing[i]
            tails = options[r][0]
            feats[row, :L_MAX] = sims[i]
            feats[row, 4] = np.log1p(n)
            feats[row, 5] = frac
            feats[row, 6 + _range_bucket(self._w().kg, tails)] = 1.0
            feats[row, 11] = float(np.mean(self._w().kg.entity_type[tails] == self.answer_type))
        self._cands[sid] = chosen
        self._static[sid] = feats
        return chosen

    def candidate_features(self, sid: int) -> np.ndarray | None:
        """The candidate-relation features of state ``sid`` (one row per listed candidate, as
        in the observation), or None when its candidates were never listed."""
        feats = self._static.get(sid)
        return None if feats is None else feats.copy()

    @property
    def match_threshold(self) -> float:
        return self._w().threshold

    def untried(self, sid: int) -> list[int]:
        """Candidate indices of ``sid`` not yet traversed."""
        key = ("untried", sid)
        if key not in self._memo:
            children = self.sandbox._children
            self._memo[key] = [i for i, r in enumerate(self.candidates(sid))
                               if (sid, r) not in children]
        return self._memo[key]

    def _best_untried_sim(self, sid: int) -> float:
        idx = self.untried(sid)
        return float(self._static[sid][idx, 0].max()) if idx else 0.0

    def observation(self) -> dict[str, np.ndarray]:
        sid = self.stack[-1]
        state = self.sandbox.states[sid]
        cands = self.candidates(sid)
        question = np.zeros(2 + L_MAX, dtype=np.int64)
        question[0] = int(self._w().kg.entity_type[self.question.topic]) % N_TYPES_OBS
        for j, t in enumerate(self.token_ids[:L_MAX]):
            question[1 + j] = t + 1
        question[1 + L_MAX] = max(self.answer_type, 0) % N_TYPES_OBS
        frontier = np.zeros(FRONTIER_FEATURES, dtype=np.float32)
        if state.entities:
            types = self._w().kg.entity_type[list(state.entities)]
            frontier[0] = np.log1p(len(state.entities))
            frontier[1:9] = np.bincount(types % 8, minlength=8)[:8] / len(types)
            frontier[11] = float(np.mean(types == self.answer_type))
        frontier[9] = state.depth / L_MAX
        frontier[10] = (len(self.tokens) - state.pointer) / L_MAX
        candidates = np.zeros((R_MAX, CAND_FEATURES), dtype=np.float32)
        if cands:
            candidates[:len(cands)] = self._static[sid]
            candidates[:len(cands), 10] = [float((sid, r) in self.sandbox._children)
                                           for r in cands]
            frontier[12] = float(self._static[sid][:, 0].max())
        history = np.zeros((H, HIST_FEATURES), dtype=np.float32)
        for k, hs in enumerate(self.stack):
            s = self.sandbox.states[hs]
            history[k, 0] = s.depth / L_MAX
            if s.parent >= 0:
                parent = self.sandbox.states[s.parent]
                if parent.pointer < len(self.tokens):
                    history[k, 1] = self._w().token_relation_sim(
                        self.tokens[parent.pointer], [s.relation])[0]
            history[k, 2] = np.log1p(len(s.entities))
            self.candidates(hs)
            history[k, 3] = np.log1p(len(self.untried(hs))) if hs in self._static else 0.0
            history[k, 4] = self._best_untried_sim(hs) if hs in self._static else 0.0
            history[k, 5] = 1.0
        return {"question": question, "frontier": np.clip(frontier, 0, FEATURE_HIGH),
                "candidates": np.clip(candidates, 0, FEATURE_HIGH),
                "history": np.clip(history, 0, FEATURE_HIGH), "action_mask": self.mask()}

    def mask(self) -> np.ndarray:
        if ("mask",) not in self._memo:
            self._memo[("mask",)] = self._mask()
        return self._memo[("mask",)].copy()

    def _mask(self) -> np.ndarray:
        mask = np.zeros(N_ACTIONS, dtype=np.int8)
        if self.done:
            return mask
        sid = self.stack[-1]
        state = self.sandbox.states[sid]
        mask[HALT] = 1
        mask[YIELD] = int(state.depth >= 1 and bool(state.entities))
        if len(self.stack) < H:
            for i, r in enumerate(self.candidates(sid)):
                cached = (sid, r) in self.sandbox._children
                if self.mask_redundant:
                    mask[FORWARD0 + i] = int(not cached and self.sandbox.calls_left > 0)
                else:
                    mask[FORWARD0 + i] = int(cached or self.sandbox.calls_left > 0)
        if self.allow_backjump and not self.mask_redundant:
            mask[BACKJUMP0:BACKJUMP0 + len(self.stack)] = 1
        elif self.allow_backjump and self.sandbox.calls_left > 0:
            for j, entry in enumerate(self.stack[:-1]):
                mask[BACKJUMP0 + j] = int(bool(self.untried(entry)))
        return mask

    # ------------------------------------------------------------------ transitions
    def step(self, action: int) -> tuple[float, bool, bool, dict[str, Any]]:
        if self.done:
            raise RuntimeError("step() called on a finished episode; call reset()")
        valid = bool(self.mask()[action])
        self._memo.clear()
        self.steps += 1
        redundant_before = self.sandbox.redundant
        reward = -STEP_PENALTY
        terminated = False
        if not valid:
            self.invalid += 1
        elif action == YIELD:
            self.sandbox.answer(state=self.stack[-1])
            self.answered = terminated = True
            metrics = score_answer(self.question, self.sandbox)
            reward += metrics["hits1"] + (0.5 * metrics["f1"] if self.f1_bonus else 0.0)
        elif action == HALT:
            terminated = True
        elif action < BACKJUMP0:
            sid = self.stack[-1]
            child = self.sandbox.traverse(sid, self.candidates(sid)[action - FORWARD0])
            self.stack.append(child)
            self._arrive(child)
        else:
            j = action - BACKJUMP0
            target = self.stack[j]
            if j == len(self.stack) - 1 or not self.untried(target):
                self.sandbox.redundant += 1  # jump to the current state / an exhausted entry
            del self.stack[j + 1:]
            self.sandbox.jump(target)
        reward -= REDUNDANT_PENALTY * (self.sandbox.redundant - redundant_before)
        truncated = not terminated and self.steps >= 2 * self.sandbox.call_budget
        self.done = terminated or truncated
        self._memo.clear()
        return reward, terminated, truncated, self.info()

    def info(self) -> dict[str, Any]:
        return {"invalid": self.invalid, "kg_calls": self.sandbox.calls,
                "redundant": self.sandbox.redundant, "backjumps": self.sandbox.backjumps,
                "answered": self.answered}


class EpisodeBatch:
    """Episodes stepped in lockstep: one ``observations()`` and one ``step(actions)`` call per
    step for all of them (a vectorized view for group rollouts; each episode keeps its own
    sandbox, budget charges and rules)."""

    def __init__(self, episodes: list[BackjumpEpisode]) -> None:
        self._episodes = episodes
        self._obs = [e.observation() for e in episodes]

    def __len__(self) -> int:
        return len(self._episodes)

    def active(self) -> list[int]:
        """Indices of the episodes not yet done."""
        return [i for i, e in enumerate(self._episodes) if not e.done]

    def observations(self) -> dict[str, np.ndarray]:
        """The active episodes' observations stacked per key (rows in ``active()`` order)."""
        rows = [self._obs[i] for i in self.active()]
        return {k: np.stack([o[k] for o in rows]) for k in rows[0]} if rows else {}

    def step(self, actions: Any) -> np.ndarray:
        """One action per active episode (in ``active()`` order); returns their rewards."""
        active = self.active()
        actions = np.asarray(actions).reshape(-1)
        if len(actions) != len(active):
            raise ValueError(f"EpisodeBatch.step: {len(actions)} actions for "
                             f"{len(active)} active episodes")
        rewards = np.zeros(len(active))
        for row, (i, action) in enumerate(zip(active, actions.tolist())):
            episode = self._episodes[i]
            rewards[row] = episode.step(check_action(action))[0]
            if not episode.done:
                self._obs[i] = episode.observation()
        return rewards


def _observation_space(vocab_size: int) -> spaces.Dict:
    box = lambda shape: spaces.Box(0.0, FEATURE_HIGH, shape=shape, dtype=np.float32)  # noqa: E731
    return spaces.Dict({
        "question": spaces.MultiDiscrete([N_TYPES_OBS] + [vocab_size + 1] * L_MAX + [N_TYPES_OBS]),
        "frontier": box((FRONTIER_FEATURES,)),
        "candidates": box((R_MAX, CAND_FEATURES)),
        "history": box((H, HIST_FEATURES)),
        "action_mask": spaces.MultiBinary(N_ACTIONS),
    })


_ACTIONS = spaces.Discrete(N_ACTIONS)


def check_action(action: Any, name: str = "papergym/KGBackjump-v0") -> int:
    """One integer in Discrete(N_ACTIONS); anything else is a ValueError naming ``name``."""
    return check_in_space(_ACTIONS, action, name)


class KGBackjumpEnv(gym.Env):
    """
    ## Description
    LLM-free analogue of Backjump-on-Graph (Zhang et al., ICML 2026): answer a KG question by
    walking the KG from its topic entity with four atomic operations, FORWARD, BACKJUMP
    (non-local return to any earlier state of the history), YIELD and HALT, under a per-question
    KG-call budget. The question's query-derived relation path may not match the KG schema
    (mediator nodes, near-miss relations, paraphrases), so path-following walks dead-end.

    ## Action Space
    ``Discrete(42)``: 0 YIELD (submit the current entity set), 1 HALT (stop, empty answer),
    2..33 FORWARD(i) (candidate relation i), 34..41 BACKJUMP(j) (history entry j). Actions
    outside ``action_mask`` are no-op steps counted in ``info["invalid"]``; a non-integer,
    non-finite or out-of-range action raises ``ValueError``.

    ## Observation Space
    ``Dict`` (no text): ``question`` MultiDiscrete (topic type mod 32, 4 token ids into the KG
    phrase vocabulary + 1 with 0 = padding, expected answer type mod 32); ``frontier``
    Box(13) (log1p set size, 8-bucket type histogram, depth/4, tokens left/4, fraction of the
    expected type, best current-token similarity among candidates); ``candidates``
    Box(32, 12) per listed relation (similarity to the next 4 query tokens from the state's
    token pointer, log1p result size, fraction of frontier entities having it, range-type
    one-hot hashed to 4 with mediators in bucket 3, already-traversed flag, fraction of
    results of the expected type); ``history`` Box(8, 6) per stack entry (depth/4, similarity
    of the relation taken, log1p set size, log1p untried candidates, best untried similarity,
    valid flag); ``action_mask`` MultiBinary(42). All Box features lie in [0, 16].

    ## Rewards
    Hybrid [recon]: terminal +1 if Hits@1 (+0.5 F1 when ``f1_bonus``); -0.05 per redundant
    transition (re-traversing a (state, relation), BACKJUMP to the current state or to an
    exhausted entry, immediate return along the reverse relation); -0.01 per step; 0 on HALT
    or at truncation.

    ## Starting State
    A question of ``split`` (train / valid / test of the world generated with
    ``question_seed``) drawn with ``np_random`` (or ``options={"index": i}``); the history
    holds the topic state, whose candidates are listed (one expand call).

    ## Episode End
    Terminated on YIELD or HALT; truncated after 2 x ``call_budget`` steps. FORWARD is masked
    once the KG-call budget is spent (re-following a traversed edge stays allowed: it is
    cached), so the agent can still YIELD, BACKJUMP or HALT.

    ## Arguments
    ``kg`` (synthetic | nations | kinships | umls), synthetic sizes (``n_entities``,
    ``n_types``, ``n_relations``, ``mediator_frac``, ``near_miss_frac``, ``kg_seed``),
    ``max_hops``, ``mismatch``, ``n_train`` / ``n_valid`` / ``n_test``, ``similarity``
    (ngram | minilm), ``match_threshold``, ``call_budget``, ``f1_bonus``, ``split``,
    ``question_seed``.

    ## Tiers
    As ``KGQA-v0`` (smoke: synthetic 200 entities or Nations, budget 10; standard: synthetic
    5,000 entities / UMLS / Kinships, budget 20).

    ## Reference
    Zhang et al., "Backjump-on-Graph: Empowering LLMs with Reinforced Retrospective
    Exploration for Agentic KG Reasoning", ICML 2026. Operation names from a summary; their
    semantics, features and reward weights are reconstructions (see envs/kgqa/__init__.py).

    ## Version History
    - v0: initial release. Superseded by ``KGBackjump-v1`` (:class:`KGBackjumpEnvV1`): v0 lets
      a policy BACKJUMP to exhausted entries and re-follow traversed edges until the step cap.
    """

    metadata = {"render_modes": []}
    env_id = "papergym/KGBackjump-v0"
    defaults: dict[str, Any] = {}

    def __init__(self, kg: str = "synthetic", call_budget: int = 10, f1_bonus: bool = False,
                 split: str = "train", question_seed: int = 0, tier: str = "smoke",
                 render_mode: str | None = None, **world_kwargs: Any) -> None:
        if split not in ("train", "valid", "test"):
            raise ValueError(f"split must be train, valid or test, got {split!r}")
        for unused in ("train_kg_calls",):
            world_kwargs.pop(unused, None)
        world_kwargs = {**self.defaults, **world_kwargs}
        self.mask_redundant = bool(world_kwargs.pop("mask_redundant", False))
        self.typed = bool(world_kwargs.pop("typed", True))
        self.world = build_world(int(question_seed), kg=kg, **world_kwargs)
        self.questions: list[Question] = getattr(self.world, split)
        self.call_budget = int(call_budget)
        self.max_steps = 2 * self.call_budget  # where an episode is truncated (registered max_episode_steps)
        self.f1_bonus = bool(f1_bonus)
        self.observation_space = _observation_space(len(self.world.sim.vocabulary))
        self.action_space = spaces.Discrete(N_ACTIONS)
        self.episode: BackjumpEpisode | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        index = (options or {}).get("index")
        if index is None:
            index = int(self.np_random.integers(len(self.questions)))
        question = self.questions[int(index)]
        sandbox = KGSandbox(self.world, question, self.call_budget, typed=self.typed)
        self.episode = BackjumpEpisode(self.world, sandbox, question, self.f1_bonus,
                                       mask_redundant=self.mask_redundant)
        return self.episode.observation(), {**self.episode.info(), "qid": question.qid}

    def step(self, action: Any):
        if self.episode is None:
            raise RuntimeError("call reset() before step()")
        reward, terminated, truncated, info = self.episode.step(check_action(action, self.env_id))
        return self.episode.observation(), float(reward), terminated, truncated, info

    def question_metrics(self) -> dict[str, float]:
        """Problem-computed metrics of the current episode (as KGQA-v0 scores them)."""
        assert self.episode is not None
        return score_answer(self.episode.question, self.episode.sandbox)


class KGBackjumpEnvV1(KGBackjumpEnv):
    """
    ## Description
    As ``KGBackjump-v0`` (the four atomic operations of Backjump-on-Graph, Zhang et al., ICML
    2026, over a KG-call-budgeted sandbox), with v1's rules: redundant moves are masked, the
    expected answer type can be hidden, and each split holds an exact mismatch share.

    ## Action Space
    ``Discrete(42)`` as v0. The mask now also removes BACKJUMP to the current entry and to an
    entry with no untried candidate (or once the budget is spent), and FORWARD along an
    already traversed (state, relation).

    ## Observation Space
    As v0. With ``typed=False`` the expected answer type is hidden: its token in
    ``question`` and the expected-type fractions (``frontier[11]``, ``candidates[:, 11]``) are 0.

    ## Rewards
    As v0 (+1 Hits@1, +0.5 F1 with ``f1_bonus``, -0.05 per redundant transition, -0.01 per
    step); the only redundant transition left unmasked is an immediate return along the reverse
    relation.

    ## Starting State
    As v0.

    ## Episode End
    Terminated on YIELD or HALT. Every FORWARD spends a KG call and every BACKJUMP pops an
    entry, so an episode without invalid actions ends within 2 x ``call_budget`` + 1 steps;
    truncated after 2 x ``call_budget`` steps as v0.

    ## Arguments
    As v0, plus ``typed`` (default True; False hides the answer type), ``exact_mismatch``
    (default True: ``round(mismatch * n)`` mismatch questions per split) and
    ``mask_redundant`` (default True).

    ## Tiers
    As ``KGQA-v1`` (smoke: synthetic 200 entities or Nations; standard: synthetic 5,000
    entities; budget 10).

    ## Reference
    Zhang et al., "Backjump-on-Graph: Empowering LLMs with Reinforced Retrospective
    Exploration for Agentic KG Reasoning", ICML 2026. Semantics reconstructed (see
    envs/kgqa/__init__.py).

    ## Version History
    - v1: redundant BACKJUMP / FORWARD masked; ``typed`` (answer-type oracle optional);
      exact mismatch share per split.
    - v0: initial release (superseded).
    """

    env_id = "papergym/KGBackjump-v1"
    defaults = {"mask_redundant": True, "typed": True, "exact_mismatch": True}
