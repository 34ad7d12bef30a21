"""predcoding agents: DeepPC (the paper's method) and its ablations (no S schedule, no FU
update, no auxiliary neurons), standard PC, incremental PC, backprop (squared error, as PC) with
a cross-entropy backprop reference, and the untrained network (the trivial end)."""

from papergym.agents.predcoding import bp, deeppc, ipc, pc, untrained  # noqa: F401  (registers them)
