"""fedlearn: parameter-free federated learning under compression (ParFreFL, ICML 2026).

One problem, ``papergym/FedRounds-v0``: a PettingZoo ParallelEnv whose agents are the
clients and whose step is one communication round, scored by
:class:`papergym.envs.fedlearn.task.FedRoundsTask` (accuracy at a bit budget on a
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

register(
    "papergym/FedRounds-v0",
    entry_point="papergym.envs.fedlearn.env:parallel_env",
    kind="parallel_env",
    task="papergym.envs.fedlearn.task:FedRoundsTask",
    family="fedlearn",
    paper="yan26x",
    tiers={"smoke": _SMOKE, "standard": _STANDARD, "full": _FULL},
    changelog={"v0": "initial release"},
)
