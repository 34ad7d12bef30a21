"""assimilation agents: LoPhyDA-lite (the paper's method) with its two ablations, SDA- and
DPS-style diffusion assimilation on the shared priors, local ETKF, 3D-Var, low-rank completion
only, and the free run (the trivial end)."""

from papergym.agents.assimilation import dps, etkf, free_run, lophyda, sda, tc_only, var3d  # noqa: F401
