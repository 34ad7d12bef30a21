"""The trivial end of the scale: the shared initial weights, untrained (about chance)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from papergym.agent import Agent
from papergym.envs.predcoding.core import InferenceConfig, init_params
from papergym.envs.predcoding.task import make_artifact


class Untrained(Agent):
    id: ClassVar[str] = "untrained"
    family: ClassVar[str] = "predcoding"
    role: ClassVar[str] = "baseline"
    paper: ClassVar[str] = "qi2026deeppc"

    def solve(self, view: Any, budget: Any, seed: int) -> dict[str, Any]:
        params = init_params(view.arch, np.random.default_rng(view.init_seed))
        return make_artifact(params, InferenceConfig(weight_update="backprop"))
