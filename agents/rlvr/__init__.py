"""Agents of the rlvr family: ResRL (paper A) and VCPO (paper B) with their ablations, GRPO
(sync, naive async, PPO-behaviour), PSR, NSR, W-REINFORCE, TIS, MIS and the SFT base."""

from papergym.agents.rlvr import (  # noqa: F401  (importing registers the agents)
    grpo,
    mis,
    resrl,
    sft_base,
    tis,
    vcpo,
    w_reinforce,
)
