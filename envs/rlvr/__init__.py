"""rlvr: reinforcement learning with verifiable rewards on tiny language models.

One substrate for two ICML 2026 papers: ResRL (negative-sample projection residual RL,
arXiv 2605.00380) and VCPO (variance-controlled policy optimization for asynchronous RL,
arXiv 2602.17616). Four verifiable tasks (countdown, subset-sum, mod-linear, add-scratch)
share one token-level env (``env.RLVREnv``) and one Task (``task.RLVRTask``) whose view
(``view.RLVRView``) serves batched rollouts, problem-side stale rollouts (``async_lag``) and
a problem-owned SFT base policy (``base_policy``). Metrics live in ``evaluate``.
"""

from papergym.registry import register

_PAPER = "resrl2026+vcpo2026"
C_GEN, C_TRAIN = 2.5e-5, 5.7e-5  # v1 standard CPU-s per generated / trained token (measured)
_CHANGELOG = {"v0": "initial release"}
_CHANGELOG_V1 = {
    "v0": "initial release (superseded by v1: its SFT base could not do the task at the standard "
          "tier and its eval prompts changed with the seed)",
    "v1": "corrupt_fraction and sft_pool_size as task arguments; a fixed-step SFT base per seed "
          "group (3 at standard); one sealed eval set for every seed with per-prompt units; "
          "learning curves on 256 samples per point; collapse relative to the base with a noise "
          "margin; sustained target crossings; per-token costs measured on the reference machine",
}

# Scale per tier [recon]; see RLVREnv's docstring. Sizes are per task below.
_SMOKE = {"d_model": 32, "n_layer": 1, "n_head": 2, "sft_max_steps": 150, "sft_check_every": 50,
          "sft_pool_size": 500, "sft_seed_pool": 1, "responses": 96, "eval_prompts": 16, "avg_samples": 16,
          "passk_prompts": 8, "passk_samples": 16, "final_samples": 8, "validation_prompts": 16,
          "validation_samples": 4, "curve_every": 2, "lld_prompts": 8}
_STANDARD = {"d_model": 64, "n_layer": 2, "n_head": 2, "sft_max_steps": 1500,
             "sft_check_every": 250, "sft_seed_pool": 1, "sft_pool_size": 2000, "responses": 1536,
             "eval_prompts": 48, "avg_samples": 16, "passk_prompts": 16, "passk_samples": 128,
             "final_samples": 4, "validation_prompts": 32, "validation_samples": 4,
             "curve_every": 4, "lld_prompts": 8}
_FULL = {"d_model": 256, "n_layer": 6, "n_head": 8, "sft_max_steps": 20000,
         "sft_check_every": 100, "sft_pool_size": 50000, "responses": 512000,
         "eval_prompts": 512, "avg_samples": 16, "passk_prompts": 512, "passk_samples": 256,
         "final_samples": 16, "validation_prompts": 64, "validation_samples": 4,
         "curve_every": 10, "lld_prompts": 64}

_SIZES = {
    "Countdown": {"smoke": 3, "standard": 3, "full": 4},
    "SubsetSum": {"smoke": 6, "standard": 8, "full": 10},
    "ModLinear": {"smoke": 13, "standard": 97, "full": 97},
    "AddScratch": {"smoke": 4, "standard": 8, "full": 16},
}

for _name, _sizes in _SIZES.items():
    register(
        f"papergym/RLVR{_name}-v0",
        entry_point=f"papergym.envs.rlvr.env:{_name}Env",
        kind="env",
        task=f"papergym.envs.rlvr.env:{_name}Task",
        family="rlvr",
        paper=_PAPER,
        tiers={
            "smoke": {**_SMOKE, "size": _sizes["smoke"]},
            "standard": {**_STANDARD, "size": _sizes["standard"]},
            "full": {**_FULL, "size": _sizes["full"]},
        },
        changelog=_CHANGELOG,
    )

# v1 [recon]: a base that can do the task (Avg@16 0.3-0.5 with errors RL can remove), one
# sealed eval set of 256 prompts for every seed, learning curves of 128 prompts x 4 samples.
# c_gen / c_train: seconds per generated / trained token on the reference 2-core machine at
# this tier, measured by benchmarks/perf/rlvr_token_costs.py (two runs: 2.7e-5 / 6.0e-5 and
# 2.3e-5 / 5.3e-5; their means frozen here, part of the version hash).
_SMOKE_V1 = {**_SMOKE, "sft_target_accuracy": 1.0, "corrupt_fraction": 0.3, "sft_seed_pool": 1,
             "validation_prompts": 16, "eval_prompts": 16, "passk_prompts": 8,
             "passk_samples": 16, "lld_prompts": 8}
_STANDARD_V1 = {"d_model": 64, "n_layer": 2, "n_head": 2, "sft_max_steps": 1500,
                "sft_check_every": 500, "sft_target_accuracy": 1.0, "sft_pool_size": 20000,
                "sft_seed_pool": 3, "corrupt_fraction": 0.3, "responses": 12800,
                "eval_prompts": 256, "avg_samples": 16, "passk_prompts": 128, "passk_samples": 64,
                "final_samples": 8, "validation_prompts": 128, "validation_samples": 4,
                "curve_every": 10, "lld_prompts": 32, "collapse_margin": 0.1, "sustain": 2,
                "target_gain": 0.03,
                "c_gen": C_GEN, "c_train": C_TRAIN}
_FULL_V1 = {**_FULL, "sft_target_accuracy": 1.0, "corrupt_fraction": 0.3, "sft_seed_pool": 0,
            "validation_samples": 4}
_SIZES_V1 = {
    "Countdown": {"smoke": 3, "standard": 3, "full": 4},
    "SubsetSum": {"smoke": 4, "standard": 5, "full": 8},
    "ModLinear": {"smoke": 13, "standard": 97, "full": 97},
    "AddScratch": {"smoke": 4, "standard": 4, "full": 8},
}

for _name, _sizes in _SIZES_V1.items():
    register(
        f"papergym/RLVR{_name}-v1",
        entry_point=f"papergym.envs.rlvr.env:{_name}EnvV1",
        kind="env",
        task=f"papergym.envs.rlvr.env:{_name}TaskV1",
        family="rlvr",
        paper=_PAPER,
        tiers={
            "smoke": {**_SMOKE_V1, "size": _sizes["smoke"]},
            "standard": {**_STANDARD_V1, "size": _sizes["standard"]},
            "full": {**_FULL_V1, "size": _sizes["full"]},
        },
        changelog=_CHANGELOG_V1,
    )
