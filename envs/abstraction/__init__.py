"""abstraction: behavioural structures under state abstraction (Zhang, Luo & Baltieri, ICML 2026).

Problems: ``papergym/StateAbstraction-v0`` (a Task: abstraction routines scored on held-out
generated MDPs against exact oracles) and ``papergym/AbstractedGrid-v0`` (a rooms gridworld with
distractor bits, the RL-facing case with a known exact abstraction). Modules: ``core`` (labelled
MDPs, values, invariants, induced models), ``transport`` (exact W1 for small supports),
``oracles`` (bisimulation, the behavioural metric), ``instances`` (generators), ``grid`` (the
env), ``task`` (the Task and its view).
"""

from papergym.registry import register

PAPER = "zhang2026behavioral"
CHANGELOG = {"v0": "initial release"}

register(
    "papergym/StateAbstraction-v0",
    entry_point="papergym.envs.abstraction.task:StateAbstractionTask",
    kind="task",
    family="abstraction",
    paper=PAPER,
    tiers={
        "smoke": {"family": "lifted", "n_abstract": 5, "copies": [1, 3], "n_actions": 2,
                  "branching": 2, "n_eval_instances": 20, "n_train_instances": 3},
        "standard": {"family": "lifted", "n_abstract": [6, 10], "copies": [1, 3], "n_actions": 3,
                     "branching": 2, "n_eval_instances": 250, "n_train_instances": 10},
        "full": {"family": "lifted", "n_abstract": 500, "copies": [1, 20], "n_actions": 3,
                 "branching": 3, "gamma": 0.99, "n_eval_instances": 50, "n_train_instances": 10},
    },
    changelog=CHANGELOG,
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
