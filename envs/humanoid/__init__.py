"""humanoid: XHugWBC, one whole-body policy for many humanoid bodies (ICML 2026).

Problems: XEmbodiedWalker-v1 (planar bipeds, 13 slots, slow walking under pushes; carries the
standard-tier claims) and XEmbodiedHumanoid-v1 (3-D humanoids with 12-32 actuated joints, 32
slots; full tier only). Both are built with mujoco.MjSpec. The v0 ids stay registered,
superseded.
"""

from papergym.registry import register

PAPER = "xue2026xhugwbc"
CHANGELOG = {"v0": "initial release"}
CHANGELOG_V1 = {
    "v0": "initial release (superseded by v1: a = 0 was hard to beat on its task and the "
          "specialist reference, trained for a fixed 4,096 steps, lost to it)",
    "v1": "slow walking (v* ~ U[0, 0.5] m/s) under pushes of up to 1 m/s by default; the "
          "specialist reference trained to a plateau (SB3 PPO, CleanRL settings, exploration "
          "std 0.2) and reported with a 95% interval of its gap over a = 0; 3-D: full tier only",
}

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

register(
    "papergym/XEmbodiedWalker-v1",
    entry_point="papergym.envs.humanoid.env:XEmbodiedWalkerEnvV1",
    kind="env",
    task="papergym.envs.humanoid.task:XEmbodiedWalkerTaskV1",
    family="humanoid",
    paper=PAPER,
    tiers={
        "smoke": {"bodies": "train", "pool_size": 2, "max_steps": 60, "train_steps": 512,
                  "eval_episodes": 1, "heldout": ["walker2d_v5"], "specialist_steps": 2048,
                  "specialist_chunk": 1024, "reference_episodes": 2, "validation_episodes": 1},
        "standard": {"bodies": "train", "pool_size": 16, "max_steps": 400,
                     "train_steps": 100_000, "eval_episodes": 2,
                     "heldout": ["walker2d_v5", "long_light", "short_heavy_arms"],
                     "specialist_steps": 150_000, "specialist_chunk": 50_000,
                     "reference_episodes": 8, "validation_episodes": 3},
        "full": {"bodies": "train", "pool_size": 256, "max_steps": 1000,
                 "train_steps": 200_000, "eval_episodes": 10, "heldout": "heldout",
                 "specialist_steps": 1_000_000, "specialist_chunk": 100_000,
                 "reference_episodes": 10, "validation_episodes": 5},
    },
    changelog=CHANGELOG_V1,
)

register(
    "papergym/XEmbodiedHumanoid-v1",
    entry_point="papergym.envs.humanoid.env:XEmbodiedHumanoidEnvV1",
    kind="env",
    task="papergym.envs.humanoid.task:XEmbodiedHumanoidTaskV1",
    family="humanoid",
    paper=PAPER,
    tiers={
        "smoke": {"bodies": ["gym_humanoid", "biped12"], "max_steps": 40, "train_steps": 256,
                  "eval_episodes": 1, "heldout": ["gym_humanoid"], "specialist_steps": 1024,
                  "specialist_chunk": 512, "reference_episodes": 2, "validation_episodes": 1},
        "full": {"bodies": "train", "pool_size": 256, "max_steps": 1000,
                 "train_steps": 100_000_000, "eval_episodes": 10, "heldout": "heldout",
                 "specialist_steps": 10_000_000, "specialist_chunk": 500_000,
                 "reference_episodes": 10, "validation_episodes": 5},
    },
    changelog=CHANGELOG_V1,
)
