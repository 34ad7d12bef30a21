"""assimilation: LoPhyDA (Peng, Chen, Zhou, Yuan, ICML 2026) — cycling data assimilation where
a region is never observed: a low-rank completion prior and PDE-residual-guided diffusion against
ETKF, 3D-Var and score-based DA.

Problems: ``papergym/Lorenz96Cycling-v0`` (Lorenz-96, n = 40) and ``papergym/KolmogorovCycling-v1``
(2-D Kolmogorov flow, the full tier), Gymnasium envs where one step is one analysis cycle.
``KolmogorovCycling-v0`` stays registered and is superseded: its step truncated only the nonlinear
term, so an analysis's modes outside the 2/3-rule band fed the forecast (partly as aliases); v1
projects every stepped field onto the band.
Modules: ``models`` (L96 RK4, pseudo-spectral Kolmogorov flow), ``env`` (the cycling envs, the
training set, the physical residual), ``prior`` (the shared EDM window prior), ``task`` (the
view and the problem-computed metrics).
"""

from papergym.registry import register

_PAPER = "peng2026lophyda"
_CHANGELOG = {"v0": "initial release"}
_CHANGELOG_KF_V0 = {"v0": "initial release (superseded by v1)"}
_CHANGELOG_KF_V1 = {"v0": "initial release",
                    "v1": "complete 2/3 rule: every field the model steps is projected onto the retained "
                          "band, so an analysis's out-of-band modes no longer feed (or alias into) the "
                          "forecast"}
_KOLMOGOROV_TIERS = {
    "smoke": {"size": 16, "horizon": 6, "spinup": 2.0, "rho_obs": 0.2, "ensemble_size": 4,
              "tuning_runs": 0, "prior_steps": 40, "prior_hidden": 8},
    "standard": {"size": 16, "horizon": 20, "rho_obs": 0.1, "ensemble_size": 16, "tuning_runs": 12,
                 "tuning_horizon": 15, "train_trajectories": 16, "train_length": 100,
                 "prior_steps": 2000, "prior_hidden": 32},
    "full": {"size": 32, "horizon": 100, "spinup": 20.0, "rho_obs": 0.1, "ensemble_size": 20,
             "tuning_runs": 12, "tuning_horizon": 40, "tuning_seeds": 2, "train_trajectories": 64,
             "train_length": 200, "prior_steps": 20000, "prior_hidden": 32},
}

register(
    "papergym/Lorenz96Cycling-v0",
    entry_point="papergym.envs.assimilation.env:Lorenz96CyclingEnv",
    task="papergym.envs.assimilation.task:Lorenz96CyclingTask",
    kind="env",
    max_episode_steps="horizon",
    family="assimilation",
    paper=_PAPER,
    tiers={
        "smoke": {"horizon": 20, "rho_obs": 0.2, "ensemble_size": 20, "train_steps": 200, "tuning_runs": 0,
                  "tuning_horizon": 15, "tuning_seeds": 1, "train_trajectories": 16, "train_length": 100,
                  "prior_steps": 200},
        "standard": {"horizon": 100, "rho_obs": 0.1, "ensemble_size": 20, "train_steps": 1000,
                     "tuning_runs": 12, "tuning_horizon": 40, "tuning_seeds": 2, "train_trajectories": 64,
                     "train_length": 200, "prior_steps": 2000},
        "full": {"horizon": 200, "rho_obs": 0.1, "ensemble_size": 40, "train_steps": 10000,
                 "tuning_runs": 12, "tuning_horizon": 100, "tuning_seeds": 2, "train_trajectories": 256,
                 "train_length": 400, "prior_steps": 20000},
    },
    changelog=_CHANGELOG,
)

register(
    "papergym/KolmogorovCycling-v0",
    entry_point="papergym.envs.assimilation.env:KolmogorovCyclingEnv",
    task="papergym.envs.assimilation.task:KolmogorovCyclingTask",
    kind="env",
    max_episode_steps="horizon",
    family="assimilation",
    paper=_PAPER,
    tiers={k: dict(v) for k, v in _KOLMOGOROV_TIERS.items()},
    changelog=_CHANGELOG_KF_V0,
)

register(
    "papergym/KolmogorovCycling-v1",
    entry_point="papergym.envs.assimilation.env:KolmogorovCyclingV1Env",
    task="papergym.envs.assimilation.task:KolmogorovCyclingV1Task",
    kind="env",
    max_episode_steps="horizon",
    family="assimilation",
    paper=_PAPER,
    tiers={k: dict(v) for k, v in _KOLMOGOROV_TIERS.items()},
    changelog=_CHANGELOG_KF_V1,
)
