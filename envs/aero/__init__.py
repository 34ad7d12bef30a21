"""aero: UniDrag (ICML 2026) — a multi-output drag surrogate and Expectation-over-Transformation
(EoT) robust, constrained free-form-deformation shape optimization, on a 2-D D2Q9
lattice-Boltzmann stand-in for 3-D vehicle CFD.

Problems: ``papergym/DragSurrogate-v0`` (a Task: learn C_d, surface pressure, drag build-up and
the velocity field from a profile; R^2 on held-out shapes) and ``papergym/DragFFD2D-v0`` (a
Gymnasium env: FFD control-point moves under engineering constraints, a solver-call budget per
episode, and the final design verified at a finer resolution than agents may query).
Modules: ``lbm`` (the D2Q9 BGK solver), ``flow`` (the channel set-up and the targets), ``shapes``
(profiles, FFD, constraints), ``surrogate`` (the artifact format), ``env``, ``task``.
"""

from papergym.registry import register

_PAPER = "unidrag2026"
_CHANGELOG = {"v0": "initial release"}
# evaluation / verification resolutions: L cells per vehicle length, steps ~ 85 L (C_d stationary)
_SMOKE = {"eval_length": 10, "eval_steps": 400, "reynolds": 40.0}  # tau 0.575: quick, not stationary
_STANDARD = {"eval_length": 20, "eval_steps": 1700, "reynolds": 100.0}
_FULL = {"eval_length": 48, "eval_steps": 4080, "reynolds": 100.0}

register(
    "papergym/DragFFD2D-v0",
    entry_point="papergym.envs.aero.env:DragFFD2DEnv",
    task="papergym.envs.aero.task:DragFFD2DTask",
    kind="env",
    family="aero",
    paper=_PAPER,
    tiers={
        "smoke": {**_SMOKE, "verify_length": 10, "verify_steps": 400, "horizon": 20, "budget": 3,
                  "n_train": 16, "eval_episodes": 1},
        "standard": {**_STANDARD, "verify_length": 32, "verify_steps": 2720, "horizon": 17, "budget": 16,
                     "n_train": 160, "eval_episodes": 2},
        "full": {**_FULL, "verify_length": 96, "verify_steps": 8160, "horizon": 65, "budget": 64,
                 "n_train": 2000, "eval_episodes": 4},
    },
    changelog=_CHANGELOG,
)

register(
    "papergym/DragSurrogate-v0",
    entry_point="papergym.envs.aero.task:DragSurrogateTask",
    kind="task",
    family="aero",
    paper=_PAPER,
    tiers={
        "smoke": {**_SMOKE, "n_train": 16, "n_test": 8},
        "standard": {**_STANDARD, "n_train": 160, "n_test": 40},
        "full": {**_FULL, "n_train": 2000, "n_test": 400},
    },
    changelog=_CHANGELOG,
)
