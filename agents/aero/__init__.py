"""Agents of the aero family: DragSurrogate (``unidrag_surrogate``, ``cd_only``,
``multitask_naive``) and DragFFD2D (``unidrag``, ``surrogate_noeot``, ``cmaes_lbm``,
``random_search``, ``zero``)."""

from papergym.agents.aero import (  # noqa: F401  (importing registers them)
    cmaes_lbm,
    random_search,
    surrogate_agents,
    surrogate_noeot,
    unidrag,
    zero,
)
