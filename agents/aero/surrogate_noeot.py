"""Surrogate optimization without EoT (the ablation of UniDrag-lite): one surrogate member,
tau = identity (M = 1), the same steps, restarts, penalty and online verification."""

from __future__ import annotations

from papergym.agents.aero.unidrag import UniDragFFD


class SurrogateNoEoT(UniDragFFD):
    """UniDrag-lite without Expectation over Transformation."""

    id, role = "surrogate_noeot", "baseline"
    eot = False
