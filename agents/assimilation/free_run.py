"""The free run: no assimilation; the analysis is the background (the trivial reference)."""

from __future__ import annotations

from typing import Any

import numpy as np

from papergym.agents.assimilation._common import CyclingAgent, CyclingPolicy


class FreeRunPolicy(CyclingPolicy):
    def analyse(self, obs: dict[str, Any]) -> np.ndarray:
        return np.asarray(obs["background"])


class FreeRun(CyclingAgent):
    """Forecast without observations: every member of the first (climatological) background
    ensemble runs free; the skill metric is 0 for it by definition."""

    id = "free_run"
    role = "baseline"

    def make_policy(self, view: Any, params: dict[str, Any], seed: int) -> CyclingPolicy:
        return FreeRunPolicy(view.ensemble_size)
