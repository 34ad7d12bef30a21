"""tensoruq: E(3)-equivariant uncertainty quantification for symmetric rank-2 tensors (ICML 2026):
a mean and a full 6 x 6 covariance of Kelvin-Mandel coordinates, both rotation-equivariant, the
covariance as the matrix exponential of a Sym²(0e + 2e) = 2x0e + 2x2e + 1x4e generator.

Problems: ``papergym/TensorUQInertia-v0`` (inertia tensors of generated solids from surface point
clouds) and ``papergym/TensorUQDielectric-v0`` (dielectric tensors of toy crystals from their
periodic bonds), both Tasks. Modules: ``geometry`` (KM coordinates, irreps bases, the SPD map,
the Laplace law), ``shapes`` and ``crystals`` (the data), ``task`` (views and the evaluator).
"""

from papergym.registry import register

_PAPER = "tensoruq2026"
_CHANGELOG = {"v0": "initial release"}

register(
    "papergym/TensorUQInertia-v0",
    entry_point="papergym.envs.tensoruq.task:TensorUQInertiaTask",
    kind="task",
    family="tensoruq",
    paper=_PAPER,
    tiers={"smoke": {"n_train": 256, "n_val": 64, "n_test": 64, "n_ood": 48, "n_points": 32, "epochs": 3},
           "standard": {"n_train": 1000, "n_val": 200, "n_test": 250, "n_ood": 240, "n_points": 32,
                        "epochs": 10, "batch_size": 64},
           "full": {"n_train": 8000, "n_val": 1000, "n_test": 1000, "n_ood": 1000, "n_points": 64,
                    "epochs": 20, "batch_size": 32}},
    changelog=_CHANGELOG,
)

register(
    "papergym/TensorUQDielectric-v0",
    entry_point="papergym.envs.tensoruq.task:TensorUQDielectricTask",
    kind="task",
    family="tensoruq",
    paper=_PAPER,
    tiers={"smoke": {"n_train": 256, "n_val": 64, "n_test": 64, "n_ood": 48, "epochs": 3},
           "standard": {"n_train": 1000, "n_val": 200, "n_test": 250, "n_ood": 250, "epochs": 10,
                        "batch_size": 64},
           "full": {"n_train": 4000, "n_val": 500, "n_test": 500, "n_ood": 500, "epochs": 20}},
    changelog=_CHANGELOG,
)
