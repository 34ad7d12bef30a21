"""relational: RDB-PFN (arXiv 2603.03805), a relational foundation model pretrained purely on
synthetic databases, against a single-table PFN with equal compute and tree, linear and nearest-
neighbour baselines on the same DFS-linearized inputs.

Problem: ``papergym/RDBFewShot-v0`` (a Task). Modules: ``generator`` (the relational prior and
its tasks), ``dfs`` (the linearization), ``package_tasks`` (scikit-learn's bundled tables split
into related tables), ``evaluate`` (shot draws, AUC), ``task`` (the view and the evaluator).
"""

from papergym.registry import register

register(
    "papergym/RDBFewShot-v0",
    entry_point="papergym.envs.relational.task:RDBFewShotTask",
    kind="task",
    family="relational",
    paper="rdbpfn2026",
    tiers={
        "smoke": {"n_id": 2, "n_shift": 2, "digits": [0], "cancer": True, "diabetes": False,
                  "shots": [32, 128], "shot_seeds": 1, "test_pool": 200, "min_entities": 400},
        "standard": {"n_id": 8, "n_shift": 16, "digits": list(range(10)), "cancer": True, "diabetes": True,
                     "shots": [32, 128], "shot_seeds": 1, "test_pool": 150, "min_entities": 762,
                     "tasks_per_database": 16, "prior_entities": 192},
        "full": {"n_id": 30, "n_shift": 30, "digits": list(range(10)), "cancer": True, "diabetes": True,
                 "shots": [32, 64, 128, 256, 512, 1024], "shot_seeds": 5, "test_pool": 500,
                 "min_entities": 1524, "prior_tasks": 2_000_000, "prior_entities": 256},
    },
    changelog={"v0": "initial release"},
)
