"""fedlearn: parameter-free federated learning under compression (ParFreFL, ICML 2026).

``papergym/FedRounds-v1`` (``FedRounds-v0`` is superseded, still registered): a PettingZoo
ParallelEnv whose agents are the clients and whose step is one communication round, scored
by :class:`papergym.envs.fedlearn.task.FedRoundsTaskV1` (accuracy at a bit budget on a
held-out instance). Entry points are strings so ``import papergym`` stays light.
"""

from papergym.registry import register

_SMOKE = dict(data="logreg_synth", synth_alpha=0.5, synth_beta=0.5, num_clients=10,
              participants=5, local_steps=5, batch_size=16, rounds=20, bit_budget_rounds=10,
              tuning_seeds=1)
# standard, scaled to the 2-core budget (spec: K = 10, T = 200, B_bits = 100 FedAvg rounds,
# 3 tuning seeds): K = 5, T = 50, B_bits = 25 dense-FedAvg rounds (half the horizon, as
# 100 of 200), 2 tuning instances
_STANDARD = dict(data="digits_dirichlet", alpha=0.5, num_clients=50, participants=10,
                 local_steps=5, batch_size=32, rounds=50, bit_budget_rounds=25, tuning_seeds=2)
# full: the paper's N/S/K/T on digits (MNIST/FMNIST are not shipped with any installed package)
_FULL = dict(data="digits_dirichlet", alpha=0.1, num_clients=100, participants=10,
             local_steps=2, batch_size=32, rounds=150, bit_budget_rounds=75, tuning_seeds=3)

# v0 (superseded by v1): K = 5, T = 50 gives beta = min(1, sqrt(SK/T)) = 1, i.e. no momentum,
# and batches without replacement give most Dirichlet(0.1) clients exact gradients
register(
    "papergym/FedRounds-v0",
    entry_point="papergym.envs.fedlearn.env:parallel_env",
    kind="parallel_env",
    task="papergym.envs.fedlearn.task:FedRoundsTask",
    family="fedlearn",
    paper="yan26x",
    tiers={"smoke": _SMOKE, "standard": _STANDARD, "full": _FULL},
    changelog={"v0": "initial release (superseded by v1)"},
)

# v1: the paper's regime. K = 2, T = 100: SK/T = 0.2, beta = 0.45 (the paper: K = 2, 80-150
# rounds); the same gradient work per run as v0's standard tier (K T = 200 vs 250). B = 16 rows
# drawn with replacement: every client's gradient is noisy. A warm-up round with all N clients.
# B_bits = 50 rounds of dense FedAvg (half the horizon, as in v0 and the family spec).
_V1 = dict(sampling="with_replacement", warmup_round=True)
_SMOKE_V1 = dict(_V1, data="logreg_synth", synth_alpha=0.5, synth_beta=0.5, num_clients=10,
                 participants=5, local_steps=2, batch_size=8, rounds=20, bit_budget_rounds=10,
                 tuning_seeds=1)
_STANDARD_V1 = dict(_V1, data="digits_dirichlet", alpha=0.5, num_clients=50, participants=10,
                    local_steps=2, batch_size=16, rounds=100, bit_budget_rounds=50,
                    tuning_seeds=2)
_FULL_V1 = dict(_V1, data="digits_dirichlet", alpha=0.1, num_clients=100, participants=10,
                local_steps=2, batch_size=16, rounds=150, bit_budget_rounds=75, tuning_seeds=3)

register(
    "papergym/FedRounds-v1",
    entry_point="papergym.envs.fedlearn.env:parallel_env_v1",
    kind="parallel_env",
    task="papergym.envs.fedlearn.task:FedRoundsTaskV1",
    family="fedlearn",
    paper="yan26x",
    tiers={"smoke": _SMOKE_V1, "standard": _STANDARD_V1, "full": _FULL_V1},
    changelog={"v0": "initial release",
               "v1": "paper's momentum regime (K = 2, T = 100), minibatches with replacement, "
                     "warm-up round, censored bits-to-target"},
)
