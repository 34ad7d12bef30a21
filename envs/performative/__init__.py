"""performative: On the Computational Complexity of Performative Prediction (ICML 2026).

Problems: PerformativeAffine-v1 (the affine hard class, four instance families; v0 is
superseded: its nonexpansive stable point is the ellipsoid's starting point),
PerformativeGame-v0 (the polymatrix/bimatrix instances as a PettingZoo game),
StrategicCredit-v0 (the Perdomo et al. credit model on the data shipped in ``whynot``),
StrategicJury-v0 (the Local-MaxCut gadget of the PLS-hardness proof).
"""

from papergym.registry import register

PAPER = "anagnostides2026"
CHANGELOG = {"v0": "initial release"}
AFFINE_CHANGELOG = {
    "v0": "initial release (superseded by v1: nonexpansive stable point at the center of X)",
    "v1": "random stable points for every family; Savani-von Stengel games; MILP exact "
          "stable points for d > 10",
}
AFFINE_TIERS = {
    "smoke": {"family": "contractive", "d": 2, "rho": 0.5, "T": 50, "n_eval_instances": 3},
    "standard": {"family": "contractive", "d": 5, "rho": 0.9, "T": 2000, "n_eval_instances": 5},
    "full": {"family": "contractive", "d": 20, "rho": 0.99, "T": 100_000,
             "n_eval_instances": 200},
}

register(
    "papergym/PerformativeAffine-v0",
    entry_point="papergym.envs.performative.affine:PerformativeAffineEnv",
    kind="env",
    max_episode_steps="T",
    task="papergym.envs.performative.affine:PerformativeAffineTask",
    family="performative",
    paper=PAPER,
    tiers=AFFINE_TIERS,
    changelog=AFFINE_CHANGELOG,
)

register(
    "papergym/PerformativeAffine-v1",
    entry_point="papergym.envs.performative.affine:PerformativeAffineEnvV1",
    kind="env",
    max_episode_steps="T",
    task="papergym.envs.performative.affine:PerformativeAffineTaskV1",
    family="performative",
    paper=PAPER,
    tiers=AFFINE_TIERS,
    changelog=AFFINE_CHANGELOG,
)

register(
    "papergym/StrategicJury-v0",
    entry_point="papergym.envs.performative.jury:StrategicJuryEnv",
    kind="env",
    max_episode_steps="flip_budget",
    task="papergym.envs.performative.jury:StrategicJuryTask",
    family="performative",
    paper=PAPER,
    tiers={
        "smoke": {"source": "random", "n_vertices": 6, "edge_prob": 0.5, "n_eval_graphs": 5},
        "standard": {"source": "random", "n_vertices": 16, "edge_prob": 0.3,
                     "n_eval_graphs": 10},
        "full": {"source": "file", "file": "g05_60.1", "n_eval_graphs": 10},
    },
    changelog=CHANGELOG,
)

register(
    "papergym/PerformativeGame-v0",
    entry_point="papergym.envs.performative.game:parallel_env",
    kind="parallel_env",
    task="papergym.envs.performative.game:PerformativeGameTask",
    family="performative",
    paper=PAPER,
    tiers={
        "smoke": {"kind": "bimatrix", "m": 2, "n": 2, "game": "cyclic", "T": 100,
                  "n_eval_games": 5},
        "standard": {"kind": "bimatrix", "m": 3, "n": 3, "game": "cyclic", "T": 2000,
                     "n_eval_games": 6},
        "full": {"kind": "bimatrix", "m": 10, "n": 10, "game": "general", "T": 100_000,
                 "n_eval_games": 20},
    },
    changelog=CHANGELOG,
)

register(
    "papergym/StrategicCredit-v0",
    entry_point="papergym.envs.performative.credit:StrategicCreditEnv",
    kind="env",
    max_episode_steps="T",
    task="papergym.envs.performative.credit:StrategicCreditTask",
    family="performative",
    paper=PAPER,
    tiers={
        "smoke": {"epsilon": 0.1, "l2": 1.0, "T": 5, "n_train": 1000},
        "standard": {"epsilon": 1.0, "l2": 1.0, "T": 25},
        "full": {"epsilon": 1.0, "l2": 1.0, "T": 100},
    },
    changelog=CHANGELOG,
)
