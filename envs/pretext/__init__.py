"""pretext: estimating the impact of unsupervised pretext tasks on target performance
(learnability x reliability x completeness; Jia et al., ICML 2026), on a pool of digits and
synthetic pretexts with ground truth from full semi-supervised training.

Problems: ``papergym/PretextImpactDigits-v0`` and ``papergym/PretextImpactSynth-v0``, both
Tasks. Modules: ``data`` (splits, synthetic generators), ``pretexts`` (the pool, transforms,
losses, the training loop), ``ground_truth`` (cached full runs), ``metrics``, ``task``.
"""

from papergym.registry import register

_PAPER = "jia2026pretext"
_CHANGELOG = {"v0": "initial release"}

register(
    "papergym/PretextImpactDigits-v0",
    entry_point="papergym.envs.pretext.task:PretextImpactDigitsTask",
    kind="task",
    family="pretext",
    paper=_PAPER,
    tiers={
        "smoke": {"pool": "smoke", "calibration": 2, "gt_seeds": 1, "epochs": 5},
        "standard": {"pool": "standard", "calibration": 4, "gt_seeds": 2, "epochs": 30},
        "full": {"pool": "full", "calibration": 10, "gt_seeds": 5, "epochs": 50},
    },
    changelog=_CHANGELOG,
)

register(
    "papergym/PretextImpactSynth-v0",
    entry_point="papergym.envs.pretext.task:PretextImpactSynthTask",
    kind="task",
    family="pretext",
    paper=_PAPER,
    tiers={
        "smoke": {
            "dataset": "moons",
            "pool": "smoke",
            "calibration": 2,
            "gt_seeds": 1,
            "epochs": 5,
            "hidden": [128, 128],
        },
        "standard": {
            "dataset": "gmm",
            "pool": "standard",
            "calibration": 4,
            "gt_seeds": 2,
            "epochs": 30,
            "hidden": [128, 128],
        },
        "full": {
            "dataset": "gmm",
            "pool": "full",
            "calibration": 4,
            "gt_seeds": 5,
            "epochs": 50,
            "hidden": [128, 128],
        },
    },
    changelog=_CHANGELOG,
)
