"""Agents of the torus family: SSM (the method), exact score matching, pseudo-likelihood, marginal
edge scores and the independent von Mises null (TGFit, TGScaling); TG-HMM and its baselines
(TGHMM); AR-TG transfer entropy, Granger and lagged PLV (TGTransferEntropy)."""

from papergym.agents.torus import (  # noqa: F401  (importing registers them)
    artg_te,
    exact_sm,
    granger,
    hmm_baselines,
    marginal,
    null,
    pseudolik,
    ssm,
    tghmm,
)
