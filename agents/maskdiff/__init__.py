"""maskdiff agents: G-Star (the paper's method; full and single-layer remasker fine-tunes), MDLM
ancestral sampling, ReMDM-cap, star-shaped sampling with random or confidence scores, and the
references (exact HMM samples, MDLM with the oracle denoiser) and the trivial uniform sampler."""

from papergym.agents.maskdiff import gstar, mdlm, references, remdm, star_heuristic  # noqa: F401  (registers them)
