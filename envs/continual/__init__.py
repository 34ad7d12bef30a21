"""continual: EBLoRA (Gu, Luo, Zhou, Zhang, Zhang, Wei, ICML 2026) — balanced low-rank updates on
a restricted Stiefel manifold against sequential LoRA, O-LoRA, InfLoRA and SD-LoRA, in a
domain-incremental stream of digits shifts on a frozen pretrained MLP.

Problems: ``papergym/ContinualLoRA-v0`` (T1..T5: rotation, inversion, permutation, transpose +
noise, shift + blur) and ``papergym/ContinualLoRAHard-v0`` (labels of T2 and T4 remapped), both
Tasks. Modules: ``core`` (backbone, tasks, metrics; shared with the agents), ``task`` (the
metered stream view and the evaluator).
"""

from papergym.registry import register

_PAPER = "gu2026eblora"
_CHANGELOG = {"v0": "initial release"}
_TIERS = {"smoke": {"tasks": 3, "width": 128, "rank": 4, "epochs": 3, "tuning_runs": 0},
          "standard": {"tasks": 5, "width": 256, "rank": 8, "epochs": 5, "tuning_runs": 8},
          "full": {"tasks": 5, "width": 512, "rank": 8, "epochs": 10, "tuning_runs": 8}}

register(
    "papergym/ContinualLoRA-v0",
    entry_point="papergym.envs.continual.task:ContinualLoRATask",
    kind="task",
    family="continual",
    paper=_PAPER,
    tiers=_TIERS,
    changelog=_CHANGELOG,
)

register(
    "papergym/ContinualLoRAHard-v0",
    entry_point="papergym.envs.continual.task:ContinualLoRAHardTask",
    kind="task",
    family="continual",
    paper=_PAPER,
    tiers=_TIERS,
    changelog=_CHANGELOG,
)
