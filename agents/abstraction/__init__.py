"""Agents of the abstraction family: exact bisimulation (method), clustering on the
logic-derived metric (method), Q*-aggregation, one-step signatures, a DBC-style encoder and the
trivial partitions (baselines), random partitions with the reference k (reference)."""

from papergym.agents.abstraction import (  # noqa: F401 - importing registers the agents
    bisim_refinement,
    dbc_encoder,
    metric_cluster,
    one_step,
    qstar_aggregation,
    random_partition,
    trivial,
)
