"""humanoid: XHugWBC, one whole-body policy for many humanoid bodies (ICML 2026).

Problems: XEmbodiedWalker-v0 (planar bipeds, 13 slots; carries the standard-tier claims) and
XEmbodiedHumanoid-v0 (3-D humanoids with 12-32 actuated joints, 32 slots; standard tier =
standing under pushes, locomotion = full tier). Both are built with mujoco.MjSpec.
"""

from papergym.registry import register

PAPER = "xue2026xhugwbc"
CHANGELOG = {"v0": "initial release"}

register(
    "papergym/XEmbodiedWalker-v0",
    entry_point="papergym.envs.humanoid.env:XEmbodiedWalkerEnv",
    kind="env",
    task="papergym.envs.humanoid.task:XEmbodiedWalkerTask",
    family="humanoid",
    paper=PAPER,
    tiers={
        "smoke": {"bodies": "train", "pool_size": 2, "max_steps": 200, "train_steps": 512,
                  "eval_episodes": 1, "heldout": ["walker2d_v5"], "specialist_steps": 256,
                  "reference_episodes": 1},
        "standard": {"bodies": "train", "pool_size": 16, "max_steps": 400,
                     "train_steps": 20_000, "eval_episodes": 2,
                     "heldout": ["walker2d_v5", "long_light", "short_heavy_arms"],
                     "specialist_steps": 20_000, "reference_episodes": 2},
        "full": {"bodies": "train", "pool_size": 256, "max_steps": 1000,
                 "train_steps": 200_000, "eval_episodes": 10, "heldout": "heldout",
                 "specialist_steps": 100_000, "reference_episodes": 10},
    },
    changelog=CHANGELOG,
)

register(
    "papergym/XEmbodiedHumanoid-v0",
    entry_point="papergym.envs.humanoid.env:XEmbodiedHumanoidEnv",
    kind="env",
    task="papergym.envs.humanoid.task:XEmbodiedHumanoidTask",
    family="humanoid",
    paper=PAPER,
    tiers={
        "smoke": {"bodies": ["gym_humanoid", "biped12"], "max_steps": 100, "task": "stand",
                  "train_steps": 256, "eval_episodes": 1, "heldout": ["gym_humanoid"],
                  "specialist_steps": 128, "reference_episodes": 1},
        "standard": {"bodies": "train", "pool_size": 8, "max_steps": 250, "task": "stand",
                     "push_interval_s": 2.0, "train_steps": 10_000, "eval_episodes": 2,
                     "heldout": ["gym_humanoid", "h1_like_19"], "specialist_steps": 10_000,
                     "reference_episodes": 2},
        "full": {"bodies": "train", "pool_size": 256, "max_steps": 1000, "task": "walk",
                 "train_steps": 100_000_000, "eval_episodes": 10, "heldout": "heldout",
                 "specialist_steps": 10_000_000, "reference_episodes": 10},
    },
    changelog=CHANGELOG,
)
