"""The two body templates (planar biped, 3-D humanoid) and the MjSpec building blocks.

One template per family [recon, following the paper's single-template scheme]: every link of
the template always exists; a joint is either revolute (actuated, a present slot) or locked
(the links are welded). Per slot: the nominal range, PD gains and torque limit; per link: the
geometry from which the nominal inertia is derived (density 1000). Control uses MuJoCo
``general`` actuators that implement the PD law in C at every physics step:
``tau = clip(Kp (q_des - q) - Kd qdot, -tau_max, tau_max)`` with ``ctrl = q_des``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import mujoco
import numpy as np

from . import inertia as inert
from . import slots as sl

TIMESTEP = 0.002  # 500 Hz physics
ROBOT_CONTYPE, ROBOT_CONAFFINITY = 1, 0  # robot-robot contacts off, robot-floor on


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


def planar_template() -> tuple[LinkDef, ...]:
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


def humanoid_template(hip_order: tuple[str, str, str] = sl.HIP_TEMPLATE_ORDER) -> tuple[LinkDef, ...]:
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


@functools.lru_cache(maxsize=4)
def template_links(family: str) -> dict[str, inert.LinkInertia]:
    """Per-link inertial parameters of the nominal template (geometry-derived, density 1000)."""
    links = planar_template() if family == "planar" else humanoid_template()
    spec = base_spec(family)
    bodies = {}
    for link in links:
        parent = spec.worldbody if link.parent is None else bodies[link.parent]
        body = parent.add_body(name=link.name, pos=link.pos)
        add_geom(body, link.geom, np.eye(3))
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


def geom_extent(geom: tuple) -> np.ndarray:
    if geom[0] == "capsule":
        ft = np.asarray(geom[1], dtype=float)
        return np.abs(ft[3:] - ft[:3]) + 2 * geom[2]
    return 2 * np.asarray(geom[2], dtype=float)


def base_spec(family: str) -> mujoco.MjSpec:
    spec = mujoco.MjSpec()
    spec.option.timestep = TIMESTEP
    spec.compiler.autolimits = True
    spec.worldbody.add_geom(name="floor", type=mujoco.mjtGeom.mjGEOM_PLANE, size=[50, 50, 0.1],
                            contype=1, conaffinity=1, condim=3)
    return spec


def add_geom(body, geom: tuple, stretch: np.ndarray, friction: float = 1.0):
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


def add_pd_actuator(spec: mujoco.MjSpec, joint_name: str, kp: float, kd: float, tau: float,
                     q_low: float, q_high: float) -> None:
    """tau = clip(Kp (ctrl - q) - Kd qdot, +-tau_max): MuJoCo general actuator, gear 1."""
    spec.add_actuator(
        name=f"pd_{joint_name}", target=joint_name, trntype=mujoco.mjtTrn.mjTRN_JOINT,
        gaintype=mujoco.mjtGain.mjGAIN_FIXED, biastype=mujoco.mjtBias.mjBIAS_AFFINE,
        gainprm=[kp] + [0] * 9, biasprm=[0, -kp, -kd] + [0] * 7, ctrllimited=True,
        ctrlrange=[q_low, q_high], forcelimited=True, forcerange=[-tau, tau], gear=[1, 0, 0, 0, 0, 0],
    )


@functools.lru_cache(maxsize=4)
def nominal_mass(family: str) -> float:
    links = template_links(family)
    if family == "planar":  # the nominal planar body is the armless one
        return sum(li.mass for n, li in links.items() if "arm" not in n)
    return sum(li.mass for li in links.values())
