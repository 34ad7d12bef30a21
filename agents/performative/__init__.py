"""Agents of the performative family: deployers, game learners, jury local search, references."""

from papergym.agents.performative import (  # noqa: F401  (importing registers the agents)
    ellipsoid,
    exact,
    extragradient,
    games,
    halpern,
    jury,
    km,
    rgd,
    rrm,
    stay,
)
