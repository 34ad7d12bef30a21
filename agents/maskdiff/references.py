"""References and the trivial end: ``exact`` (true HMM samples: gen-NLL = H_rate up to noise),
``oracle-mdlm`` (MDLM driven by the exact posteriors instead of the trained denoiser: separates
sampling error from denoiser error; a reference row, never "the model") and ``uniform``
(uniform random tokens: the normalized score's 0)."""

from __future__ import annotations

from typing import Any, ClassVar

from papergym.agent import Agent
from papergym.agents.maskdiff.mdlm import PAPER, PROBLEMS
from papergym.envs.maskdiff.steps import Sampler


class Exact(Agent):
    id: ClassVar[str] = "exact"
    family: ClassVar[str] = "maskdiff"
    role: ClassVar[str] = "reference"
    paper: ClassVar[str] = PAPER
    problems: ClassVar[tuple[str, ...]] = PROBLEMS

    def solve(self, view: Any, budget: Any, seed: int) -> Sampler:
        return Sampler(kind="exact")


class OracleMDLM(Exact):
    id: ClassVar[str] = "oracle-mdlm"

    def solve(self, view: Any, budget: Any, seed: int) -> Sampler:
        return Sampler(kind="mdlm", oracle=True)


class Uniform(Exact):
    id: ClassVar[str] = "uniform"
    role: ClassVar[str] = "baseline"

    def solve(self, view: Any, budget: Any, seed: int) -> Sampler:
        return Sampler(kind="uniform")
