"""Game-view learners for PerformativeGame-v0."""

from papergym.agents.performative.games import (  # noqa: F401  (importing registers the agents)
    gradient_play,
    hedge,
    ogda,
)
