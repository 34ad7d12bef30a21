"""The trivial agent: one state for every time step (TGHMM-v0), zero scores (TGTransferEntropy-v0)."""

from __future__ import annotations

import numpy as np

from papergym.agent import Agent


class Null(Agent):
    id, family, role, paper = "null", "torus", "baseline", "goffinet2026torus"
    problems = ("papergym/TGHMM-v0", "papergym/TGTransferEntropy-v0",
                "papergym/TGTransferEntropy-v1")

    def solve(self, view, budget, seed):
        if hasattr(view, "k"):
            return np.zeros(view.steps, dtype=np.int64)
        r, p = view.channels, view.n_pairs
        return {"network": np.zeros((r, r)), "pairs": np.zeros((p, 2, 2))}
