"""fedlearn agents: ParFreFL, ComParFreFL (the paper's methods) and their baselines.

Each returns a :class:`papergym.envs.fedlearn.protocol.FedAlgorithm` (server strategy +
client factory) that FedRounds-v0's task drives and scores.
"""

from papergym.agents.fedlearn import (  # noqa: F401 - importing registers the agents
    comparfrefl,
    ef21m,
    fedadam,
    fedavg,
    padamfed,
    padamfed_vr,
    parfrefl,
    scafcom,
    scaffold,
    trivial,
)
