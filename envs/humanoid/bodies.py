"""Embodiments: procedural planar bipeds and 3-D humanoids built with ``mujoco.MjSpec``, and the
offline gymnasium models mapped onto the same slots.

One template per family [recon, following the paper's single-template scheme]: every link of
the template always exists; a joint is either revolute (actuated, a present slot) or locked
(the links are welded; the slot stays a graph vertex where it is part of the trunk chain).
A generated body applies, with draws from one seeded ``numpy`` Generator:

1. the revolute/fixed sampling of optional joints (waist, toes, arms; 3-D: waist, arms, head);
2. the pseudo-inertia deformation ``J' = (U L)(U L)^T`` of every link (``inertia.py``), whose
   stretch ``E`` also moves the link's collision geometry and child joint positions;
3. joint position offsets bounded by twice the distance to the parent link's centre of mass,
   zero-sum orientation offsets per joint group and (3-D) a random kinematic order of the
   three hip axes;
4. joint-range scale U[0.8, 1.2] per joint and one gain factor U[0.8, 1.2] per body; PD gains
   and torque limits scale linearly with total mass (the paper's rule);
5. a rejection test: holding a = 0 for 1 s must keep the root above 70% of its nominal height.

Control uses MuJoCo ``general`` actuators that implement the PD law in C at every physics step:
``tau = clip(Kp (q_des - q) - Kd qdot, -tau_max, tau_max)`` with ``ctrl = q_des``. The named
gymnasium models get the same actuators in place of their motors (torque limit = gear x
ctrlrange), so the control law is identical on every body [recon; the spec applied motors with
ctrl = tau / gear, which needs a Python PD loop at 500 Hz].
"""

from __future__ import annotations

import functools
import importlib.util
import os
from dataclasses import dataclass, field

import mujoco
import numpy as np

from . import inertia as inert
from . import slots as sl

TIMESTEP = 0.002  # 500 Hz physics
ROBOT_CONTYPE, ROBOT_CONAFFINITY = 1, 0  # robot-robot contacts off, robot-floor on
JOINT_NOISE = 0.015  # m, per axis, before the 2 x COM-distance bound [recon]
ORIENT_NOISE = 0.05  # rad, per axis, orientation offsets (3-D) [recon]


# --------------------------------------------------------------------------- templates


@dataclass(frozen=True)
class LinkDef:
    name: str
    parent: str | None
    pos: tuple[float, float, float]
    joints: tuple[str, ...]  # slots in kinematic order
    geom: tuple  # ("capsule", fromto6, radius) | ("box", pos3, halfsize3)
    foot: str = ""  # "l" | "r" for links that touch the ground


@dataclass(frozen=True)
class SlotDef:
    range_deg: tuple[float, float]
    kp: float
    kd: float
    tau: float


def _planar_template() -> tuple[LinkDef, ...]:
    links = [
        LinkDef("pelvis", None, (0, 0, 1.01), (), ("capsule", (0, 0, 0, 0, 0, 0.15), 0.05)),
        LinkDef("torso", "pelvis", (0, 0, 0.15), ("waist",),
                ("capsule", (0, 0, 0, 0, 0, 0.25), 0.05)),
    ]
    for s in ("l", "r"):
        links += [
            LinkDef(f"{s}_thigh", "pelvis", (0, 0, 0), (f"{s}_hip",),
                    ("capsule", (0, 0, 0, 0, 0, -0.45), 0.05)),
            LinkDef(f"{s}_shin", f"{s}_thigh", (0, 0, -0.45), (f"{s}_knee",),
                    ("capsule", (0, 0, 0, 0, 0, -0.5), 0.04)),
            LinkDef(f"{s}_foot", f"{s}_shin", (0, 0, -0.5), (f"{s}_ankle",),
                    ("capsule", (-0.08, 0, 0, 0.1, 0, 0), 0.06), foot=s),
            LinkDef(f"{s}_toe", f"{s}_foot", (0.1, 0, 0), (f"{s}_toe",),
                    ("capsule", (0, 0, 0, 0.07, 0, 0), 0.05), foot=s),
            LinkDef(f"{s}_upper_arm", "torso", (0, 0, 0.22), (f"{s}_shoulder",),
                    ("capsule", (0, 0, 0, 0, 0, -0.25), 0.035)),
            LinkDef(f"{s}_forearm", f"{s}_upper_arm", (0, 0, -0.25), (f"{s}_elbow",),
                    ("capsule", (0, 0, 0, 0, 0, -0.22), 0.03)),
        ]
    return tuple(links)


# Nominal joint ranges (deg) and PD gains at the nominal mass; tuned once so that every
# nominal topology stands for 1 s with a = 0 (checked by the tests) [recon].
PLANAR_SLOT_DEFS: dict[str, SlotDef] = {
    "waist": SlotDef((-30, 30), 100, 5, 80),
    "hip": SlotDef((-60, 90), 150, 8, 100),
    "knee": SlotDef((-150, 0), 150, 8, 100),
    "ankle": SlotDef((-45, 45), 80, 4, 60),
    "toe": SlotDef((-30, 30), 20, 1, 20),
    "shoulder": SlotDef((-120, 120), 30, 2, 30),
    "elbow": SlotDef((0, 140), 20, 1, 20),
}


def _humanoid_template(hip_order: tuple[str, str, str] = sl.HIP_TEMPLATE_ORDER) -> tuple[LinkDef, ...]:
    links = [
        LinkDef("pelvis", None, (0, 0, 0.745), (), ("capsule", (0, -0.08, 0, 0, 0.08, 0), 0.07)),
        LinkDef("torso", "pelvis", (0, 0, 0.08), sl.WAIST_ORDER,
                ("capsule", (0, 0, 0.02, 0, 0, 0.28), 0.09)),
        LinkDef("head", "torso", (0, 0, 0.38), sl.HEAD_ORDER,
                ("capsule", (0, 0, 0.04, 0, 0, 0.14), 0.07)),
    ]
    for s, y in (("l", 1.0), ("r", -1.0)):
        links += [
            LinkDef(f"{s}_thigh", "pelvis", (0, 0.09 * y, -0.04), tuple(f"{s}_{j}" for j in hip_order),
                    ("capsule", (0, 0, 0, 0, 0, -0.32), 0.055)),
            LinkDef(f"{s}_shin", f"{s}_thigh", (0, 0, -0.32), (f"{s}_knee",),
                    ("capsule", (0, 0, 0, 0, 0, -0.32), 0.045)),
            LinkDef(f"{s}_foot", f"{s}_shin", (0, 0, -0.32), (f"{s}_ankle_pitch", f"{s}_ankle_roll"),
                    ("box", (0.03, 0, -0.04), (0.09, 0.04, 0.02)), foot=s),
            LinkDef(f"{s}_upper_arm", "torso", (0, 0.17 * y, 0.26),
                    tuple(f"{s}_{j}" for j in sl.SHOULDER_ORDER),
                    ("capsule", (0, 0, 0, 0, 0, -0.22), 0.04)),
            LinkDef(f"{s}_forearm", f"{s}_upper_arm", (0, 0, -0.22), (f"{s}_elbow",),
                    ("capsule", (0, 0, 0, 0, 0, -0.2), 0.035)),
            LinkDef(f"{s}_hand", f"{s}_forearm", (0, 0, -0.2),
                    tuple(f"{s}_{j}" for j in sl.WRIST_ORDER),
                    ("capsule", (0, 0, -0.02, 0, 0, -0.08), 0.035)),
        ]
    return tuple(links)


HUMANOID_SLOT_DEFS: dict[str, SlotDef] = {
    "hip_pitch": SlotDef((-100, 45), 100, 5, 88), "hip_roll": SlotDef((-40, 40), 100, 5, 88),
    "hip_yaw": SlotDef((-40, 40), 60, 3, 88), "knee": SlotDef((0, 150), 150, 6, 139),
    "ankle_pitch": SlotDef((-45, 45), 40, 2, 50), "ankle_roll": SlotDef((-25, 25), 40, 2, 50),
    "waist_yaw": SlotDef((-60, 60), 100, 5, 88), "waist_roll": SlotDef((-30, 30), 100, 5, 88),
    "waist_pitch": SlotDef((-30, 45), 100, 5, 88),
    "shoulder_pitch": SlotDef((-150, 90), 40, 2, 25),
    "shoulder_roll": SlotDef((-90, 90), 40, 2, 25), "shoulder_yaw": SlotDef((-90, 90), 40, 2, 25),
    "elbow": SlotDef((-140, 0), 40, 2, 25), "wrist_roll": SlotDef((-60, 60), 10, 0.5, 5),
    "wrist_pitch": SlotDef((-60, 60), 10, 0.5, 5), "wrist_yaw": SlotDef((-60, 60), 10, 0.5, 5),
    "head_roll": SlotDef((-45, 45), 10, 0.5, 5), "head_yaw": SlotDef((-45, 45), 10, 0.5, 5),
    "head_pitch": SlotDef((-45, 45), 10, 0.5, 5),
}


def slot_def(family: str, slot: str) -> SlotDef:
    if family == "planar":
        return PLANAR_SLOT_DEFS[slot.split("_", 1)[-1] if "_" in slot else slot]
    return HUMANOID_SLOT_DEFS[slot[2:] if slot[:2] in ("l_", "r_") else slot]


def family_slots(family: str) -> tuple[str, ...]:
    return sl.PLANAR_SLOTS if family == "planar" else sl.HUMANOID_SLOTS


# --------------------------------------------------------------------------- the embodiment


@dataclass
class Embodiment:
    """A compiled body and its embedding into the family's slots."""

    name: str
    family: str
    model: mujoco.MjModel
    present: np.ndarray  # I: actuated slots (J,)
    vertex: np.ndarray  # graph vertices: present or locked (J,)
    adjacency: np.ndarray  # A (J, J)
    qpos_adr: np.ndarray  # (J,) -1 where absent
    dof_adr: np.ndarray
    act_id: np.ndarray
    q0: np.ndarray  # default pose per slot
    q_low: np.ndarray
    q_high: np.ndarray
    kp: np.ndarray
    kd: np.ndarray
    tau_max: np.ndarray
    total_mass: float
    nominal_height: float
    root_body: int
    floor_geom: int
    foot_side_of_geom: np.ndarray  # (ngeom,) -1 / 0 (left) / 1 (right)
    foot_bodies: tuple[int, int]
    friction: float
    gain_factor: float = 1.0
    hip_order: tuple[str, ...] = ()
    link_theta: dict[str, np.ndarray] = field(default_factory=dict)
    joint_offsets: dict[str, tuple[np.ndarray, float]] = field(default_factory=dict)
    orient_offsets: dict[str, np.ndarray] = field(default_factory=dict)
    n_repaired_links: int = 0  # links whose inertia MuJoCo had to balance (naive sampler)
    source: str = "procedural"
    # planar roots (slide x, slide z, hinge y) come in different orders and axis signs
    root_x_dof: int = 0
    root_z_dof: int = 1
    pitch_qpos: int = 2
    pitch_dof: int = 2
    pitch_sign: float = 1.0

    @property
    def n_actuated(self) -> int:
        return int(self.present.sum())

    @property
    def half_range(self) -> np.ndarray:
        return 0.5 * (self.q_high - self.q_low)

    def morphology(self) -> np.ndarray:
        """Per-slot descriptors (privileged / MetaMorph-style): link mass share, range, gains."""
        j = len(self.present)
        out = np.zeros((j, 6))
        nominal = np.array([slot_def(self.family, s).kp for s in family_slots(self.family)])
        taus = np.array([slot_def(self.family, s).tau for s in family_slots(self.family)])
        for i in np.flatnonzero(self.present):
            body = self.model.jnt_bodyid[self.model.dof_jntid[self.dof_adr[i]]]
            out[i] = (self.model.body_mass[body] / self.total_mass, self.q_low[i], self.q_high[i],
                      self.kp[i] / nominal[i], self.tau_max[i] / taus[i], 1.0)
        return out


# --------------------------------------------------------------------------- helpers


def _axis_rotation(rotvec: np.ndarray) -> np.ndarray:
    angle = float(np.linalg.norm(rotvec))
    if angle < 1e-15:
        return np.eye(3)
    k = rotvec / angle
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * kx + (1 - np.cos(angle)) * kx @ kx


@functools.lru_cache(maxsize=4)
def template_links(family: str) -> dict[str, inert.LinkInertia]:
    """Per-link inertial parameters of the nominal template (geometry-derived, density 1000)."""
    links = _planar_template() if family == "planar" else _humanoid_template()
    spec = _base_spec(family)
    bodies = {}
    for link in links:
        parent = spec.worldbody if link.parent is None else bodies[link.parent]
        body = parent.add_body(name=link.name, pos=link.pos)
        _add_geom(body, link.geom, np.eye(3))
        bodies[link.name] = body
    model = spec.compile()
    out = {}
    for link in links:
        b = model.body(link.name).id
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, model.body_iquat[b])
        r = rot.reshape(3, 3)
        out[link.name] = inert.LinkInertia(float(model.body_mass[b]), model.body_ipos[b].copy(),
                                           r @ np.diag(model.body_inertia[b]) @ r.T)
    return out


def _geom_extent(geom: tuple) -> np.ndarray:
    if geom[0] == "capsule":
        ft = np.asarray(geom[1], dtype=float)
        return np.abs(ft[3:] - ft[:3]) + 2 * geom[2]
    return 2 * np.asarray(geom[2], dtype=float)


def _base_spec(family: str) -> mujoco.MjSpec:
    spec = mujoco.MjSpec()
    spec.option.timestep = TIMESTEP
    spec.compiler.autolimits = True
    spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[50, 50, 0.1],
                            contype=1, conaffinity=1, condim=3)
    return spec


def _add_geom(body, geom: tuple, stretch: np.ndarray, friction: float = 1.0):
    if geom[0] == "capsule":
        ft = np.asarray(geom[1], dtype=float)
        a, b = stretch @ ft[:3], stretch @ ft[3:]
        axis = ft[3:] - ft[:3]
        axis = axis / (np.linalg.norm(axis) + 1e-12)
        cross = np.sqrt(np.abs(np.linalg.det(stretch)) / max(np.linalg.norm(stretch @ axis), 1e-9))
        return body.add_geom(type=mujoco.mjtGeom.mjGEOM_CAPSULE, fromto=np.concatenate([a, b]),
                             size=[geom[2] * cross, 0, 0], contype=ROBOT_CONTYPE,
                             conaffinity=ROBOT_CONAFFINITY, friction=[friction, 0.005, 0.0001])
    pos = stretch @ np.asarray(geom[1], dtype=float)
    half = np.abs(np.diag(stretch)) * np.asarray(geom[2], dtype=float)
    return body.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, pos=pos, size=half,
                         contype=ROBOT_CONTYPE, conaffinity=ROBOT_CONAFFINITY,
                         friction=[friction, 0.005, 0.0001])


def _add_pd_actuator(spec: mujoco.MjSpec, joint_name: str, kp: float, kd: float, tau: float,
                     q_low: float, q_high: float) -> None:
    """tau = clip(Kp (ctrl - q) - Kd qdot, +-tau_max): MuJoCo general actuator, gear 1."""
    spec.add_actuator(
        name=f"pd_{joint_name}", target=joint_name, trntype=mujoco.mjtTrn.mjTRN_JOINT,
        gaintype=mujoco.mjtGain.mjGAIN_FIXED, biastype=mujoco.mjtBias.mjBIAS_AFFINE,
        gainprm=[kp] + [0] * 9, biasprm=[0, -kp, -kd] + [0] * 7, ctrllimited=True,
        ctrlrange=[q_low, q_high], forcelimited=True, forcerange=[-tau, tau], gear=[1, 0, 0, 0, 0, 0],
    )


# --------------------------------------------------------------------------- topology


def sample_topology(family: str, rng: np.random.Generator) -> set[str]:
    """Actuated slots: the revolute/fixed sampling of the optional joints [paper, probs recon]."""
    slots = family_slots(family)
    if family == "planar":
        active = {f"{s}_{j}" for s in "lr" for j in ("hip", "knee", "ankle")}
        if rng.random() < 0.3:
            active |= {"l_toe", "r_toe"}
        if rng.random() < 0.4:
            active |= {"l_shoulder", "l_elbow", "r_shoulder", "r_elbow"}
        if rng.random() < 0.4:
            active.add("waist")
        return active
    active = {f"{s}_{j}" for s in "lr" for j in sl.LEG_JOINTS}
    for j in sl.WAIST_ORDER:
        if rng.random() < 0.5:
            active.add(j)
    if rng.random() < 0.6:  # arms are symmetric: shoulder group, then elbow, then wrists
        active |= {f"{s}_{j}" for s in "lr" for j in sl.SHOULDER_ORDER}
        if rng.random() < 0.7:
            active |= {f"{s}_elbow" for s in "lr"}
            if rng.random() < 0.5:
                active |= {f"{s}_{j}" for s in "lr" for j in sl.WRIST_ORDER}
    for j in sl.HEAD_ORDER:
        if rng.random() < 0.3:
            active.add(j)
    assert active <= set(slots)
    return active


PLANAR_NOMINAL_TOPOLOGIES: dict[str, set[str]] = {
    "nominal_legs": {f"{s}_{j}" for s in "lr" for j in ("hip", "knee", "ankle")},
}
PLANAR_NOMINAL_TOPOLOGIES["nominal_arms"] = PLANAR_NOMINAL_TOPOLOGIES["nominal_legs"] | {
    "l_shoulder", "l_elbow", "r_shoulder", "r_elbow"}
PLANAR_NOMINAL_TOPOLOGIES["nominal_waist"] = PLANAR_NOMINAL_TOPOLOGIES["nominal_legs"] | {"waist"}
PLANAR_NOMINAL_TOPOLOGIES["nominal_toes"] = PLANAR_NOMINAL_TOPOLOGIES["nominal_legs"] | {
    "l_toe", "r_toe"}


# --------------------------------------------------------------------------- the generator


@dataclass
class BodyRecipe:
    """Everything that defines a generated body; ``theta`` = None means the nominal link."""

    family: str
    name: str
    active: set[str]
    theta: dict[str, np.ndarray] = field(default_factory=dict)
    joint_delta: dict[str, np.ndarray] = field(default_factory=dict)
    orient: dict[str, np.ndarray] = field(default_factory=dict)
    range_scale: dict[str, float] = field(default_factory=dict)
    gain_factor: float = 1.0
    friction: float = 1.0
    hip_order: tuple[str, str, str] = sl.HIP_TEMPLATE_ORDER
    naive: dict[str, inert.LinkInertia] = field(default_factory=dict)
    drop_slots: set[str] = field(default_factory=set)  # links removed entirely (no-ankle body)


def random_recipe(family: str, rng: np.random.Generator, name: str,
                  randomization: str = "physics", scale: float = 1.0,
                  active: set[str] | None = None) -> BodyRecipe:
    """Draw one body: topology, theta_inert per link, joint offsets, ranges, gains, friction."""
    planar = family == "planar"
    links = _planar_template() if planar else _humanoid_template()
    template = template_links(family)
    recipe = BodyRecipe(family, name, set(active) if active is not None else
                        sample_topology(family, rng))
    if not planar:
        recipe.hip_order = tuple(rng.permutation(np.array(sl.HIP_TEMPLATE_ORDER)).tolist())
    for link in links:
        extent = _geom_extent(link.geom)
        if randomization == "physics":
            recipe.theta[link.name] = inert.sample_theta(rng, extent, planar=planar, scale=scale)
        elif randomization == "naive":
            base = template[link.name]
            recipe.naive[link.name] = inert.naive_link(rng, base.mass, base.com, extent)
        if randomization != "none" and link.parent is not None:
            delta = rng.uniform(-1, 1, 3) * JOINT_NOISE * scale
            if planar:
                delta[1] = 0.0
            recipe.joint_delta[link.name] = delta
    if randomization != "none":
        if not planar:  # zero-sum orientation offsets per joint group
            for link in links:
                if len(link.joints) > 1:
                    r = rng.uniform(-ORIENT_NOISE, ORIENT_NOISE, (len(link.joints), 3)) * scale
                    r -= r.mean(axis=0)
                    for slot, rv in zip(link.joints, r):
                        recipe.orient[slot] = rv
        for slot in family_slots(family):
            recipe.range_scale[slot] = float(rng.uniform(1 - 0.2 * scale, 1 + 0.2 * scale))
        recipe.gain_factor = float(rng.uniform(1 - 0.2 * scale, 1 + 0.2 * scale))
        recipe.friction = float(rng.uniform(0.5, 1.2))
    return recipe


def build(recipe: BodyRecipe) -> Embodiment:
    """Compile a recipe with MjSpec into an :class:`Embodiment`."""
    family = recipe.family
    planar = family == "planar"
    links = _planar_template() if planar else _humanoid_template(recipe.hip_order)
    template = template_links(family)
    slots = family_slots(family)
    spec = _base_spec(family)
    spec.compiler.balanceinertia = bool(recipe.naive)
    bodies, inertials, stretches = {}, {}, {}
    joint_offsets: dict[str, tuple[np.ndarray, float]] = {}
    has_arms = planar and bool({"l_shoulder", "r_shoulder"} & recipe.active)
    n_repaired = 0
    for link in links:
        if planar and "arm" in link.name and not has_arms:
            continue  # planar arms exist only on bodies that have them
        if any(j in recipe.drop_slots for j in link.joints):
            continue
        theta = recipe.theta.get(link.name)
        stretch = inert.stretch_matrix(theta) if theta is not None else np.eye(3)
        stretches[link.name] = stretch
        if link.name in recipe.naive:
            li = recipe.naive[link.name]
            if not inert.satisfies_triangle(np.diag(li.inertia_com)):
                n_repaired += 1
        elif theta is not None:
            li = inert.perturb_link(template[link.name], theta)
        else:
            li = template[link.name]
        inertials[link.name] = li
        pos = np.asarray(link.pos, dtype=float)
        if link.parent is not None:
            pos = stretches[link.parent] @ pos  # child joints follow the parent's stretch
            delta = recipe.joint_delta.get(link.name, np.zeros(3))
            bound = 2.0 * float(np.linalg.norm(pos - inertials[link.parent].com))
            norm = float(np.linalg.norm(delta))
            if norm > bound > 0:
                delta = delta * (bound / norm)
            joint_offsets[link.name] = (delta, bound)
            pos = pos + delta
        parent = spec.worldbody if link.parent is None else bodies[link.parent]
        body = parent.add_body(name=link.name, pos=pos)
        body.explicitinertial = True
        body.mass = li.mass
        body.ipos = li.com
        body.fullinertia = li.fullinertia()
        _add_geom(body, link.geom, stretch, recipe.friction)
        if link.parent is None:
            if planar:
                body.add_joint(name="rootx", type=mujoco.mjtJoint.mjJNT_SLIDE, axis=[1, 0, 0])
                body.add_joint(name="rootz", type=mujoco.mjtJoint.mjJNT_SLIDE, axis=[0, 0, 1])
                body.add_joint(name="rooty", type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0, -1, 0])
            else:
                body.add_freejoint(name="root")
        for slot in link.joints:
            if slot not in recipe.active:
                continue  # locked: the links are welded
            d = slot_def(family, slot)
            lo, hi = np.deg2rad(d.range_deg) * recipe.range_scale.get(slot, 1.0)
            axis = np.array([0.0, -1.0, 0.0]) if planar else np.array(sl.axis_of(slot))
            if slot in recipe.orient:
                axis = _axis_rotation(recipe.orient[slot]) @ axis
            body.add_joint(name=slot, type=mujoco.mjtJoint.mjJNT_HINGE, axis=axis,
                           range=[lo, hi], damping=0.1, armature=0.01)
        bodies[link.name] = body
    # Gains scale linearly with total mass (paper) times one per-body factor.
    total_mass = sum(li.mass for li in inertials.values())
    nominal_mass = _nominal_mass(family)
    scale = total_mass / nominal_mass * recipe.gain_factor
    gains = {}
    for slot in slots:
        if slot in recipe.active:
            d = slot_def(family, slot)
            gains[slot] = (d.kp * scale, d.kd * scale, d.tau * scale)
            lo, hi = np.deg2rad(d.range_deg) * recipe.range_scale.get(slot, 1.0)
            _add_pd_actuator(spec, slot, *gains[slot], lo, hi)
    model = spec.compile()
    body = _embodiment_from_model(
        recipe.name, family, model, {s: s for s in recipe.active}, root_body="pelvis",
        anchors_vertex=True, hip_order=recipe.hip_order, friction=recipe.friction,
        has_arm_vertices=(not planar) or has_arms, dropped=recipe.drop_slots)
    body.gain_factor = recipe.gain_factor
    body.link_theta = dict(recipe.theta)
    body.joint_offsets = joint_offsets
    body.orient_offsets = dict(recipe.orient)
    body.n_repaired_links = n_repaired
    _place_on_ground(body)
    return body


@functools.lru_cache(maxsize=4)
def _nominal_mass(family: str) -> float:
    links = template_links(family)
    if family == "planar":  # the nominal planar body is the armless one
        return sum(li.mass for n, li in links.items() if "arm" not in n)
    return sum(li.mass for li in links.values())


def _embodiment_from_model(name, family, model, slot_to_joint, root_body, anchors_vertex,
                           hip_order, friction, has_arm_vertices=True, dropped=frozenset(),
                           source="procedural") -> Embodiment:
    slots = family_slots(family)
    j = len(slots)
    present = np.zeros(j, bool)
    qadr = -np.ones(j, int)
    dadr = -np.ones(j, int)
    aid = -np.ones(j, int)
    q_low, q_high, kp, kd, tau = (np.zeros(j) for _ in range(5))
    for i, slot in enumerate(slots):
        joint = slot_to_joint.get(slot)
        if joint is None:
            continue
        jid = model.joint(joint).id
        act = model.actuator(f"pd_{joint}").id
        present[i] = True
        qadr[i], dadr[i], aid[i] = model.jnt_qposadr[jid], model.jnt_dofadr[jid], act
        q_low[i], q_high[i] = model.jnt_range[jid]
        kp[i] = model.actuator_gainprm[act, 0]
        kd[i] = -model.actuator_biasprm[act, 2]
        tau[i] = model.actuator_forcerange[act, 1]
    q0 = np.clip(np.zeros(j), q_low, q_high)
    # Graph vertices: present slots plus the trunk anchors (and, for procedural bodies, every
    # locked joint whose links exist).
    vertex = present.copy()
    anchors = sl.PLANAR_ANCHORS if family == "planar" else sl.HUMANOID_ANCHORS
    for i, slot in enumerate(slots):
        if slot in anchors:
            vertex[i] = True
        elif anchors_vertex and slot not in dropped:
            is_arm = any(k in slot for k in ("shoulder", "elbow", "wrist"))
            if family == "planar" and "toe" not in slot and not is_arm:
                vertex[i] = True
            elif family == "planar" and "toe" in slot:
                vertex[i] = True
            elif is_arm and has_arm_vertices:
                vertex[i] = True
            elif family != "planar":
                vertex[i] = True
    if family == "planar":
        parent = sl.PLANAR_PARENT
    else:
        parent = sl.humanoid_parent(tuple(hip_order))
    adj = sl.adjacency(slots, parent, vertex)
    root = model.body(root_body).id
    floor = model.geom("floor").id
    feet = {"l": -1, "r": -1}
    side = -np.ones(model.ngeom, int)
    for g in range(model.ngeom):
        bname = model.body(model.geom_bodyid[g]).name
        for s, key in (("l", "left"), ("r", "right")):
            if _is_foot(bname, s, key):
                side[g] = 0 if s == "l" else 1
                if "toe" not in bname:
                    feet[s] = model.geom_bodyid[g]
    if feet["l"] < 0:  # one-legged bodies: both "feet" are the same
        feet["l"] = feet["r"]
    root_fields = {}
    if family == "planar":
        x, z, y = (model.joint(n).id for n in ("rootx", "rootz", "rooty"))
        root_fields = {"root_x_dof": int(model.jnt_dofadr[x]), "root_z_dof": int(model.jnt_dofadr[z]),
                       "pitch_qpos": int(model.jnt_qposadr[y]), "pitch_dof": int(model.jnt_dofadr[y]),
                       # our convention: hinge about -y (walker2d); dm-control's walker uses +y
                       "pitch_sign": float(-np.sign(model.jnt_axis[y][1]))}
    return Embodiment(**root_fields,
        name=name, family=family, model=model, present=present, vertex=vertex, adjacency=adj,
        qpos_adr=qadr, dof_adr=dadr, act_id=aid, q0=q0, q_low=q_low, q_high=q_high, kp=kp,
        kd=kd, tau_max=tau, total_mass=float(model.body_mass.sum()), nominal_height=0.0,
        root_body=root, floor_geom=floor, foot_side_of_geom=side,
        foot_bodies=(int(feet["l"]), int(feet["r"])), friction=friction,
        hip_order=tuple(hip_order), source=source)


def _is_foot(body_name: str, s: str, key: str) -> bool:
    if body_name in (f"{s}_foot", f"{s}_toe", f"{key}_foot"):
        return True
    if s == "r" and body_name == "foot":  # walker2d / hopper right foot
        return True
    if body_name in (f"{key}_foot", f"{s}foot", f"{s}toes"):  # dm-control walker, CMU
        return True
    return s == "l" and body_name == "foot_left"


def _place_on_ground(body: Embodiment) -> None:
    """Lift the root so that the lowest geom touches the floor, then record h*."""
    model = body.model
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    lowest = np.inf
    for g in range(model.ngeom):
        if g == body.floor_geom:
            continue
        lowest = min(lowest, data.geom_xpos[g][2] - model.geom_rbound[g])
    # geom_rbound over-estimates for boxes/capsules: refine with a short settle below.
    zadr = model.jnt_qposadr[model.body_jntadr[body.root_body]]
    offset = 1 if body.family == "planar" else 2  # rootz qpos, or free joint z
    shift = -lowest + 0.002
    model.qpos0[zadr + offset] += shift if body.family == "planar" else 0.0
    if body.family != "planar":
        model.qpos0[zadr + 2] = data.qpos[zadr + 2] + shift
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    # Drop the body until its feet rest (50 ms), then take the root height as h*.
    for _ in range(3):
        mujoco.mj_forward(model, data)
        contacts = [c for c in data.contact[: data.ncon]]
        if contacts:
            break
        model.qpos0[zadr + offset] -= 0.01 if body.family == "planar" else 0.0
        if body.family != "planar":
            model.qpos0[zadr + 2] -= 0.01
        data = mujoco.MjData(model)
    data = mujoco.MjData(model)
    data.ctrl[:] = 0.0
    _set_default_ctrl(body, data)
    mujoco.mj_step(model, data, nstep=25)
    body.nominal_height = float(data.xpos[body.root_body][2])


def _set_default_ctrl(body: Embodiment, data: mujoco.MjData) -> None:
    idx = np.flatnonzero(body.present)
    data.ctrl[body.act_id[idx]] = body.q0[idx]


def stands(body: Embodiment, seconds: float = 1.0, fraction: float = 0.7) -> bool:
    """The rejection test: hold a = 0 for ``seconds``; the root must stay above 70% of h*."""
    data = mujoco.MjData(body.model)
    _set_default_ctrl(body, data)
    steps = int(round(seconds / body.model.opt.timestep))
    lowest = np.inf
    for _ in range(10):
        mujoco.mj_step(body.model, data, nstep=steps // 10)
        lowest = min(lowest, float(data.xpos[body.root_body][2]))
    return lowest > fraction * body.nominal_height


def generate(family: str, seed: int, index: int = 0, randomization: str = "physics",
             scale: float = 1.0, max_tries: int = 20) -> Embodiment:
    """Body ``index`` of the pool of ``seed``: redraw until it passes the rejection test."""
    for attempt in range(max_tries):
        rng = np.random.default_rng(np.random.SeedSequence([seed, index, attempt]))
        recipe = random_recipe(family, rng, f"{family}_{seed}_{index}", randomization, scale)
        body = build(recipe)
        if stands(body):
            return body
    return body  # the last draw; callers may check stands()


# --------------------------------------------------------------------------- named bodies


def gymnasium_asset(name: str) -> str:
    import gymnasium

    return os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets", name)


GYM_WALKER_MAP = {"thigh_joint": "r_hip", "leg_joint": "r_knee", "foot_joint": "r_ankle",
                  "thigh_left_joint": "l_hip", "leg_left_joint": "l_knee",
                  "foot_left_joint": "l_ankle"}
GYM_HUMANOID_MAP = {
    "abdomen_z": "waist_yaw", "abdomen_y": "waist_pitch", "abdomen_x": "waist_roll",
    "right_hip_x": "r_hip_roll", "right_hip_z": "r_hip_yaw", "right_hip_y": "r_hip_pitch",
    "right_knee": "r_knee", "left_hip_x": "l_hip_roll", "left_hip_z": "l_hip_yaw",
    "left_hip_y": "l_hip_pitch", "left_knee": "l_knee",
    "right_shoulder1": "r_shoulder_pitch", "right_shoulder2": "r_shoulder_roll",
    "right_elbow": "r_elbow", "left_shoulder1": "l_shoulder_pitch",
    "left_shoulder2": "l_shoulder_roll", "left_elbow": "l_elbow",
}


def load_gymnasium_body(file: str, name: str, family: str, joint_map: dict[str, str],
                        root_body: str = "torso", lock_unmapped: bool = False,
                        hip_order: tuple[str, ...] = ("hip_roll", "hip_yaw", "hip_pitch"),
                        source: str = "gymnasium") -> Embodiment:
    """An offline MJCF (gymnasium or dm-control) with its motors replaced by the PD actuators
    (torque limit = gear x ctrlrange); with ``lock_unmapped`` every hinge that has no slot is
    removed (its links welded), as for humanoid_CMU's 56 joints on 32 slots."""
    path = file if os.path.isabs(file) else gymnasium_asset(file)
    spec = mujoco.MjSpec.from_file(path)
    spec.option.timestep = TIMESTEP
    motor_tau = {}
    for act in list(spec.actuators):
        motor_tau[act.target] = float(act.gear[0]) * float(max(abs(act.ctrlrange[0]),
                                                               abs(act.ctrlrange[1]), 1.0))
        spec.delete(act)
    if lock_unmapped:
        for joint in list(spec.joints):
            if joint.type == mujoco.mjtJoint.mjJNT_HINGE and joint.name not in joint_map:
                spec.delete(joint)
    base = spec.compile()
    nominal_total = _nominal_mass(family)
    scale = float(base.body_mass.sum()) / nominal_total
    slot_to_joint = {}
    for joint, slot in joint_map.items():
        if joint not in motor_tau:
            continue
        jid = base.joint(joint).id
        lo, hi = base.jnt_range[jid]
        d = slot_def(family, slot)
        _add_pd_actuator(spec, joint, d.kp * scale, d.kd * scale, motor_tau[joint], lo, hi)
        slot_to_joint[slot] = joint
    model = spec.compile()
    if family == "planar":
        hip_order = sl.HIP_TEMPLATE_ORDER
    body = _embodiment_from_model(name, family, model, slot_to_joint, root_body=root_body,
                                  anchors_vertex=False, hip_order=hip_order, friction=1.0,
                                  source=f"{source}:{os.path.basename(file)}")
    data = mujoco.MjData(model)
    _set_default_ctrl(body, data)
    mujoco.mj_step(model, data, nstep=25)
    body.nominal_height = float(data.xpos[body.root_body][2])
    return body


def dm_control_available() -> bool:
    return importlib.util.find_spec("dm_control") is not None


def dm_control_asset(relative: str) -> str:
    """A model file shipped inside the dm-control package (installed with --no-deps)."""
    spec = importlib.util.find_spec("dm_control")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("dm-control is not installed: pip install --no-deps dm-control")
    return os.path.join(list(spec.submodule_search_locations)[0], relative)


DMC_WALKER_MAP = {f"{side}_{j}": f"{side[0]}_{j}" for side in ("right", "left")
                  for j in ("hip", "knee", "ankle")}
DMC_HUMANOID_MAP = {**GYM_HUMANOID_MAP, "right_ankle_y": "r_ankle_pitch",
                    "right_ankle_x": "r_ankle_roll", "left_ankle_y": "l_ankle_pitch",
                    "left_ankle_x": "l_ankle_roll"}
# humanoid_CMU: 56 hinges; per CMU bone, rx ~ flexion (pitch), ry ~ yaw, rz ~ roll [recon].
CMU_MAP: dict[str, str] = {}
for _s in "lr":
    CMU_MAP.update({f"{_s}femurrz": f"{_s}_hip_roll", f"{_s}femurry": f"{_s}_hip_yaw",
                    f"{_s}femurrx": f"{_s}_hip_pitch", f"{_s}tibiarx": f"{_s}_knee",
                    f"{_s}footrx": f"{_s}_ankle_pitch", f"{_s}footrz": f"{_s}_ankle_roll",
                    f"{_s}humerusrz": f"{_s}_shoulder_roll", f"{_s}humerusry": f"{_s}_shoulder_yaw",
                    f"{_s}humerusrx": f"{_s}_shoulder_pitch", f"{_s}radiusrx": f"{_s}_elbow",
                    f"{_s}wristry": f"{_s}_wrist_yaw", f"{_s}handrz": f"{_s}_wrist_roll",
                    f"{_s}handrx": f"{_s}_wrist_pitch"})
CMU_MAP.update({"lowerbackrz": "waist_roll", "lowerbackry": "waist_yaw",
                "lowerbackrx": "waist_pitch", "headrz": "head_roll", "headry": "head_yaw",
                "headrx": "head_pitch"})


def _named_recipe(family: str, name: str, attempt: int = 0) -> BodyRecipe | None:
    """Hand-designed bodies (held-out extremes and named training bodies) [recon]."""
    rng = np.random.default_rng(np.random.SeedSequence([7_777, sum(map(ord, name)), attempt]))
    if family == "planar":
        legs = PLANAR_NOMINAL_TOPOLOGIES["nominal_legs"]
        zero = np.zeros(10)
        if name in PLANAR_NOMINAL_TOPOLOGIES:
            return BodyRecipe(family, name, set(PLANAR_NOMINAL_TOPOLOGIES[name]))
        if name == "long_light":  # long legs (+22% length), light (mass x 0.74)
            theta = {k: np.array([-0.15, 0, 0, 0.2, 0, 0, 0, 0, 0, 0]) for k in
                     ("l_thigh", "r_thigh", "l_shin", "r_shin")}
            theta.update({k: np.array([-0.15, 0, 0, 0, 0, 0, 0, 0, 0, 0]) for k in
                          ("pelvis", "torso")})
            return BodyRecipe(family, name, set(legs), theta=theta)
        if name == "short_heavy_arms":  # short legs, heavy trunk, arms
            theta = {k: np.array([0.1, 0, 0, -0.2, 0, 0, 0, 0, 0, 0]) for k in
                     ("l_thigh", "r_thigh", "l_shin", "r_shin")}
            theta.update({k: np.array([0.15, 0.1, 0, 0, 0, 0, 0, 0, 0, 0]) for k in
                          ("pelvis", "torso")})
            return BodyRecipe(family, name, set(PLANAR_NOMINAL_TOPOLOGIES["nominal_arms"]),
                              theta=theta)
        if name == "toes_waist":
            return BodyRecipe(family, name, legs | {"waist", "l_toe", "r_toe"},
                              theta={"torso": zero + np.r_[0.1, zero[1:]]})
        if name == "asymmetric":  # left leg 35% heavier than the right
            theta = {f"l_{k}": np.r_[0.15, zero[1:]] for k in ("thigh", "shin", "foot")}
            theta.update({f"r_{k}": np.r_[-0.15, zero[1:]] for k in ("thigh", "shin", "foot")})
            return BodyRecipe(family, name, set(legs), theta=theta)
        if name == "no_ankle":  # out of distribution: 4 DoF, feet welded to the shins
            return BodyRecipe(family, name, {f"{s}_{j}" for s in "lr" for j in ("hip", "knee")})
        if name == "ood_wide":  # parameters 10-20% outside the training ranges
            return random_recipe(family, rng, name, "physics", scale=1.15,
                                 active=set(PLANAR_NOMINAL_TOPOLOGIES["nominal_arms"]))
        return None
    topo = HUMANOID_NAMED.get(name)
    if topo is None:
        return None
    legs = {f"{s}_{j}" for s in "lr" for j in sl.LEG_JOINTS}
    active = legs | set(topo)
    if name.startswith("h1_like"):  # H1-style: no ankle roll
        active -= {"l_ankle_roll", "r_ankle_roll"}
    if name == "biped12_nominal":
        return BodyRecipe(family, name, active)
    return random_recipe(family, rng, name, "physics", 1.0, active=active)


def _arm(joints: tuple[str, ...]) -> set[str]:
    return {f"{s}_{j}" for s in "lr" for j in joints}


# 3-D named bodies: topology analogues of the paper's robots (not their real models, which no
# offline package ships), each with its own seeded morphology [recon].
HUMANOID_NAMED: dict[str, set[str]] = {
    "biped12_nominal": set(),
    "biped12": set(),
    "waist15": set(sl.WAIST_ORDER),
    "g1_like_23": {"waist_yaw"} | _arm((*sl.SHOULDER_ORDER, "elbow", "wrist_roll")),
    "g1_like_29": set(sl.WAIST_ORDER) | _arm((*sl.SHOULDER_ORDER, "elbow", *sl.WRIST_ORDER)),
    "full32": set(sl.WAIST_ORDER) | _arm((*sl.SHOULDER_ORDER, "elbow", *sl.WRIST_ORDER))
    | set(sl.HEAD_ORDER),
    "t1_like_21": {"waist_yaw", "head_yaw", "head_pitch"} | _arm((*sl.SHOULDER_ORDER[:2], "elbow")),
    "k1_like_22": {"head_yaw", "head_pitch"} | _arm((*sl.SHOULDER_ORDER, "elbow")),
    "n1_like_23": {"waist_yaw"} | _arm((*sl.SHOULDER_ORDER, "elbow", "wrist_roll")),
    "h1_like_19": {"waist_yaw"} | _arm((*sl.SHOULDER_ORDER, "elbow")),
    "x2_like_30": set(sl.WAIST_ORDER) | _arm((*sl.SHOULDER_ORDER, "elbow", *sl.WRIST_ORDER))
    | {"head_yaw"},
    "atom_like_27": {"waist_yaw"} | _arm((*sl.SHOULDER_ORDER, "elbow", *sl.WRIST_ORDER)),
}

DMC_NAMED: dict[str, tuple] = {
    "dmc_walker": ("planar", "suite/walker.xml", DMC_WALKER_MAP, "torso", False),
    "dmc_humanoid": ("humanoid", "suite/humanoid.xml", DMC_HUMANOID_MAP, "torso", False),
    "dmc_humanoid_cmu": ("humanoid", "suite/humanoid_CMU.xml", CMU_MAP, "root", True),
}
_DMC_HELDOUT = {"planar": ("dmc_walker",), "humanoid": ("dmc_humanoid", "dmc_humanoid_cmu")}

NAMED_SETS: dict[str, dict[str, tuple[str, ...]]] = {
    "planar": {
        "train": ("nominal_legs", "nominal_arms", "nominal_waist", "nominal_toes"),
        "heldout": ("walker2d_v5", "long_light", "short_heavy_arms", "toes_waist", "asymmetric"),
        "ood": ("no_ankle", "hopper", "ood_wide"),
    },
    "humanoid": {
        "train": ("biped12_nominal", "biped12", "waist15", "g1_like_23", "g1_like_29", "full32"),
        "heldout": ("gym_humanoid", "t1_like_21", "k1_like_22", "n1_like_23", "h1_like_19",
                    "x2_like_30", "atom_like_27"),
        "ood": (),
    },
}


if dm_control_available():  # the dm-control models join the held-out sets when installed
    for _fam, _names in _DMC_HELDOUT.items():
        NAMED_SETS[_fam]["heldout"] = NAMED_SETS[_fam]["heldout"] + _names


@functools.lru_cache(maxsize=256)
def named(family: str, name: str) -> Embodiment:
    """A named body of a family (cached; models are read-only and shared across envs)."""
    if family == "planar" and name == "walker2d_v5":
        return load_gymnasium_body("walker2d_v5.xml", name, family, GYM_WALKER_MAP)
    if family == "planar" and name == "walker2d":
        return load_gymnasium_body("walker2d.xml", name, family, GYM_WALKER_MAP)
    if family == "planar" and name == "hopper":
        return load_gymnasium_body("hopper.xml", name, family, {
            "thigh_joint": "r_hip", "leg_joint": "r_knee", "foot_joint": "r_ankle"})
    if family == "humanoid" and name == "gym_humanoid":
        return load_gymnasium_body("humanoid.xml", name, family, GYM_HUMANOID_MAP)
    if name in DMC_NAMED:
        fam, file, joint_map, root, lock = DMC_NAMED[name]
        if fam == family:
            return load_gymnasium_body(dm_control_asset(file), name, family, joint_map,
                                       root_body=root, lock_unmapped=lock, source="dm_control")
    for attempt in range(20):  # the rejection test applies to named random bodies too
        recipe = _named_recipe(family, name, attempt)
        if recipe is None:
            known = sorted({n for group in NAMED_SETS[family].values() for n in group})
            raise ValueError(f"unknown {family} body {name!r}; named bodies are {known}")
        body = build(recipe)
        if stands(body):
            break
    return body


@functools.lru_cache(maxsize=64)
def pool(family: str, seed: int, size: int, randomization: str = "physics") -> tuple[Embodiment, ...]:
    """The training pool of ``seed``: ``size`` generated bodies (or the 4 nominal ones)."""
    if randomization == "none":
        names = NAMED_SETS[family]["train"][:4]
        return tuple(named(family, n) for n in names)
    return tuple(generate(family, seed, i, randomization) for i in range(size))
