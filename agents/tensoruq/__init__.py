"""tensoruq agents: the equivariant LE-ESO model (the paper's method), its Gaussian-loss,
isotropic and deep-ensemble variants, the non-equivariant Cholesky network, the naive Cholesky
and direct-output heads (diagnostics), the plug-in inertia and the constant predictor."""

from papergym.agents.tensoruq import (  # noqa: F401  (registers them)
    constant,
    eq_direct,
    eq_ensemble,
    eq_gauss,
    eq_iso,
    eq_laplace,
    eq_naive_chol,
    mlp_chol,
    plugin_inertia,
)
