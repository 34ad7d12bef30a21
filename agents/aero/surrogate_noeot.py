"""Surrogate optimization without EoT (the ablation of UniDrag-lite): tau = identity and nothing
else changed: the same trained ensemble, member draws, samples, steps, restarts, penalty and
online verification (``members = 1, samples = 1`` gives the earlier single-member ablation)."""

from __future__ import annotations

from papergym.agents.aero.unidrag import UniDragFFD


class SurrogateNoEoT(UniDragFFD):
    """UniDrag-lite without Expectation over Transformation."""

    id, role = "surrogate_noeot", "baseline"
    eot = False
