"""Agents of the aero family: DragSurrogate (``unidrag_surrogate``, ``cd_only``,
``multitask_naive``, ``mean_surrogate``) and DragFFD2D (``unidrag``, ``surrogate_noeot``,
``cmaes_lbm``, ``bo_lbm``, ``random_search``, ``zero``)."""

from papergym.agents.aero import (  # noqa: F401  (importing registers them)
    bo_lbm,
    cmaes_lbm,
    mean_surrogate,
    random_search,
    surrogate_agents,
    surrogate_noeot,
    unidrag,
    zero,
)
