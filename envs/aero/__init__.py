"""aero: UniDrag (ICML 2026) — a multi-output drag surrogate and Expectation-over-Transformation
(EoT) robust, constrained free-form-deformation shape optimization, on a 2-D D2Q9
lattice-Boltzmann stand-in for 3-D vehicle CFD.

Problems: ``papergym/DragSurrogate-v1`` (a Task: learn C_d, surface pressure, drag build-up and
the velocity field from a profile; R^2 on held-out shapes) and ``papergym/DragFFD2D-v1`` (a
Gymnasium env: FFD control-point moves under engineering constraints, a solver-call budget per
episode, and the final design verified at a finer resolution than agents may query). Their
``-v0`` versions stay registered and are superseded: v0's solver uses halfway bounce-back on the
body (a staircase wall), so C_d is a step function of sub-cell deformations; v1 interpolates the
wall position (Bouzidi et al. 2001).
Modules: ``lbm`` (the D2Q9 BGK solver), ``flow`` (the channel set-up and the targets), ``shapes``
(profiles, FFD, constraints), ``surrogate`` (the artifact format), ``env``, ``task``.
"""

from papergym.registry import register

_PAPER = "unidrag2026"
_CHANGELOG = {"v0": "initial release (superseded by v1)"}
_CHANGELOG_V1 = {"v0": "initial release",
                 "v1": "interpolated bounce-back on the body (the wall where the profile has it); "
                       "paired base / deformed shapes in the data, C_d of the data on each shape's "
                       "own frontal height; DragSurrogate accepts a zero gradient (the constant "
                       "trivial predictor)"}
# evaluation / verification resolutions: L cells per vehicle length, steps ~ 85 L (C_d stationary)
_SMOKE = {"eval_length": 10, "eval_steps": 400, "reynolds": 40.0}  # tau 0.575: quick, not stationary
_STANDARD = {"eval_length": 20, "eval_steps": 1700, "reynolds": 100.0}
_FULL = {"eval_length": 48, "eval_steps": 4080, "reynolds": 100.0}
_FFD_TIERS = {
    "smoke": {**_SMOKE, "verify_length": 10, "verify_steps": 400, "horizon": 20, "budget": 3,
              "n_train": 16, "eval_episodes": 1},
    "standard": {**_STANDARD, "verify_length": 32, "verify_steps": 2720, "horizon": 17, "budget": 16,
                 "n_train": 160, "eval_episodes": 2},
    "full": {**_FULL, "verify_length": 96, "verify_steps": 8160, "horizon": 65, "budget": 64,
             "n_train": 2000, "eval_episodes": 4},
}
_SURROGATE_TIERS = {
    "smoke": {**_SMOKE, "n_train": 16, "n_test": 8},
    "standard": {**_STANDARD, "n_train": 160, "n_test": 40},
    "full": {**_FULL, "n_train": 2000, "n_test": 400},
}

register(
    "papergym/DragFFD2D-v0",
    entry_point="papergym.envs.aero.env:DragFFD2DEnv",
    task="papergym.envs.aero.task:DragFFD2DTask",
    kind="env",
    max_episode_steps="horizon",
    family="aero",
    paper=_PAPER,
    tiers={k: dict(v) for k, v in _FFD_TIERS.items()},
    changelog=_CHANGELOG,
)

register(
    "papergym/DragSurrogate-v0",
    entry_point="papergym.envs.aero.task:DragSurrogateTask",
    kind="task",
    family="aero",
    paper=_PAPER,
    tiers={k: dict(v) for k, v in _SURROGATE_TIERS.items()},
    changelog=_CHANGELOG,
)

# v1: the same tiers on the interpolated bounce-back solver
register(
    "papergym/DragFFD2D-v1",
    entry_point="papergym.envs.aero.env:DragFFD2DEnvV1",
    task="papergym.envs.aero.task:DragFFD2DTaskV1",
    kind="env",
    max_episode_steps="horizon",
    family="aero",
    paper=_PAPER,
    tiers={k: dict(v) for k, v in _FFD_TIERS.items()},
    changelog=_CHANGELOG_V1,
)

register(
    "papergym/DragSurrogate-v1",
    entry_point="papergym.envs.aero.task:DragSurrogateTaskV1",
    kind="task",
    family="aero",
    paper=_PAPER,
    tiers={k: dict(v) for k, v in _SURROGATE_TIERS.items()},
    changelog=_CHANGELOG_V1,
)
