"""The compiled body (:class:`Embodiment`): a MuJoCo model and its embedding into the family's
joint slots (presence mask I, graph vertices, adjacency A, per-slot addresses, default pose,
gains), read from any model whose joints are mapped to slots; placing it on the ground (h*)
and the rejection test (hold a = 0 for 1 s)."""

from __future__ import annotations

from dataclasses import dataclass, field

import mujoco
import numpy as np

from . import slots as sl
from .templates import family_slots, slot_def

MORPH_FEATURES = 6  # per-slot morphology descriptors (Embodiment.morphology)


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
        out = np.zeros((j, MORPH_FEATURES))
        nominal = np.array([slot_def(self.family, s).kp for s in family_slots(self.family)])
        taus = np.array([slot_def(self.family, s).tau for s in family_slots(self.family)])
        for i in np.flatnonzero(self.present):
            body = self.model.jnt_bodyid[self.model.dof_jntid[self.dof_adr[i]]]
            out[i] = (self.model.body_mass[body] / self.total_mass, self.q_low[i], self.q_high[i],
                      self.kp[i] / nominal[i], self.tau_max[i] / taus[i], 1.0)
        return out


def embodiment_from_model(name, family, model, slot_to_joint, root_body, anchors_vertex,
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


def lowest_point(body: Embodiment, data: mujoco.MjData, exact: bool = True) -> float:
    """Height of the body's lowest point in ``data``'s (forwarded) pose: the exact extent of
    capsules and boxes, or (``exact=False``, v0/v1's) each geom's bounding sphere."""
    model, lowest = body.model, np.inf
    for g in range(model.ngeom):
        if g == body.floor_geom:
            continue
        z, size = float(data.geom_xpos[g][2]), model.geom_size[g]
        rz = data.geom_xmat[g].reshape(3, 3)[2]  # z components of the geom's axes
        if exact and model.geom_type[g] == mujoco.mjtGeom.mjGEOM_CAPSULE:
            low = z - abs(rz[2]) * size[1] - size[0]
        elif exact and model.geom_type[g] == mujoco.mjtGeom.mjGEOM_BOX:
            low = z - float(np.abs(rz) @ size[:3])
        else:
            low = z - model.geom_rbound[g]
        lowest = min(lowest, low)
    return lowest


def place_on_ground(body: Embodiment) -> None:
    """Lift the root so that the lowest geom touches the floor, then record h*."""
    model = body.model
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    lowest = lowest_point(body, data, exact=False)
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
    set_default_ctrl(body, data)
    mujoco.mj_step(model, data, nstep=25)
    body.nominal_height = float(data.xpos[body.root_body][2])


def set_default_ctrl(body: Embodiment, data: mujoco.MjData) -> None:
    idx = np.flatnonzero(body.present)
    data.ctrl[body.act_id[idx]] = body.q0[idx]


def stands(body: Embodiment, seconds: float = 1.0, fraction: float = 0.7) -> bool:
    """The rejection test: hold a = 0 for ``seconds``; the root must stay above 70% of h*."""
    data = mujoco.MjData(body.model)
    set_default_ctrl(body, data)
    steps = int(round(seconds / body.model.opt.timestep))
    lowest = np.inf
    for _ in range(10):
        mujoco.mj_step(body.model, data, nstep=steps // 10)
        lowest = min(lowest, float(data.xpos[body.root_body][2]))
    return lowest > fraction * body.nominal_height



def fall_time(body: Embodiment, seconds: float = 3.0) -> float:
    """Seconds until a = 0 (the default pose held, no pushes) falls: the root below half of h*
    or (planar) the torso pitched past 60 deg; ``inf`` if it is still up after ``seconds``."""
    model = body.model
    data = mujoco.MjData(model)
    set_default_ctrl(body, data)
    chunk = 10  # check every 20 ms, as the 50 Hz env does
    for k in range(int(round(seconds / (chunk * model.opt.timestep)))):
        mujoco.mj_step(model, data, nstep=chunk)
        pitch = abs(float(data.qpos[body.pitch_qpos])) if body.family == "planar" else 0.0
        if data.xpos[body.root_body][2] < 0.5 * body.nominal_height or pitch > np.deg2rad(60):
            return (k + 1) * chunk * model.opt.timestep
    return float("inf")


def rest_on_ground(body: Embodiment, settle_steps: int = 25) -> None:
    """Lift the root body (its ``body_pos``) so that the lowest point of the default pose touches
    the floor, then record h* after ``settle_steps`` physics steps with a = 0 (v2 bodies).

    :func:`place_on_ground` (v0/v1) shifts ``qpos0`` of the planar root's slide joint, which
    MuJoCo treats as the joint's reference: the body does not move, so generated v1 bodies start
    up to ~0.2 m inside the floor or above it. v2 moves the body itself."""
    model = body.model
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    lowest = lowest_point(body, data)
    model.body_pos[body.root_body][2] += -lowest + 0.001
    data = mujoco.MjData(model)
    set_default_ctrl(body, data)
    mujoco.mj_step(model, data, nstep=settle_steps)
    body.nominal_height = float(data.xpos[body.root_body][2])
