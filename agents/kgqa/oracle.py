"""Oracle (reference, never ranked): follows the gold path, then answers its final state.

Privileged: the Task hands it the full question (gold path); Hits@1 = F1 = 1 by
construction, within the KG-call budget (one traverse per gold relation)."""

from __future__ import annotations

from typing import Any

from papergym.agent import Agent, AgentConfig


class OracleRoutine:
    privileged = True

    def answer(self, question: Any, sandbox: Any) -> None:
        state = sandbox.root if hasattr(sandbox, "root") else 0
        for relation in question.gold_path:
            state = sandbox.traverse(state, int(relation))
        sandbox.answer(state=state)


class Oracle(Agent):
    id = "oracle"
    family = "kgqa"
    role = "reference"
    paper = "zhang2026bog"

    class Config(AgentConfig):
        pass

    def solve(self, view: Any, budget: Any, seed: int) -> OracleRoutine:
        return OracleRoutine()
