"""abstraction: behavioural structures under state abstraction (Zhang, Luo & Baltieri, ICML 2026).

Problems: ``papergym/StateAbstraction-v1`` (a Task: abstraction routines scored on held-out
generated MDPs against exact oracles; rewards from {0, 0.5, 1}, so one-step signatures and the
coarsest bisimulation differ; ``StateAbstraction-v0``, with rewards from U[0, 1] where they
coincide, stays registered, superseded) and ``papergym/AbstractedGrid-v0`` (a rooms gridworld with
distractor bits, the RL-facing case with a known exact abstraction). Modules: ``core`` (labelled
MDPs, values, invariants, induced models), ``transport`` (exact W1 for small supports),
``oracles`` (bisimulation, the behavioural metric), ``instances`` (generators), ``grid`` (the
env), ``task`` (the Task and its view).
"""

from papergym.registry import register

PAPER = "zhang2026behavioral"
CHANGELOG = {"v0": "initial release"}
CHANGELOG_V0 = {"v0": "initial release (superseded by v1: with rewards from U[0, 1] the one-step "
                      "partition equals the coarsest bisimulation on every generated instance)"}
CHANGELOG_V1 = {"v0": "initial release",
                "v1": "rewards from 3 repeated values {0, 0.5, 1}: one-step signatures and the "
                      "coarsest bisimulation differ"}
_TASK_TIERS = {
    "smoke": {"family": "lifted", "n_abstract": 5, "copies": [1, 3], "n_actions": 2,
              "branching": 2, "n_eval_instances": 20, "n_train_instances": 3},
    "standard": {"family": "lifted", "n_abstract": [6, 10], "copies": [1, 3], "n_actions": 3,
                 "branching": 2, "n_eval_instances": 250, "n_train_instances": 10},
    "full": {"family": "lifted", "n_abstract": 500, "copies": [1, 20], "n_actions": 3,
             "branching": 3, "gamma": 0.99, "n_eval_instances": 50, "n_train_instances": 10},
}

register(
    "papergym/StateAbstraction-v0",
    entry_point="papergym.envs.abstraction.task:StateAbstractionTask",
    kind="task",
    family="abstraction",
    paper=PAPER,
    tiers=_TASK_TIERS,
    changelog=CHANGELOG_V0,
)

register(
    "papergym/StateAbstraction-v1",
    entry_point="papergym.envs.abstraction.task:StateAbstractionTaskV1",
    kind="task",
    family="abstraction",
    paper=PAPER,
    tiers={tier: {**kwargs, "reward_levels": 3} for tier, kwargs in _TASK_TIERS.items()},
    changelog=CHANGELOG_V1,
)

register(
    "papergym/AbstractedGrid-v0",
    entry_point="papergym.envs.abstraction.grid:AbstractedGridEnv",
    kind="env",
    max_episode_steps="max_steps",
    family="abstraction",
    paper=PAPER,
    tiers={
        "smoke": {"size": 5, "n_bits": 1, "train_steps": 2000, "eval_episodes": 4},
        "standard": {"size": 9, "n_bits": 3, "train_steps": 200_000, "eval_episodes": 50},
        "full": {"size": 25, "n_bits": 6, "train_steps": 2_000_000, "eval_episodes": 100},
    },
    changelog=CHANGELOG,
)
