"""The cross-embodiment environments: planar bipeds (XEmbodiedWalker-v1) and 3-D humanoids
(XEmbodiedHumanoid-v1), one body per episode, one slot interface per family. The v0 classes
stay registered (superseded)."""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import mujoco
import numpy as np
from gymnasium import spaces

from papergym.actions import check_action

from . import bodies as B
from . import slots as sl

HISTORY = 5  # H = 5 [paper]
FRAME_SKIP = 10  # 50 Hz policy on 500 Hz physics [recon]
MAX_TILT = float(np.deg2rad(60.0))  # the paper's survival criterion on roll / pitch
COMMAND_PERIOD_S = 5.0
_FLOAT32 = np.dtype(np.float32)


class ObsLayout:
    """Where each part of the flat observation lives; policies use it to rebuild tokens."""

    def __init__(self, n_slots: int, history: int, n_globals: int, n_command: int,
                 n_morph: int = 0) -> None:
        self.n_slots, self.history, self.n_globals, self.n_command = (
            n_slots, history, n_globals, n_command)
        self.n_morph = n_morph
        sizes = [("joints", history * n_slots * 3), ("globals", history * n_globals),
                 ("present", n_slots), ("command", n_command), ("adjacency", n_slots * n_slots)]
        if n_morph:  # morph_obs=True: per-slot morphology descriptors, last
            sizes.append(("morphology", n_slots * n_morph))
        self.slices: dict[str, slice] = {}
        start = 0
        for name, size in sizes:
            self.slices[name] = slice(start, start + size)
            start += size
        self.size = start

    def as_dict(self) -> dict[str, int]:
        return {"n_slots": self.n_slots, "history": self.history, "n_globals": self.n_globals,
                "n_command": self.n_command, "n_morph": self.n_morph}


class XEmbodiedEnv(gym.Env):
    """Shared machinery; see the two registered subclasses for the documented contract."""

    metadata = {"render_modes": []}
    version = 0
    recipe_version = "v1"  # where bodies come from (named.RECIPES): v1 template, v2 walker2d

    @property
    def _problem_id(self) -> str:  # the registered id, named in every bad-action error
        name = type(self).__name__.removesuffix(f"V{self.version}").removesuffix("Env")
        return f"papergym/{name}-v{self.version}"
    family = "planar"
    n_globals = 3
    n_command = 4

    def __init__(self, bodies: str | list[str] | tuple[str, ...] = "train", pool_size: int = 16,
                 pool_seed: int = 0, randomization: str = "physics", obs: str = "flat",
                 max_steps: int = 1000, task: str = "walk", v_max: float = 1.5,
                 push_interval_s: float = 0.0, push_dv: float = 0.5,
                 morph_obs: bool = False) -> None:
        if obs not in ("flat", "dict"):
            raise ValueError(f"obs must be 'flat' or 'dict', got {obs!r}")
        if randomization not in ("physics", "naive", "none"):
            raise ValueError(f"randomization must be physics, naive or none, got {randomization!r}")
        if task not in ("walk", "stand"):
            raise ValueError(f"task must be 'walk' or 'stand', got {task!r}")
        self.obs_mode, self.max_steps, self.task = obs, int(max_steps), task
        self.v_max, self.push_interval_s, self.push_dv = float(v_max), push_interval_s, push_dv
        self.morph_obs = morph_obs
        self.bodies = self._resolve_bodies(bodies, pool_size, pool_seed, randomization)
        self.slots = B.family_slots(self.family)
        j = self.n_slots = len(self.slots)
        self.layout = ObsLayout(j, HISTORY, self.n_globals, self.n_command,
                                B.MORPH_FEATURES if morph_obs else 0)
        self.action_space = spaces.Box(-1.0, 1.0, (j,), np.float32)
        self._action_shape = (j,)
        cmd_low, cmd_high = self._command_bounds()
        if obs == "flat":
            self.observation_space = spaces.Box(-np.inf, np.inf, (self.layout.size,), np.float32)
        else:
            parts = {
                "joints": spaces.Box(-np.inf, np.inf, (HISTORY, j, 3), np.float32),
                "globals": spaces.Box(-np.inf, np.inf, (HISTORY, self.n_globals), np.float32),
                "present": spaces.MultiBinary(j),
                "command": spaces.Box(cmd_low, cmd_high, dtype=np.float32),
                "adjacency": spaces.MultiBinary((j, j)),
            }
            if morph_obs:
                parts["morphology"] = spaces.Box(-np.inf, np.inf, (j, B.MORPH_FEATURES),
                                                 np.float32)
            self.observation_space = spaces.Dict(parts)
        self._datas: dict[int, mujoco.MjData] = {}
        self.body: B.Embodiment = self.bodies[0]
        self.data: mujoco.MjData | None = None
        self._flat = np.zeros(self.layout.size, np.float32)
        # the history lives in the flat buffer (float32, as every observation gives it)
        part = self.layout.slices
        self._joint_hist = self._flat[part["joints"]].reshape(HISTORY, j, 3)
        self._glob_hist = self._flat[part["globals"]].reshape(HISTORY, self.n_globals)
        self._cmd_slice = part["command"]
        # one step older: each history part moves one row back in the flat buffer (views, made
        # once: the buffer is never reallocated)
        self._shifts = [(self._flat[at.start: at.stop - row], self._flat[at.start + row: at.stop])
                        for at, row in ((part["joints"], 3 * j), (part["globals"], self.n_globals))]
        self._new_row = part["joints"].stop - 3 * j  # the newest joint row: (q - q0, 0.1 qdot, a)
        self._new_a = self._joint_hist[-1, :, 2]
        self._new_globals = self._glob_hist[-1]
        self._cmd_view = self._flat[self._cmd_slice]
        self._prev_action = np.zeros(j)
        self._command = np.zeros(self.n_command)

    # ----------------------------------------------------------------- bodies
    def _resolve_bodies(self, bodies, pool_size, pool_seed, randomization):
        fam = "planar" if self.family == "planar" else "humanoid"
        sets = B.named_sets(fam, self.recipe_version)
        if isinstance(bodies, str) and bodies == "train":
            return list(B.pool(fam, int(pool_seed), int(pool_size), randomization,
                               self.recipe_version))
        if isinstance(bodies, str) and bodies in sets:
            return [B.named(fam, n) for n in sets[bodies]]
        names = [bodies] if isinstance(bodies, str) else list(bodies)
        if not names:
            raise ValueError("bodies must name at least one body")
        return [B.named(fam, n) for n in names]

    # ----------------------------------------------------------------- API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        rng = self.np_random
        index = int(rng.integers(len(self.bodies)))
        if options and "body" in options:
            index = [b.name for b in self.bodies].index(options["body"])
        self.body = body = self.bodies[index]
        if index not in self._datas:
            self._datas[index] = mujoco.MjData(body.model)
        self.data = data = self._datas[index]
        mujoco.mj_resetData(body.model, data)
        self._pidx = p = np.flatnonzero(body.present)
        # where the newest history row keeps q - q0 and 0.1 qdot of the present slots
        self._new_q_at = self._new_row + 3 * p
        self._new_v_at = self._new_q_at + 1
        self._qadr = body.qpos_adr[p]
        self._dadr = body.dof_adr[p]
        self._aidx = body.act_id[p]
        # per-body constants of the control law and the privileged vector, cached once
        self._q0p, self._halfp = body.q0[p], body.half_range[p]
        self._lop, self._hip = body.q_low[p], body.q_high[p]
        # views of the body's state, valid while its MjData lives
        self._qpos, self._qvel, self._xpos, self._xmat = data.qpos, data.qvel, data.xpos, data.xmat
        self._ctrl, self._force = data.ctrl, data.actuator_force
        self._floor = body.floor_geom
        self._foot_side = body.foot_side_of_geom.tolist()
        data.qpos[self._qadr] = np.clip(
            body.q0[self._pidx] + rng.uniform(-0.02, 0.02, len(self._pidx)),
            body.q_low[self._pidx], body.q_high[self._pidx])
        data.ctrl[self._aidx] = body.q0[self._pidx]
        mujoco.mj_forward(body.model, data)
        self._root_adr = body.model.jnt_qposadr[body.model.body_jntadr[body.root_body]]
        self._root_dof = body.model.jnt_dofadr[body.model.body_jntadr[body.root_body]]
        self._measure()
        self._mask = body.present.astype(np.float64)
        self._struct = sl.structural_mask(body.adjacency)
        self._morph = body.morphology()
        fam = "planar" if self.family == "planar" else "humanoid"
        priv_static = np.concatenate([
            [body.friction, body.total_mass / B.nominal_mass(fam)], self._morph.ravel()])
        # privileged = (estimator target, contacts, static part); the static part written once
        self._n_est = len(self._estimator_target())
        self._priv = np.zeros(self._n_est + 2 + len(priv_static), np.float32)
        self._priv[self._n_est + 2:] = priv_static
        self._priv_step = self._priv[:self._n_est + 2]  # (estimator target, contacts), per step
        self._present8 = body.present.astype(np.int8)
        self._morph32 = self._morph.astype(np.float32)
        self._n_actuated = body.n_actuated
        self._steps = 0
        self._phase = 0.0
        self._prev_action[:] = 0.0
        self._new_command()
        self._next_push = self._draw_push_time()
        self._foot_x = self._feet_x()
        self._dt = FRAME_SKIP * body.model.opt.timestep
        self._command_steps = int(round(COMMAND_PERIOD_S / self._dt))
        self._write_history(fill=True)
        self._flat[self.layout.slices["present"]] = self._mask
        self._flat[self.layout.slices["adjacency"]] = self._struct.ravel()
        if self.morph_obs and self.obs_mode == "flat":
            self._flat[self.layout.slices["morphology"]] = self._morph.ravel()
        return self._observation(), self._info(self._contacts())

    def step(self, action: Any):
        a = self._act(action)
        mujoco.mj_step(self.body.model, self.data, nstep=FRAME_SKIP)
        return self._advance(a)

    # A step in two halves around the physics, so that a vector env can advance the physics
    # of many envs at once (``vector.py``): ``_act`` before it, ``_advance`` after it.
    def _act(self, action: Any) -> np.ndarray:
        """Check the action, write the joint targets, apply a due push; returns the action
        as the reward sees it (clipped to [-1, 1], zero on absent slots)."""
        if self.data is None:
            raise RuntimeError("call reset() before step()")
        a = self._checked(action)  # clipped to [-1, 1] (documented)
        np.maximum(a, -1.0, out=a)
        np.minimum(a, 1.0, out=a)
        a *= self._mask  # absent slots have no effect
        q_des = a[self._pidx]  # q0 + a * half-range, within the joint range
        q_des *= self._halfp
        q_des += self._q0p
        np.maximum(q_des, self._lop, out=q_des)
        np.minimum(q_des, self._hip, out=q_des)
        self._ctrl[self._aidx] = q_des
        if self._steps >= self._next_push:
            self._push()
        return a

    def _checked(self, action: Any) -> np.ndarray:
        """The action as a new float64 array: real, finite, shape (n_slots,), else InvalidAction."""
        if type(action) is np.ndarray and action.dtype is _FLOAT32 \
                and action.shape == self._action_shape:  # the common case, checked here
            a = action.astype(np.float64)
            if math.isfinite(a.dot(a)):  # so is every entry: float32 squares cannot overflow
                return a
        return np.array(check_action(self.action_space, action, self._problem_id), np.float64)

    def _advance(self, a: np.ndarray):
        """Everything after the physics of one step: clock, command, reward, history,
        termination; returns gymnasium's step tuple."""
        self._steps += 1
        dt = self._dt
        self._phase = (self._phase + self._frequency * dt) % 1.0
        if self._steps % self._command_steps == 0:
            self._new_command()
        self._measure()
        contacts = self._contacts()
        reward, terms = self._reward(a, contacts, dt)
        self._prev_action = a
        self._write_history()
        terminated = self._fallen()
        truncated = (not terminated) and self._steps >= self.max_steps
        info = self._info(contacts)
        info["reward_terms"] = terms
        return self._observation(), float(reward), bool(terminated), bool(truncated), info

    def _measure(self) -> None:
        """Read what this step's reward, globals, estimator target and termination share
        (attitude, root height) once, after the physics (family-specific)."""
        raise NotImplementedError

    def _new_command(self) -> None:
        self._sample_command()
        self._frequency = self._command_frequency()  # read every step: kept as a float

    # ----------------------------------------------------------------- observation
    def _write_history(self, fill: bool = False) -> None:
        f, jh, gh = self._flat, self._joint_hist, self._glob_hist
        if fill:
            jh[-1] = 0.0  # absent slots stay zero for the episode
        else:
            for new, old in self._shifts:
                new[...] = old
        f.put(self._new_q_at, self._qpos[self._qadr] - self._q0p)
        f.put(self._new_v_at, 0.1 * self._qvel[self._dadr])
        self._new_a[:] = self._prev_action
        self._new_globals[:] = self._globals()
        if fill:
            jh[:-1] = jh[-1]
            gh[:-1] = gh[-1]

    clock_at = 2  # where sin and cos of the gait clock sit in the command vector

    def _write_command(self, c: np.ndarray) -> None:
        """The command with the gait clock (sin, cos of 2 pi phase) in its place, into ``c``."""
        c[:] = self._command
        i, angle = self.clock_at, 2 * math.pi * self._phase
        c[i], c[i + 1] = math.sin(angle), math.cos(angle)

    def _observation(self):
        if self.obs_mode == "dict":
            cmd = np.empty(self.n_command, np.float32)
            self._write_command(cmd)
            out = {
                "joints": self._joint_hist.copy(),
                "globals": self._glob_hist.copy(),
                "present": self._present8.copy(),
                "command": cmd,
                "adjacency": self._struct.copy(),
            }
            if self.morph_obs:
                out["morphology"] = self._morph32.copy()
            return out
        self._write_command(self._cmd_view)
        return self._flat.copy()  # history written in place; present, adjacency at reset

    def _info(self, contacts: tuple[float, float]) -> dict[str, Any]:
        self._priv_step[:] = (*self._estimator_target(), *contacts)
        priv = self._priv.copy()
        return {"body": self.body.name, "privileged": priv,
                "estimator_target": priv[:self._n_est].copy(),
                "n_actuated": self._n_actuated}

    # ----------------------------------------------------------------- contacts, feet
    def _contacts(self) -> tuple[float, float]:
        """(left, right): 1.0 where a foot geom touches the floor."""
        out = [0.0, 0.0]
        data = self.data
        if data.ncon:
            floor, side_of = self._floor, self._foot_side
            for g0, g1 in data.contact.geom.tolist():
                other = g1 if g0 == floor else g0 if g1 == floor else -1
                if other >= 0 and side_of[other] >= 0:
                    out[side_of[other]] = 1.0
        return out[0], out[1]

    def _feet_x(self) -> np.ndarray:
        fb, xpos = self.body.foot_bodies, self._xpos
        return (float(xpos[fb[0], 0]), float(xpos[fb[1], 0]))

    def _contact_swing(self, contacts: tuple[float, float], dt: float) -> float:
        feet_x = self._feet_x()
        v_l = min(abs(feet_x[0] - self._foot_x[0]) / dt, 2.0)
        v_r = min(abs(feet_x[1] - self._foot_x[1]) / dt, 2.0)
        self._foot_x = feet_x
        swing_l = swing_r = 0.0  # standing (f* = 0): both feet in stance
        if self._frequency > 0:
            # HugWBC-style clock: left swings in the first half-period, right in the second
            s = math.sin(2 * math.pi * self._phase)
            swing_l, swing_r = float(s > 0), float(s < 0)
        penalty = (swing_l * contacts[0] + (1 - swing_l) * v_l
                   + swing_r * contacts[1] + (1 - swing_r) * v_r)
        return -0.2 * float(penalty)

    def _push(self) -> None:
        """A random kick of the base velocity; the next one is drawn (never, without pushes)."""
        dv = self.np_random.uniform(-self.push_dv, self.push_dv, 2)
        if self.family == "planar":
            self.data.qvel[self.body.root_x_dof] += dv[0]
        else:
            self.data.qvel[self._root_dof] += dv[0]
        if self.family != "planar":
            self.data.qvel[self._root_dof + 1] += dv[1]
        self._next_push = self._steps + self._draw_push_time()

    def _draw_push_time(self) -> int:
        if self.push_interval_s <= 0:
            return 1 << 62
        dt = FRAME_SKIP * B.TIMESTEP
        return int(self.np_random.uniform(0.5, 1.5) * self.push_interval_s / dt)

    def close(self) -> None:
        self._datas.clear()
        self.data = None


class XEmbodiedWalkerEnv(XEmbodiedEnv):
    """Planar bipeds of many morphologies behind one 13-slot interface (XHugWBC, planar analogue).

    ## Description
    Each episode draws one planar biped (x-z plane; root = slide x, slide z, hinge y, like
    walker2d) from a body set: the procedural training pool built with ``mujoco.MjSpec`` and
    physics-consistent morphological randomization (pseudo-inertia deformation of every link,
    joint offsets, revolute/fixed sampling of waist, toes and arms: 6-13 actuated joints), or
    a named held-out / out-of-distribution body (gymnasium's walker2d_v5 and hopper, and
    hand-designed extremes). The policy tracks a forward-velocity and gait-frequency command.

    ## Action Space
    ``Box(-1, 1, (13,), float32)`` over the slots waist, l_hip, l_knee, l_ankle, l_toe, r_hip,
    r_knee, r_ankle, r_toe, l_shoulder, l_elbow, r_shoulder, r_elbow. q_des = q0 + a * half-range
    (clipped to the joint range); a PD actuator applies clip(Kp (q_des - q) - Kd qdot) at 500 Hz.
    Entries of absent slots have no effect. Non-finite actions raise ``ValueError``; finite
    ones are clipped to [-1, 1].

    ## Observation Space
    ``obs="flat"`` (default): ``Box(-inf, inf, (396,), float32)``, the concatenation of
    ``joints`` (5 x 13 x 3: per slot q - q0, 0.1 qdot, previous action; oldest step first),
    ``globals`` (5 x 3: torso pitch rate, sin and cos of torso pitch), ``present`` (13: the
    controllability indicator I), ``command`` (4: v*_x, f*, sin and cos of the gait clock) and
    ``adjacency`` (13 x 13: the structural mask M = I + A). ``obs="dict"`` gives the same parts
    as a ``Dict``; ``morph_obs=True`` adds per-slot morphology descriptors (13 x 6: the link's
    mass share, joint range low / high, Kp and torque-limit ratios to the template's, 1), last
    in the flat vector, for MetaMorph-style policies.
    No explicit morphology reaches the actor by default [paper]. Privileged values for
    critics are in ``info["privileged"]`` (base velocity x/z, root height, foot contacts,
    friction, mass ratio, per-slot morphology); ``info["estimator_target"]`` is (v_x, v_z, h).

    ## Rewards
    exp(-(v_x - v*)^2 / 0.25) + 0.5 exp(-(h - h*)^2 / 0.01) + contact-swing tracking
    (-0.2 per foot: contact during swing, foot speed during stance) + 0.2 alive
    - 1e-4 |tau|^2 - 0.01 |a_t - a_{t-1}|^2 - 0.1 pitch^2 [recon; the paper's table is not public].

    ## Starting State
    The body's default pose (all q0 = 0, feet on the floor) with U[-0.02, 0.02] joint noise;
    v* ~ U[0, v_max], f* ~ U[1, 2] Hz, resampled every 5 s.

    ## Episode End
    Terminated when |torso pitch| > 60 deg or the root falls below half its nominal height;
    truncated after ``max_steps`` (50 Hz).

    ## Arguments
    ``bodies``: "train" (procedural pool), "heldout", "ood", a body name or a list of names;
    ``pool_size``, ``pool_seed``, ``randomization`` ("physics" | "naive" | "none"), ``obs``,
    ``max_steps``, ``task`` ("walk" | "stand": v* = 0, no gait), ``v_max``,
    ``push_interval_s`` / ``push_dv`` (random base-velocity kicks), ``morph_obs``.

    ## Tiers
    smoke: 2 training bodies, max_steps 200; standard: a pool of 16, 3 held-out bodies,
    max_steps 400 (the spec's pool of 256 and max_steps 1,000 scaled to 2 cores); full: pool
    256, every held-out body, max_steps 1,000.

    ## Reference
    Xue et al., "Scalable and General Whole-Body Control for Cross-Humanoid Locomotion"
    (XHugWBC, ICML 2026, arXiv 2602.05791). The planar family, slot order, reward terms,
    ranges and gains are reconstructions from the paper's text (no official code is public).

    ## Version History
    * v0: initial release; superseded by v1 (on its walk task a = 0 stands and scores well,
      and no policy learned to beat it within the standard tier's budget).
    * v1: :class:`XEmbodiedWalkerEnvV1`: slow walking under pushes by default.
    """

    family = "planar"
    n_globals = 3
    n_command = 4

    def _command_bounds(self):
        return (np.array([0.0, 0.0, -1.0, -1.0], np.float32),
                np.array([max(self.v_max, 1.5), 2.0, 1.0, 1.0], np.float32))

    def _sample_command(self) -> None:
        if self.task == "stand":
            self._command[:2] = 0.0
        else:
            self._command[0] = self.np_random.uniform(0.0, self.v_max)
            self._command[1] = self.np_random.uniform(1.0, 2.0)

    def _command_frequency(self) -> float:
        return float(self._command[1])

    def _measure(self) -> None:
        b = self.body
        self._pitch = b.pitch_sign * float(self._qpos[b.pitch_qpos])
        self._height = float(self._xpos[b.root_body, 2])

    def _globals(self) -> tuple[float, float, float]:
        pitch, b = self._pitch, self.body
        return b.pitch_sign * float(self._qvel[b.pitch_dof]), math.sin(pitch), math.cos(pitch)

    def _estimator_target(self) -> tuple[float, ...]:
        qvel, b = self._qvel, self.body
        return float(qvel[b.root_x_dof]), float(qvel[b.root_z_dof]), self._height

    def _reward(self, a, contacts, dt):
        v = float(self._qvel[self.body.root_x_dof])
        h, pitch = self._height, self._pitch
        force = self._force
        da = a - self._prev_action
        terms = {
            "velocity": math.exp(-((v - self._command[0]) ** 2) / 0.25),
            "height": 0.5 * math.exp(-((h - self.body.nominal_height) ** 2) / 0.01),
            "contact_swing": self._contact_swing(contacts, dt),
            "alive": 0.2,
            "torque": -1e-4 * float(force.dot(force)),
            "action_rate": -0.01 * float(da.dot(da)),
            "pitch": -0.1 * pitch * pitch,
        }
        return sum(terms.values()), terms

    def _fallen(self) -> bool:
        return abs(self._pitch) > MAX_TILT or self._height < 0.5 * self.body.nominal_height

    def tracking_error(self) -> float:
        return abs(float(self.data.qvel[self.body.root_x_dof]) - float(self._command[0]))


class XEmbodiedHumanoidEnv(XEmbodiedEnv):
    """3-D humanoids with 12-32 actuated joints behind one 32-slot interface (XHugWBC).

    ## Description
    Each episode draws one 3-D humanoid: a procedural body from a G1-like template built with
    ``mujoco.MjSpec`` (pseudo-inertia deformation of every link, joint offsets, zero-sum axis
    orientation offsets, a random kinematic order of the three hip axes, revolute/fixed
    sampling of waist, arm and head joints: 12-32 actuated), a named topology analogue of the
    paper's robots, or gymnasium's humanoid (17 actuators, no ankles) mapped onto the slots.
    ``task="walk"`` tracks velocity/posture/gait commands (full tier); ``task="stand"`` asks the
    body to stand at its nominal height and recover from random pushes (standard tier: the
    part of whole-body control that 2 CPU cores can learn).

    ## Action Space
    ``Box(-1, 1, (32,), float32)``: slots l/r hip roll, yaw, pitch, knee, ankle pitch, roll;
    waist roll, yaw, pitch; l/r shoulder roll, yaw, pitch, elbow, wrist roll, yaw, pitch;
    head roll, yaw, pitch. Same PD law and masking as the planar env; non-finite -> ValueError.

    ## Observation Space
    ``obs="flat"``: ``Box(-inf, inf, (1578,), float32)`` = ``joints`` (5 x 32 x 3), ``globals``
    (5 x 6: base angular velocity, gravity direction in the base frame), ``present`` (32),
    ``command`` (12: v_x, v_y, omega_z, base height, pelvis pitch, waist yaw/pitch/roll, gait
    frequency, clock sin/cos, swing height), ``adjacency`` (32 x 32, M = I + A). ``obs="dict"``
    gives the parts. Privileged: base linear velocity (3, base frame), height, contacts,
    friction, mass ratio, per-slot morphology.

    ## Rewards
    exp(-|v_xy - v*_xy|^2 / 0.25) + 0.5 exp(-(omega_z - omega*)^2 / 0.25) + 0.5 exp(-(h - h*)^2 /
    0.01) + contact-swing tracking + 0.2 alive - 1e-4 |tau|^2 - 0.01 |a_t - a_{t-1}|^2
    - 0.1 (roll^2 + pitch^2) [recon].

    ## Starting State
    Default pose with U[-0.02, 0.02] joint noise; commands as above (stand: all zero velocity).

    ## Episode End
    Terminated when torso roll or pitch exceeds 60 deg or the root falls below half its nominal
    height; truncated after ``max_steps``.

    ## Arguments
    As the planar env.

    ## Tiers
    smoke: gymnasium humanoid + 1 procedural body, 100 random steps (API and determinism);
    standard: stand-and-recover on 8 procedural bodies, held-out named bodies, descriptive
    only; full: walking on every body, >= 1e8 steps on GPU simulation (not run here).

    ## Reference
    Xue et al., XHugWBC (ICML 2026, arXiv 2602.05791). Template, slot order, ranges, gains and
    reward weights are reconstructions; the paper's robots (Unitree, Booster, ...) are not
    available offline: named bodies are topology analogues of them.

    ## Version History
    * v0: initial release; superseded by v1 (same defaults as the planar v1).
    * v1: :class:`XEmbodiedHumanoidEnvV1`: slow walking under pushes by default.
    """

    family = "humanoid"
    n_globals = 6
    n_command = 12

    def _command_bounds(self):
        low = np.array([-1.0, -1.0, -1.0, 0, -1, -1, -1, -1, 0, -1, -1, 0], np.float32)
        high = np.array([max(self.v_max, 1.5), 1.0, 1.0, 2.0, 1, 1, 1, 1, 2.0, 1, 1, 0.3],
                        np.float32)
        return low, high

    def _sample_command(self) -> None:
        c, r = self._command, self.np_random
        c[:] = 0.0
        c[3] = self.body.nominal_height
        if self.task == "walk":
            c[0] = r.uniform(-0.3, self.v_max)
            c[1] = r.uniform(-0.3, 0.3)
            c[2] = r.uniform(-0.5, 0.5)
            c[8] = r.uniform(1.0, 2.0)
            c[11] = 0.08

    def _command_frequency(self) -> float:
        return float(self._command[8])

    clock_at = 9

    def _rot(self) -> np.ndarray:
        return self._xmat[self.body.root_body].reshape(3, 3)

    def _gravity(self) -> np.ndarray:
        return -self._xmat[self.body.root_body, 6:9]  # R^T (0, 0, -1)

    def _measure(self) -> None:
        g = self._gravity()
        self._roll = float(np.arctan2(-g[1], -g[2]))
        self._pitch = float(np.arctan2(g[0], np.hypot(g[1], g[2])))
        self._height = float(self._xpos[self.body.root_body, 2])
        # the base velocity in the body frame: R^T v
        self._v_body = (self._rot().T @ self._qvel[self._root_dof: self._root_dof + 3]).tolist()

    def _globals(self) -> np.ndarray:
        return np.concatenate([self._qvel[self._root_dof + 3: self._root_dof + 6], self._gravity()])

    def _estimator_target(self) -> tuple[float, ...]:
        return (*self._v_body, self._height)

    def _reward(self, a, contacts, dt):
        v_body = self._v_body
        wz = self._qvel[self._root_dof + 5]
        h, roll, pitch = self._height, self._roll, self._pitch
        c = self._command
        force = self._force
        da = a - self._prev_action
        terms = {
            "velocity": math.exp(-((v_body[0] - c[0]) ** 2 + (v_body[1] - c[1]) ** 2) / 0.25),
            "yaw_rate": 0.5 * math.exp(-((wz - c[2]) ** 2) / 0.25),
            "height": 0.5 * math.exp(-((h - c[3]) ** 2) / 0.01),
            "contact_swing": self._contact_swing(contacts, dt),
            "alive": 0.2,
            "torque": -1e-4 * float(force.dot(force)),
            "action_rate": -0.01 * float(da.dot(da)),
            "tilt": -0.1 * (roll * roll + pitch * pitch),
        }
        return sum(terms.values()), terms

    def _fallen(self) -> bool:
        return (abs(self._roll) > MAX_TILT or abs(self._pitch) > MAX_TILT
                or self._height < 0.5 * self.body.nominal_height)

    def tracking_error(self) -> float:
        v_body = self._v_body  # R^T v, read by _measure after the last physics
        return float(abs(v_body[0] - self._command[0]) + abs(v_body[1] - self._command[1]))


# v1 defaults: slow walking (v* ~ U[0, 0.5] m/s) under random pushes. On v0's defaults (walk up
# to 1.5 m/s, no pushes) a = 0 keeps most bodies upright and earns a large share of the reward,
# so doing nothing was a strong policy; under pushes of up to 1 m/s it falls on most bodies
# within the episode, and a policy has to balance to survive [recon].
class _V1Defaults:
    """The v1 defaults of both families, spelled out so that the signature shows them."""

    version = 1

    def __init__(self, bodies: str | list[str] | tuple[str, ...] = "train", pool_size: int = 16,
                 pool_seed: int = 0, randomization: str = "physics", obs: str = "flat",
                 max_steps: int = 1000, task: str = "walk", v_max: float = 0.5,
                 push_interval_s: float = 2.0, push_dv: float = 1.0,
                 morph_obs: bool = False) -> None:
        super().__init__(bodies=bodies, pool_size=pool_size, pool_seed=pool_seed,  # type: ignore[call-arg]
                         randomization=randomization, obs=obs, max_steps=max_steps, task=task,
                         v_max=v_max, push_interval_s=push_interval_s, push_dv=push_dv,
                         morph_obs=morph_obs)


class XEmbodiedWalkerEnvV1(_V1Defaults, XEmbodiedWalkerEnv):
    """Planar bipeds of many morphologies: slow walking under pushes (XHugWBC, planar analogue).

    ## Description
    As :class:`XEmbodiedWalkerEnv` (v0), with the defaults that make the task one a policy has
    to learn: the command is v* ~ U[0, 0.5] m/s with a gait frequency f* ~ U[1, 2] Hz
    (resampled every 5 s), and every 1-3 s (``push_interval_s`` = 2 s x U[0.5, 1.5]) the torso
    is kicked by a horizontal velocity change ~ U[-1, 1] m/s. Holding the default pose (a = 0)
    falls within the episode on most bodies; balancing under pushes and stepping at the command
    speed have to be learned.

    ## Action Space
    ``Box(-1, 1, (13,), float32)``: joint targets q_des = q0 + a * half-range of the 13 slots
    (see v0); absent slots have no effect; non-finite actions raise ``ValueError``.

    ## Observation Space
    ``Box(-inf, inf, (396,), float32)`` (``obs="flat"``) or the ``Dict`` of its parts, as v0.

    ## Rewards
    As v0: velocity tracking + height + contact-swing + alive - torque, action-rate and pitch
    penalties [recon].

    ## Starting State
    The default pose with U[-0.02, 0.02] joint noise; the first push comes after 1-3 s.

    ## Episode End
    Terminated when |torso pitch| > 60 deg or the root falls below half its nominal height;
    truncated after ``max_steps`` (default 1,000 = 20 s at 50 Hz).

    ## Arguments
    As v0, with defaults ``task="walk"``, ``v_max=0.5``, ``push_interval_s=2.0``,
    ``push_dv=1.0``, ``max_steps=1000``.

    ## Tiers
    smoke: 2 training bodies, short episodes (API); standard: a pool of 16 procedural bodies,
    generalists trained for 10^5 PPO steps, 3 held-out bodies, 400-step episodes; full: pool
    256, every held-out body, 1,000-step episodes, 2 x 10^5 steps (the spec's scale).

    ## Reference
    Xue et al., XHugWBC (ICML 2026, arXiv 2602.05791); the pushes and the slow-walking range are
    reconstructions of its "robust locomotion" evaluation on 2 CPU cores.

    ## Version History
    * v0: walk up to 1.5 m/s without pushes (superseded: a = 0 was hard to beat).
    * v1: slow walking under pushes by default; superseded by v2
      (:class:`XEmbodiedWalkerEnvV2`): its generated bodies stood with a = 0 (soles spanning the
      ankle, knees locked straight) and no learner beat a = 0 on two of its three held-out
      bodies, even PPO trained on the body itself.
    """


class XEmbodiedHumanoidEnvV1(_V1Defaults, XEmbodiedHumanoidEnv):
    """3-D humanoids with 12-32 actuated joints: slow walking under pushes (XHugWBC).

    ## Description
    As :class:`XEmbodiedHumanoidEnv` (v0), with the planar v1 defaults: v*_x ~ U[-0.3, 0.5]
    m/s, lateral and yaw-rate commands, gait commands, and random horizontal pushes of up to
    1 m/s every 1-3 s. Several bodies cannot hold their default pose with a = 0 at all (the
    gymnasium humanoid, the G1- and H1-like bodies fall within ~1.2 s without a push), so the
    3-D family is trained only at the full tier; its standard tier is not run.

    ## Action Space
    ``Box(-1, 1, (32,), float32)``, as v0.

    ## Observation Space
    ``Box(-inf, inf, (1578,), float32)`` (``obs="flat"``) or the ``Dict`` of its parts, as v0.

    ## Rewards
    As v0 [recon].

    ## Starting State
    As v0; the first push comes after 1-3 s.

    ## Episode End
    As v0; truncated after ``max_steps`` (default 1,000).

    ## Arguments
    As v0, with defaults ``task="walk"``, ``v_max=0.5``, ``push_interval_s=2.0``,
    ``push_dv=1.0``, ``max_steps=1000``.

    ## Tiers
    smoke: API and determinism on two bodies; standard: not run (see Description); full:
    walking under pushes on every body at the paper's scale (>= 10^8 steps, GPU simulation).

    ## Reference
    Xue et al., XHugWBC (ICML 2026, arXiv 2602.05791).

    ## Version History
    * v0: standing under pushes (superseded: a = 0 and every policy fell before the first push).
    * v1: slow walking under pushes by default; no standard tier.
    """



class XEmbodiedWalkerEnvV2(_V1Defaults, XEmbodiedWalkerEnv):
    """Planar bipeds that fall unless controlled: slow walking under pushes on procedural
    variants of walker2d (XHugWBC, planar).

    ## Description
    As :class:`XEmbodiedWalkerEnvV1` (same task, command, pushes, observation, action, reward
    and termination), on different bodies: every training and held-out body is a
    physics-consistent variant of gymnasium's walker2d_v5 (``variants.py``): per link type
    (torso, thigh, leg, foot) a length, a radius and a density factor U[0.8, 1.2], the link's
    mass and inertia computed from the deformed geometry, each joint kept at its parent link's
    end, PD actuators with gains scaled by total mass. walker2d's feet put the standing centre
    of mass just ahead of the heel, so holding the default pose tips a body backwards within a
    few seconds: a = 0 fails on every body (a draw on which it stands 5 s is redrawn), and a
    policy has to balance. The held-out variants come from a seed stream no training pool uses.
    v1's bodies, drawn from the planar template, stood with a = 0 (soles spanning the ankle,
    knees locked straight) and PPO did not beat a = 0 on them in 10^5 steps; on walker2d
    variants it does. ``randomization="naive"`` trains on the naive twins (same geometry, link
    masses and inertias drawn independently of it: the paper's ablation); ``"none"`` on
    walker2d_v5 alone.

    ## Action Space
    ``Box(-1, 1, (13,), float32)``: joint targets q_des = q0 + a * half-range of the 13 slots
    (see v0); only the 6 leg slots are present; non-finite actions raise ``ValueError``.

    ## Observation Space
    ``Box(-inf, inf, (396,), float32)`` (``obs="flat"``) or the ``Dict`` of its parts, as v0.

    ## Rewards
    As v1: velocity tracking + height + contact-swing + alive - torque, action-rate and pitch
    penalties [recon].

    ## Starting State
    The default pose resting on the floor with U[-0.02, 0.02] joint noise; it tips backwards
    unless controlled; the first push comes after 1-3 s.

    ## Episode End
    Terminated when |torso pitch| > 60 deg or the root falls below half its nominal height;
    truncated after ``max_steps`` (default 1,000 = 20 s at 50 Hz).

    ## Arguments
    As v1 (defaults ``task="walk"``, ``v_max=0.5``, ``push_interval_s=2.0``, ``push_dv=1.0``,
    ``max_steps=1000``). ``bodies``: "train" (the pool ``w2v_<pool_seed>_<i>``), "heldout"
    (walker2d_v5 and ``w2v_h0`` .. ``w2v_h7``), "ood" (hopper and v1's hand-designed bodies), a
    name or a list of names. ``randomization``: "physics" (default), "naive" or "none".

    ## Tiers
    smoke: 2 training bodies, short episodes (API); standard: a pool of 16 variants,
    generalists trained for 10^5 PPO steps, 3 held-out bodies (walker2d_v5, w2v_h0, w2v_h1),
    400-step episodes, pushes of up to 0.5 m/s (``push_dv=0.5``: at 1 m/s the pool MLP did
    not learn to balance on its own training bodies in 10^5 steps); full: pool 256,
    walker2d_v5 and 8 held-out variants, 1,000-step episodes, pushes of up to 1 m/s,
    2 x 10^5 steps (the spec's scale).

    ## Reference
    Xue et al., XHugWBC (ICML 2026, arXiv 2602.05791). Deforming walker2d instead of a
    humanoid template, and keeping only bodies that fall with a = 0, are reconstructions that
    make learning measurable on 2 CPU cores.

    ## Version History
    * v0: walk up to 1.5 m/s without pushes (superseded: a = 0 was hard to beat).
    * v1: slow walking under pushes (superseded: its template bodies stood with a = 0, and PPO
      did not beat a = 0 on them even when trained on the body itself).
    * v2: the same task on physics-consistent walker2d variants, on which a = 0 falls. The env
      is unchanged since; its standard tier's pushes went from 1 m/s to 0.5 m/s with the
      humanoid benchmark's version 4, and its standard tier's budget from 100,000 to 98,304
      steps (a whole number of the specialist's chunks) with version 5, whose task adds the
      matched specialist (``XEmbodiedTaskV2``).
    """

    version = 2
    recipe_version = "v2"
