"""Agents of the humanoid family: XHugWBC generalist (and fine-tuned, Generalist-FT), GCN/MLP/MetaMorph
generalists, references."""

from papergym.agents.humanoid import (  # noqa: F401  (importing registers the agents)
    generalist_ft,
    generalist_gcn,
    generalist_metamorph,
    generalist_mlp,
    specialist_ppo,
    xhugwbc_lite,
    zero_action,
)
