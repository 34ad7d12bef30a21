"""The ends of the scale: ``teacher`` (the teacher itself as a softmax ``LinearizedGPT``: α* = 0
by construction, the reference) and ``uniform`` (constant logits: every exact-match task fails and
``hmm`` scores 1/V, the trivial end). Neither spends a token."""

from __future__ import annotations

from typing import Any, ClassVar

from torch import nn

from papergym.agent import Agent
from papergym.agents.distill._pipeline import FAMILY, PAPER, PROBLEMS
from papergym.envs.distill.teacher import UniformLM
from papergym.tinylm.gpt import GPTConfig
from papergym.tinylm.linearized import LinearizedGPT, MixerConfig


class Teacher(Agent):
    id: ClassVar[str] = "teacher"
    family: ClassVar[str] = FAMILY
    role: ClassVar[str] = "reference"
    paper: ClassVar[str] = PAPER
    problems: ClassVar[tuple[str, ...]] = PROBLEMS

    def solve(self, view: Any, budget: Any, seed: int) -> LinearizedGPT:
        model = LinearizedGPT.from_teacher(view.teacher_state_dict(), GPTConfig(**view.teacher_config()),
                                           MixerConfig(kind="softmax"))
        return model.eval()


class Uniform(Teacher):
    id: ClassVar[str] = "uniform"
    role: ClassVar[str] = "baseline"

    def solve(self, view: Any, budget: Any, seed: int) -> nn.Module:
        return UniformLM(view.vocab_size)
