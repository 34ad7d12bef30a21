"""``DragFFD2D-v1`` (and the superseded ``-v0``): constrained FFD shape optimization of a 2-D
vehicle profile against an LBM drag solver, with a per-episode solver-call budget and a
finer-resolution verification. v1 puts the body's wall where the profile has it (interpolated
bounce-back); v0 put it half way between lattice nodes (a staircase)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from papergym import cache
from papergym.actions import InvalidAction, check_action
from papergym.envs.aero import flow, lbm, shapes
from papergym.envs.aero.flow import Grid, simulate

# the sources every solver result depends on (the cache key's code part): the solver, the set-up
# and the shapes; docstrings of the problems do not re-key cached flows
SOLVER_CODE = (Path(lbm.__file__), Path(flow.__file__), Path(shapes.__file__))
HALVINGS = 12


def draw_shape(seed_rng: np.random.Generator) -> tuple[int, np.ndarray]:
    body_type = int(seed_rng.integers(len(shapes.BODY_TYPES)))
    return body_type, shapes.make_shape(body_type, seed_rng)


def project(base: np.ndarray, basis: np.ndarray, start: np.ndarray,
            z: np.ndarray) -> tuple[np.ndarray, float]:
    """The largest feasible fraction (12 halvings) of the segment from the feasible ``start`` to
    ``z``: the design the env evaluates for an infeasible ``z``. Public, so agents can submit
    designs the env leaves untouched."""
    if shapes.feasible(shapes.deform(base, basis, z), base):
        return z, 1.0
    lo, hi = 0.0, 1.0
    for _ in range(HALVINGS):
        mid = 0.5 * (lo + hi)
        if shapes.feasible(shapes.deform(base, basis, start + mid * (z - start)), base):
            lo = mid
        else:
            hi = mid
    return start + lo * (z - start), lo


def base_drag_entry(points: np.ndarray, grid: Grid) -> cache.Entry:
    """C_d of a base shape at one resolution, cached by the shape's bytes (shared by agents)."""
    points = np.ascontiguousarray(points, dtype=np.float64)
    digest = hashlib.sha256(points.tobytes()).hexdigest()
    h_ref = float(shapes.frontal_height(points))
    return cache.Entry("aero/base_drag", {"shape": digest, "grid": grid.as_dict()},
                       build=lambda: simulate(points, h_ref, grid)["cd"], code=SOLVER_CODE)


class DragFFD2DEnv(gym.Env):
    """
    ## Description
    A 2-D vehicle side profile (one of four body types, drawn at ``reset``) sits on a road in a
    D2Q9 lattice-Boltzmann channel flow at Reynolds ``reynolds`` (based on the vehicle length).
    The agent moves the six movable control points of a 5 x 3 free-form-deformation lattice
    (z in R^12, units of L) to reduce drag under engineering constraints. Each step sets the
    design; with ``verify = 1`` the problem runs the LBM at the evaluation resolution and charges
    one of the episode's ``budget`` solver calls. At the end the problem verifies the final design
    at the finer verification resolution, which agents cannot query: a design that only fools the
    coarse solver (or a surrogate of it) shows up there.

    ## Action Space
    ``Dict{z: Box(-delta_max, delta_max, (12,), float32), verify: Discrete(2)}``. z is the full
    (absolute) displacement of the movable control points (top row x5, middle rear point; x and
    y of each). z outside the box raises ``InvalidAction``. A z whose deformed shape breaks a
    constraint (frontal height <= 1.01 h0, |area/area0 - 1| <= 3%, clearance >= c0 - 0.005 L,
    simple polygon) is rejected and projected: the env takes the largest feasible fraction of
    the segment from the last feasible design to z (12 halvings; ``info["projected"]``,
    ``info["fraction"]``, and ``info["violations"]`` / ``info["message"]`` name the broken
    constraints and their slacks).

    ## Observation Space
    ``Dict{z: Box(12), shape: Box(128, 2), base_shape: Box(128, 2), body_type: Discrete(4),
    cd0: Box(1), last_verified_cd: Box(1), budget_left: Discrete(budget + 1),
    steps_left: Discrete(horizon + 1)}`` (float32 boxes; shapes in units of L).

    ## Rewards
    A verified step: (C_d,prev - C_d,new) / C_d,0 at the evaluation resolution (C_d,prev is the
    last verified value, initially C_d,0). Verify with no budget left is refused
    (``info["verify_refused"]``, reward 0). The last step's reward is the final score minus the
    earlier rewards, so the return is the final score: (C_d,0^ver - C_d^ver) / C_d,0^ver at the
    verification resolution.

    ## Starting State
    A test shape from the seed (body type uniform), z = 0, C_d,0 computed at the evaluation
    resolution (not charged; cached by shape).

    ## Episode End
    Truncation after ``horizon`` steps, then the uncharged verification. ``info`` at the end:
    ``final_reduction``, ``final_cd_verify``, ``cd0_verify``, ``final_cd_eval`` (the final design
    at the evaluation resolution), ``mean_displacement`` / ``max_displacement`` (% of L),
    constraint slacks, ``lbm_calls``.

    ## Arguments
    ``eval_length`` / ``eval_steps``: vehicle length in cells and steps at the evaluation
    resolution; ``verify_length`` / ``verify_steps``: the same at the verification resolution;
    ``reynolds``; ``horizon`` (steps); ``budget`` (solver calls per episode); ``delta_max``
    (control-point box, units of L); ``dtype`` (float32 or float64 LBM).

    ## Tiers
    defaults (API checks only): L = 8 cells / 120 steps at Re 20, horizon 20, budget 3. smoke: L = 10
    / 400 steps at Re 40 for both resolutions, horizon 20, budget 3. standard (Re 100): eval
    L = 20 / 1,700 steps, verification L = 32 / 2,720 steps, horizon 17, budget 16. full: eval L
    = 48, verification L = 96, horizon 65, budget 64 (the GPU-scale grids of the paper are not
    reached on CPU).

    ## Reference
    UniDrag (ICML 2026, abstract): FFD under engineering constraints with CFD verification.
    The 2-D LBM stand-in, the shapes, the constraints and delta_max are reconstructed [recon].

    ## Version History
    * v0: initial release. Superseded by ``DragFFD2D-v1`` (:class:`DragFFD2DEnvV1`): v0's halfway
      bounce-back puts the body's wall half way between lattice nodes, so C_d at the evaluation
      resolution is a step function of z (constant until a node changes side), and the
      evaluation and verification resolutions disagree on which small deformations help.
    """

    metadata = {"render_modes": []}
    env_id = "papergym/DragFFD2D-v0"
    boundary = "halfway"  # the body's bounce-back rule (flow.Grid.boundary)

    def __init__(self, eval_length: int = 8, eval_steps: int = 120, verify_length: int = 8,
                 verify_steps: int = 120, reynolds: float = 20.0, horizon: int = 20, budget: int = 3,
                 delta_max: float = 0.06, dtype: str = "float32") -> None:
        self.eval_grid = Grid(length=eval_length, steps=eval_steps, reynolds=reynolds, dtype=dtype,
                              boundary=self.boundary)
        self.verify_grid = Grid(length=verify_length, steps=verify_steps, reynolds=reynolds, dtype=dtype,
                                boundary=self.boundary)
        for name, value, low in (("horizon", horizon, 1), ("budget", budget, 0)):
            if not isinstance(value, int) or value < low:
                raise ValueError(f"{self.env_id}: {name} must be an integer >= {low}, got {value!r}")
        if not 0.0 < delta_max <= 0.2:
            raise ValueError(f"{self.env_id}: delta_max must be in (0, 0.2] (units of L), got {delta_max!r}")
        self.horizon, self.max_budget, self.delta_max = horizon, budget, float(delta_max)
        box = spaces.Box(-self.delta_max, self.delta_max, (shapes.N_Z,), np.float32)
        self.action_space = spaces.Dict({"z": box, "verify": spaces.Discrete(2)})
        self.observation_space = spaces.Dict({
            "z": box,
            "shape": spaces.Box(-1.0, 2.0, (shapes.K, 2), np.float32),
            "base_shape": spaces.Box(-1.0, 2.0, (shapes.K, 2), np.float32),
            "body_type": spaces.Discrete(len(shapes.BODY_TYPES)),
            "cd0": spaces.Box(-np.inf, np.inf, (1,), np.float32),
            "last_verified_cd": spaces.Box(-np.inf, np.inf, (1,), np.float32),
            "budget_left": spaces.Discrete(budget + 1),
            "steps_left": spaces.Discrete(horizon + 1),
        })
        self.base: np.ndarray | None = None

    # ------------------------------------------------------------------ helpers

    def _observation(self) -> dict[str, Any]:
        return {"z": self.z.astype(np.float32), "shape": self.points.astype(np.float32),
                "base_shape": self.base.astype(np.float32), "body_type": self.body_type,
                "cd0": np.array([self.cd0], np.float32),
                "last_verified_cd": np.array([self.last_cd], np.float32),
                "budget_left": self.budget_left, "steps_left": self.horizon - self.t}

    def design(self, z: np.ndarray) -> np.ndarray:
        return shapes.deform(self.base, self.basis, np.asarray(z, dtype=np.float64))

    def _project(self, z: np.ndarray) -> tuple[np.ndarray, float]:
        """The largest feasible fraction of the segment from the last feasible design to z."""
        return project(self.base, self.basis, self.z, z)

    # ------------------------------------------------------------------ API

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        super().reset(seed=seed)
        self.body_type, self.base = draw_shape(self.np_random)
        self.basis = shapes.ffd_basis(self.base)
        self.h0 = float(shapes.frontal_height(self.base))
        self.z = np.zeros(shapes.N_Z)
        self.points = self.base.copy()
        self.cd0 = float(cache.get(base_drag_entry(self.base, self.eval_grid)))
        self.last_cd, self.budget_left, self.t, self.rewards = self.cd0, self.max_budget, 0, 0.0
        return self._observation(), {"cd0": self.cd0, "body_type": shapes.BODY_TYPES[self.body_type]}

    def step(self, action: Any) -> tuple[dict, float, bool, bool, dict]:
        if self.base is None:
            raise RuntimeError(f"{self.env_id}: call reset() before step()")
        if self.t >= self.horizon:
            raise RuntimeError(f"{self.env_id}: the episode has ended; call reset()")
        action = check_action(self.action_space, action, self.env_id)
        z = np.asarray(action["z"], dtype=np.float64)
        if np.any(np.abs(z) > self.delta_max * (1 + 1e-6)):
            raise InvalidAction(f"{self.env_id}: action['z'] must lie in [-{self.delta_max}, "
                                f"{self.delta_max}] (units of L), got max |z| = {np.abs(z).max():.4g}")
        z = np.clip(z, -self.delta_max, self.delta_max)
        requested = z
        z, fraction = self._project(z)
        self.z, self.points = z, self.design(z)
        info: dict[str, Any] = {"projected": fraction < 1.0, "fraction": fraction, "verify_refused": False}
        if fraction < 1.0:
            broken = shapes.violations(self.design(requested), self.base)
            info["violations"] = broken
            info["message"] = (f"{self.env_id}: the requested design breaks {', '.join(broken)}; it was not "
                               f"used: the env took {fraction:.4g} of the step from the last feasible design")
        reward = 0.0
        if int(action["verify"]) == 1:
            if self.budget_left > 0:
                cd = simulate(self.points, self.h0, self.eval_grid)["cd"]
                reward = (self.last_cd - cd) / self.cd0
                self.last_cd, self.budget_left = cd, self.budget_left - 1
                info["cd"] = cd
            else:
                info["verify_refused"] = True
        self.t += 1
        truncated = self.t >= self.horizon
        if truncated:
            self.final_scores_cache = self.final_scores()
            info.update(self.final_scores_cache)
            reward = info["final_reduction"] - self.rewards
        self.rewards += reward
        return self._observation(), float(reward), False, truncated, info

    def final_scores(self) -> dict[str, float]:
        """The problem's check of the final design at the verification resolution (uncharged)."""
        cd0_ver = float(cache.get(base_drag_entry(self.base, self.verify_grid)))
        cd_ver = simulate(self.points, self.h0, self.verify_grid)["cd"] if self.z.any() else cd0_ver
        cd_eval = simulate(self.points, self.h0, self.eval_grid)["cd"] if self.z.any() else self.cd0
        shift = np.hypot(*(self.points - self.base).T)
        slacks = shapes.constraint_slacks(self.points, self.base)
        return {"final_reduction": (cd0_ver - cd_ver) / cd0_ver, "final_cd_verify": cd_ver,
                "cd0_verify": cd0_ver, "final_cd_eval": cd_eval, "cd0": self.cd0,
                "eval_reduction": (self.cd0 - cd_eval) / self.cd0,
                "mean_displacement": 100.0 * float(shift.mean()),
                "max_displacement": 100.0 * float(shift.max()),
                "feasible": float(shapes.feasible(self.points, self.base)),
                "lbm_calls": float(self.max_budget - self.budget_left),
                **{f"slack_{k}": float(v) for k, v in slacks.items()}}


class DragFFD2DEnvV1(DragFFD2DEnv):
    """
    ## Description
    As ``DragFFD2D-v0`` (FFD of a 2-D vehicle profile on a road in a D2Q9 lattice-Boltzmann
    channel flow, a solver-call budget per episode, the final design verified at a finer
    resolution), with the body's wall where the profile has it: linearly interpolated
    bounce-back (Bouzidi, Firdaouss & Lallemand 2001) from the fraction of each fluid-to-body
    link that lies outside the profile, instead of v0's halfway bounce-back. C_d then moves
    continuously with sub-cell deformations (up to the jumps when a node changes side), and the
    evaluation and verification resolutions agree on the sign of small changes.

    ## Action Space
    As v0: ``Dict{z: Box(-delta_max, delta_max, (12,), float32), verify: Discrete(2)}``; z outside
    the box raises ``InvalidAction``; a z that breaks a constraint is rejected and projected
    (``info["violations"]``, ``info["message"]``).

    ## Observation Space
    As v0.

    ## Rewards
    As v0: the return is the verified relative drag reduction at the verification resolution.

    ## Starting State
    As v0.

    ## Episode End
    As v0: truncation after ``horizon`` steps, then the problem's uncharged verification.

    ## Arguments
    As v0.

    ## Tiers
    As v0: smoke L = 10 / 400 steps at Re 40 for both resolutions; standard (Re 100) eval L = 20
    / 1,700 steps, verification L = 32 / 2,720 steps, horizon 17, budget 16; full eval L = 48,
    verification L = 96, horizon 65, budget 64.

    ## Reference
    As v0; interpolated bounce-back: Bouzidi, Firdaouss & Lallemand, Phys. Fluids 13 (2001);
    momentum-exchange force for it: Mei, Yu, Shyy & Luo, Phys. Rev. E 65 (2002).

    ## Version History
    * v1: interpolated bounce-back on the body; a design that breaks a constraint is named in
      ``info``.
    * v0: initial release (halfway bounce-back; superseded).
    """

    env_id = "papergym/DragFFD2D-v1"
    boundary = "interpolated"
