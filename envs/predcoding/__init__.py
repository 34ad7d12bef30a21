"""predcoding: deeper predictive coding networks (Qi, Forasassi, Lukasiewicz, Salvatori, ICML
2026) — accuracy and layer-wise error imbalance against depth for standard PC, the paper's
precision-weighted PC with its new weight update and auxiliary skip neurons, and backprop.

Problems: ``papergym/PCDepth-v0`` (MLPs of depth L) and ``papergym/PCDepthResidual-v0``
(residual MLPs of B blocks), both Tasks on scikit-learn's digits. Modules: ``core`` (the PC
core shared by the evaluator and the agents: model, energy, relaxation, weight updates,
imbalance), ``task`` (data splits, the metered view, the evaluator).
"""

from papergym.registry import register

_PAPER = "qi2026deeppc"
_CHANGELOG = {"v0": "initial release"}
_COMMON = {"smoke": {"width": 64, "epochs": 5, "batch_size": 64, "tuning_runs": 0},
           "standard": {"width": 64, "epochs": 8, "batch_size": 64, "tuning_runs": 9},
           "full": {"width": 128, "epochs": 20, "batch_size": 64, "tuning_runs": 16}}

register(
    "papergym/PCDepth-v0",
    entry_point="papergym.envs.predcoding.task:PCDepthTask",
    kind="task",
    family="predcoding",
    paper=_PAPER,
    tiers={"smoke": {"depth": 3, **_COMMON["smoke"]}, "standard": {"depth": 9, **_COMMON["standard"]},
           "full": {"depth": 17, **_COMMON["full"]}},
    changelog=_CHANGELOG,
)

register(
    "papergym/PCDepthResidual-v0",
    entry_point="papergym.envs.predcoding.task:PCDepthResidualTask",
    kind="task",
    family="predcoding",
    paper=_PAPER,
    tiers={"smoke": {"blocks": 2, **_COMMON["smoke"]}, "standard": {"blocks": 6, **_COMMON["standard"]},
           "full": {"blocks": 8, **_COMMON["full"]}},
    changelog=_CHANGELOG,
)
