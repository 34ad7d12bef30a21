"""Jury agents for StrategicJury-v0 (the Local-MaxCut gadget)."""

from papergym.agents.performative.jury import (  # noqa: F401  (importing registers the agents)
    brute_force,
    first_improvement,
    local_search,
    random_restart,
    simulated_annealing,
)
