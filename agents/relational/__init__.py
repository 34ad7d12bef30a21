"""relational agents: RDB-PFN (the method), the single-table PFN with equal compute (and its
stage-A checkpoint), and scikit-learn's gradient boosting (with the target-table-only ablation),
random forest, logistic regression, kNN and the constant predictor on the same DFS inputs."""

from papergym.agents.relational import rdbpfn, single_pfn, sk_baselines  # noqa: F401  (registers them)
