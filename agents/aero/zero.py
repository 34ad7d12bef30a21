"""The trivial agent: keep the base shape (z = 0, no solver call); its verified reduction is 0."""

from __future__ import annotations

import numpy as np

from papergym import Agent

FFD = ("papergym/DragFFD2D-v*",)


class Zero(Agent):
    """Never move a control point."""

    id, family, role, paper, problems = "zero", "aero", "baseline", "unidrag2026", FFD

    def solve(self, view, budget, seed):
        return lambda obs: {"z": np.zeros(len(obs["z"]), np.float32), "verify": 0}
