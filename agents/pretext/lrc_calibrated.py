"""LRC with a monotone calibrator fitted on the C calibration pretexts: an affine map
a + b * acc_est (b >= 0, least squares), applied to every estimate and to acc_sup. It changes
the scale (MAE, and which pretexts fall below acc_sup), never the ranking."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from papergym.agent import Agent
from papergym.agents.pretext._common import lrc_estimates


class LRCCalibrated(Agent):
    id: ClassVar[str] = "lrc_calibrated"
    family: ClassVar[str] = "pretext"
    role: ClassVar[str] = "method"
    paper: ClassVar[str] = "jia2026pretext"

    def solve(self, view: Any, budget: Any, seed: int) -> dict[str, float]:
        est = lrc_estimates(view, seed)
        cal = dict(view.calibration)
        if len(cal) < 2:
            return est
        x = np.array([est[k] for k in cal])
        y = np.array([cal[k] for k in cal])
        slope = float(np.polyfit(x, y, 1)[0]) if np.ptp(x) > 1e-9 else 0.0
        if slope <= 0:  # a decreasing fit would invert the ranking: shift only
            slope = 1.0
        intercept = float(y.mean() - slope * x.mean())
        return {k: intercept + slope * v for k, v in est.items()}
