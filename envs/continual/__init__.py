"""continual: EBLoRA (Gu, Luo, Zhou, Zhang, Zhang, Wei, ICML 2026) — balanced low-rank updates on
a restricted Stiefel manifold against sequential LoRA, O-LoRA, InfLoRA and SD-LoRA, in a
domain-incremental stream of digits shifts on a frozen pretrained MLP.

Problems: ``papergym/ContinualLoRA-v1`` (T1..T5: rotation, inversion, partial permutation,
transpose + noise, shift + blur, on a backbone pretrained on thirteen other domains, so every task
starts above chance) and ``papergym/ContinualLoRAHard-v1`` (labels of T2 and T4 remapped), both
Tasks. ``ContinualLoRA-v0`` / ``ContinualLoRAHard-v0`` (backbone pretrained on clean digits
only: every task starts at chance) stay registered, superseded. Modules: ``core`` (backbone,
tasks, metrics; shared with the agents), ``task`` (the metered stream view and the evaluator).
"""

from papergym.registry import register

_PAPER = "gu2026eblora"
_CHANGELOG = {"v0": "initial release (superseded by v1: every task started at chance)"}
_CHANGELOG_V1 = {"v0": "initial release",
                 "v1": "backbone pretrained on clean digits and twelve other shifts (none a stream "
                       "task); T3 permutes 24 pixels, T5 shifts 1 px: every task starts above chance"}
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

register(
    "papergym/ContinualLoRA-v1",
    entry_point="papergym.envs.continual.task:ContinualLoRATaskV1",
    kind="task",
    family="continual",
    paper=_PAPER,
    tiers=_TIERS,
    changelog=_CHANGELOG_V1,
)

register(
    "papergym/ContinualLoRAHard-v1",
    entry_point="papergym.envs.continual.task:ContinualLoRAHardTaskV1",
    kind="task",
    family="continual",
    paper=_PAPER,
    tiers=_TIERS,
    changelog=_CHANGELOG_V1,
)
