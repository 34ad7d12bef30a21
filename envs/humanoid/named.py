"""Named bodies: the offline gymnasium / dm-control models mapped onto the slots (their motors
replaced by the same PD actuators, torque limit = gear x ctrlrange), the hand-designed held-out
extremes and 3-D topology analogues of the paper's robots, the named sets (train / heldout /
ood) and the seeded training pools: recipe v1 draws them from the family's template
(``generator``), recipe v2 (XEmbodiedWalker-v2) from walker2d_v5 (``variants``)."""

from __future__ import annotations

import functools
import importlib.util
import os

import mujoco
import numpy as np

from . import slots as sl
from . import variants
from .embodiment import Embodiment, embodiment_from_model, set_default_ctrl, stands
from .generator import PLANAR_NOMINAL_TOPOLOGIES, BodyRecipe, build, generate, random_recipe
from .templates import TIMESTEP, add_pd_actuator, nominal_mass, slot_def


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
    return body_from_spec(mujoco.MjSpec.from_file(path), name, family, joint_map, root_body,
                          lock_unmapped, hip_order, f"{source}:{os.path.basename(file)}")


def body_from_spec(spec: mujoco.MjSpec, name: str, family: str, joint_map: dict[str, str],
                   root_body: str = "torso", lock_unmapped: bool = False,
                   hip_order: tuple[str, ...] = ("hip_roll", "hip_yaw", "hip_pitch"),
                   source: str = "gymnasium") -> Embodiment:
    """:func:`load_gymnasium_body` on a model already read (and possibly edited: the walker2d
    variants of ``variants.py``)."""
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
    nominal_total = nominal_mass(family)
    scale = float(base.body_mass.sum()) / nominal_total
    slot_to_joint = {}
    for joint, slot in joint_map.items():
        if joint not in motor_tau:
            continue
        jid = base.joint(joint).id
        lo, hi = base.jnt_range[jid]
        d = slot_def(family, slot)
        add_pd_actuator(spec, joint, d.kp * scale, d.kd * scale, motor_tau[joint], lo, hi)
        slot_to_joint[slot] = joint
    model = spec.compile()
    if family == "planar":
        hip_order = sl.HIP_TEMPLATE_ORDER
    body = embodiment_from_model(name, family, model, slot_to_joint, root_body=root_body,
                                  anchors_vertex=False, hip_order=hip_order, friction=1.0,
                                  source=source)
    data = mujoco.MjData(model)
    set_default_ctrl(body, data)
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


def named_recipe(family: str, name: str, attempt: int = 0) -> BodyRecipe | None:
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


# XEmbodiedWalker-v2 (recipe "v2"): walker2d_v5 and its variants (``variants.py``). Held-out
# bodies come from a seed stream no training pool uses; the OOD set is v1's hand-designed bodies
# and hopper (other templates altogether).
V2_HELDOUT = ("walker2d_v5", *(f"w2v_h{k}" for k in range(8)))
NAMED_SETS_V2: dict[str, tuple[str, ...]] = {
    "train": ("walker2d_v5",),
    "heldout": V2_HELDOUT,
    "ood": ("hopper", "long_light", "short_heavy_arms"),
}
RECIPES = ("v1", "v2")


def named_sets(family: str, recipe_version: str = "v1") -> dict[str, tuple[str, ...]]:
    """The named sets (train / heldout / ood) of a family under a recipe version."""
    if recipe_version not in RECIPES:
        raise ValueError(f"recipe_version must be one of {RECIPES}, got {recipe_version!r}")
    if recipe_version == "v2":
        if family != "planar":
            raise ValueError("recipe v2 (walker2d variants) is planar only")
        return NAMED_SETS_V2
    return NAMED_SETS[family]


@functools.lru_cache(maxsize=256)
def named(family: str, name: str) -> Embodiment:
    """A named body of a family (cached; models are read-only and shared across envs)."""
    if family == "planar" and variants.is_variant(name):
        return variants.walker2d_variant(name)
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
        recipe = named_recipe(family, name, attempt)
        if recipe is None:
            known = sorted({n for group in NAMED_SETS[family].values() for n in group})
            raise ValueError(f"unknown {family} body {name!r}; named bodies are {known}")
        body = build(recipe)
        if stands(body):
            break
    return body


@functools.lru_cache(maxsize=64)
def pool(family: str, seed: int, size: int, randomization: str = "physics",
         recipe_version: str = "v1") -> tuple[Embodiment, ...]:
    """The training pool of ``seed``: ``size`` generated bodies (or the nominal ones). Recipe
    v1 draws from the family's template (``generator``); v2 draws walker2d_v5 variants."""
    if named_sets(family, recipe_version) is NAMED_SETS_V2:
        if randomization == "none":
            return (named(family, "walker2d_v5"),)
        return tuple(named(family, n) for n in variants.pool_names(seed, size, randomization))
    if randomization == "none":
        names = NAMED_SETS[family]["train"][:4]
        return tuple(named(family, n) for n in names)
    return tuple(generate(family, seed, i, randomization) for i in range(size))
