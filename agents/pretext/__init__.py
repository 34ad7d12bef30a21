"""pretext agents: the three-factor estimator (LRC) and its calibrated variant (the method, our
operationalization), the single-factor ablations, the pretext-loss heuristic, the short-run
linear probe and random scores."""

from papergym.agents.pretext import (  # noqa: F401  (registers them)
    ablations,
    baselines,
    lrc,
    lrc_calibrated,
)
