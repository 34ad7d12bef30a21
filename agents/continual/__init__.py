"""continual agents: EBLoRA (the paper's method) and its ablations (no F restriction, diagonal
magnitude, random init), sequential LoRA, O-LoRA, InfLoRA, SD-LoRA, the frozen backbone (the
trivial end), and the joint and per-task references."""

from papergym.agents.continual import (  # noqa: F401  (registers them)
    eblora,
    frozen,
    inflora,
    olora,
    references,
    sdlora,
    seq_lora,
)
