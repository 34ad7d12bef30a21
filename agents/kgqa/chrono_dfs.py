"""Chronological depth-first backtracking (baseline): expand relations in order of similarity
to the current query token, at most ``breadth`` per state; on a dead end back up exactly one
level and try the next candidate. Answer the first state that has used every token (one
extra, non-matching hop allowed for mediators: depth <= L + 1) and holds an entity of the
expected answer type (where the question states one). Isolates *where to land* (always the
parent) from plain backtracking. The breadth is tuned on valid questions by the protocol, as
ToG-lite's beam: {1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32} (32 = every listed relation), all 12,
the default first (the old grid was {2, 3, 32})."""

from __future__ import annotations

from typing import Any

from papergym.agent import Agent, AgentConfig
from papergym.agents.kgqa.common import select_on_valid
from papergym.envs.kgqa.sandbox import KGCallRefused
from papergym.tuning import grid_candidates


class ChronoDFSRoutine:
    def __init__(self, max_candidates: int, extra_hops: int) -> None:
        self.max_candidates = max_candidates
        self.extra_hops = extra_hops

    def answer(self, question: Any, sandbox: Any) -> None:
        try:
            self._dfs(question, sandbox, 0)
        except KGCallRefused:
            pass

    def _dfs(self, question: Any, sandbox: Any, sid: int) -> bool:
        info = sandbox.state(sid)
        n_tokens = len(question.tokens)
        typed_ok = question.answer_type < 0 or question.answer_type in info["type_counts"]
        if info["pointer"] == n_tokens and info["entities"] and typed_ok:
            sandbox.answer(state=sid)
            return True
        if info["depth"] >= n_tokens + self.extra_hops or not info["entities"]:
            return False
        listing = sandbox.expand_ids(sid)
        token = question.tokens[min(info["pointer"], n_tokens - 1)]
        relations = [r for r, _, _ in listing]
        sims = sandbox.token_relation_sim(token, relations) if relations else []
        order = sorted(range(len(relations)), key=lambda i: (-sims[i], relations[i]))
        for i in order[: self.max_candidates]:
            child = sandbox.traverse(sid, relations[i])
            if self._dfs(question, sandbox, child):
                return True
            sandbox.jump(sid)  # back up exactly one level
        return False


class ChronoDFS(Agent):
    id = "chrono_dfs"
    family = "kgqa"
    role = "baseline"
    paper = "zhang2026bog"

    class Config(AgentConfig):
        breadth: int = 3  # candidates per state: ToG-lite's default beam width [recon]
        extra_hops: int = 1
        tune: bool = True  # false: breadth as given, no selection on valid questions
        max_valid_questions: int | None = None

    search_options = {"breadth": (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 24, 32)}

    def solve(self, view: Any, budget: Any, seed: int) -> ChronoDFSRoutine:
        cfg = self.config  # the breadth is tuned on valid questions
        breadths = [c["breadth"] for c in grid_candidates({"breadth": cfg.breadth}, self.search_options)] \
            if cfg.tune else [cfg.breadth]
        return select_on_valid((ChronoDFSRoutine(b, cfg.extra_hops) for b in breadths), view,
                               view.valid[: cfg.max_valid_questions])
