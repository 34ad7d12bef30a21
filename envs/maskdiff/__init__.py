"""maskdiff: G-Star, star-shaped sampling with a learned remasker for masked diffusion language
models (arXiv 2510.08369) — sample quality against denoising steps and forward passes on a
synthetic HMM language with exact likelihood, for MDLM, ReMDM, star-shaped samplers with
random or confidence scores, and G-Star's learned remasker (full and single-layer fine-tunes).

Problems: ``papergym/MaskedDiffusionHMM-v0`` (a Task: the agent returns a sampler, the problem
runs it at each step count and scores exact gen-NLL with a diversity guard) and
``papergym/MDMRemask-v1`` (a Gymnasium env: one star step per action, the action scoring which
positions to remask; natively vectorized; v0 kept, whose default T = 8 gives one decision).
Modules: ``language`` (the sealed per-seed HMM),
``denoiser`` (the problem-owned MDM and the oracle), ``steps`` (the step functions shared by
samplers and env), ``evaluate`` (gen-NLL, the guard, ROC-AUC), ``task``, ``env``.
"""

from papergym.registry import register

_PAPER = "gstar2026"
_CHANGELOG = {"v0": "initial release"}
_SMOKE = {"states": 8, "vocab": 16, "length": 16, "d_model": 64, "n_layer": 2, "n_head": 2,
          "denoiser_steps": 200, "denoiser_batch": 64, "n_reference": 2000}
_STANDARD = {"states": 16, "vocab": 24, "length": 32, "d_model": 64, "n_layer": 2, "n_head": 2,
             "denoiser_steps": 800, "denoiser_batch": 64}
_FULL = {"states": 64, "vocab": 64, "length": 256, "d_model": 384, "n_layer": 8, "n_head": 8,
         "denoiser_steps": 20000, "denoiser_batch": 64}

register(
    "papergym/MaskedDiffusionHMM-v0",
    entry_point="papergym.envs.maskdiff.task:MaskedDiffusionTask",
    kind="task",
    family="maskdiff",
    paper=_PAPER,
    tiers={"smoke": {**_SMOKE, "steps": [4, 8], "n_samples": 128, "few": 4, "many": 8,
                     "matched_passes": 0, "train_sequences": 6_400},
           "standard": {**_STANDARD, "steps": [4, 8, 16, 32], "n_samples": 256, "few": 8, "many": 32,
                        "matched_passes": 19, "train_sequences": 25_600, "n_reference": 4000},
           "full": {**_FULL, "steps": [8, 16, 32, 64], "n_samples": 2048, "few": 8, "many": 64,
                    "matched_passes": 19, "train_sequences": 2_000_000, "n_reference": 10_000}},
    changelog=_CHANGELOG,
)

register(
    "papergym/MDMRemask-v0",
    entry_point="papergym.envs.maskdiff.env:MDMRemaskEnv",
    vector_entry_point="papergym.envs.maskdiff.env:MDMRemaskVectorEnv",
    kind="env",
    max_episode_steps="episode_steps",
    family="maskdiff",
    paper=_PAPER,
    tiers={"smoke": {"T": 8, **_SMOKE},
           "standard": {"T": 16, **_STANDARD},
           "full": {"T": 64, **_FULL}},
    changelog=_CHANGELOG,
)

register(
    "papergym/MDMRemask-v1",
    entry_point="papergym.envs.maskdiff.env:MDMRemaskV1Env",
    vector_entry_point="papergym.envs.maskdiff.env:MDMRemaskV1VectorEnv",
    max_episode_steps="episode_steps",  # floor(t_on T) - 1 decisions: 8 at the defaults
    kind="env",
    family="maskdiff",
    paper=_PAPER,
    tiers={"smoke": {"T": 16, **_SMOKE},
           "standard": {"T": 32, **_STANDARD},
           "full": {"T": 64, **_FULL}},
    changelog={"v0": "initial release",
               "v1": "default T = 32 (8 decisions; v0's T = 8 gave one); smoke T = 16, standard T = 32"},
)
