"""Procedural generation: a seeded :class:`BodyRecipe` drawn from the template, compiled by
:func:`build`. With draws from one ``numpy`` Generator:

1. the revolute/fixed sampling of optional joints (waist, toes, arms; 3-D: waist, arms, head);
2. the pseudo-inertia deformation ``J' = (U L)(U L)^T`` of every link (``inertia.py``), whose
   stretch ``E`` also moves the link's collision geometry and child joint positions;
3. joint position offsets bounded by twice the distance to the parent link's centre of mass,
   zero-sum orientation offsets per joint group and (3-D) a random kinematic order of the
   three hip axes;
4. joint-range scale U[0.8, 1.2] per joint and one gain factor U[0.8, 1.2] per body; PD gains
   and torque limits scale linearly with total mass (the paper's rule);
5. a rejection test: holding a = 0 for 1 s must keep the root above 70% of its nominal height.

The planar v2 recipe (``recipe_version="v2"``, XEmbodiedWalker-v2) differs in the feet, the
hips and the rejection test [recon]. v1 bodies stand on a sole that spans the ankle with their
knees locked straight at the joint limit, so a = 0 stands and no learner beat it on them. In
v2 every foot is walker2d's (the sole's rear end under the ankle,
``templates.FOOT_GEOMS["heel"]``), every hip has walker2d's range (-150..0 deg: it flexes
only, ``templates.PLANAR_V2_SLOT_DEFS``), and:

6. a heel margin ``m ~ U[V2_HEEL_MARGIN]`` is drawn, and each foot link is translated along
   its sole (geometry and mass together: a rigid translation, the ``t`` of the affine map, so
   the link stays physical) until the standing centre of mass lies ``-m`` = 0-4 cm ahead of
   the centre of the heel's rounded end: inside the support, but so close to its rear edge
   that the ankle's PD stiffness cannot hold the pose, and the body tips backwards over its
   heels unless a policy balances it (gymnasium's walker2d: 2.6 cm ahead, falls within 2.7 s);
7. the rejection test is reversed: a = 0 held without pushes must fall within ``V2_FALL_S``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import mujoco
import numpy as np

from . import inertia as inert
from . import slots as sl
from .embodiment import (
    Embodiment,
    embodiment_from_model,
    fall_time,
    place_on_ground,
    rest_on_ground,
    stands,
)
from .templates import (
    add_geom,
    add_pd_actuator,
    base_spec,
    family_slots,
    geom_extent,
    humanoid_template,
    nominal_mass,
    planar_template,
    slot_def,
    template_links,
)

V2_HEEL_MARGIN = (-0.04, 0.0)  # m, centre of mass behind (< 0: ahead of) the heel end (v2) [recon]
V2_FALL_S = 5.0  # v2 rejection test: a = 0 must fall within this many seconds [recon]
RECIPES = ("v1", "v2")
JOINT_NOISE = 0.015  # m, per axis, before the 2 x COM-distance bound [recon]
ORIENT_NOISE = 0.05  # rad, per axis, orientation offsets (3-D) [recon]


def _axis_rotation(rotvec: np.ndarray) -> np.ndarray:
    angle = float(np.linalg.norm(rotvec))
    if angle < 1e-15:
        return np.eye(3)
    k = rotvec / angle
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * kx + (1 - np.cos(angle)) * kx @ kx


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
    feet: str = "v1"  # planar foot shape (templates.FOOT_GEOMS)
    heel_margin: float | None = None  # v2: CoM this far behind the heel end (m; < 0: ahead)
    foot_shift: dict[str, float] = field(default_factory=dict)  # v2: foot translation (m)


def random_recipe(family: str, rng: np.random.Generator, name: str,
                  randomization: str = "physics", scale: float = 1.0,
                  active: set[str] | None = None, recipe_version: str = "v1") -> BodyRecipe:
    """Draw one body: topology, theta_inert per link, joint offsets, ranges, gains, friction
    (and, for the planar v2 recipe, the heel margin)."""
    planar = family == "planar"
    feet = "heel" if planar and recipe_version == "v2" else "v1"
    links = planar_template(feet) if planar else humanoid_template()
    template = template_links(family, feet)
    recipe = BodyRecipe(family, name, set(active) if active is not None else
                        sample_topology(family, rng), feet=feet)
    if not planar:
        recipe.hip_order = tuple(rng.permutation(np.array(sl.HIP_TEMPLATE_ORDER)).tolist())
    for link in links:
        extent = geom_extent(link.geom)
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
    if feet == "heel":
        recipe.heel_margin = float(rng.uniform(*V2_HEEL_MARGIN))
    return recipe


def build(recipe: BodyRecipe) -> Embodiment:
    """Compile a recipe with MjSpec into an :class:`Embodiment`; with a heel margin (v2) the
    feet are first placed by :func:`place_feet`."""
    if recipe.heel_margin is not None and not recipe.foot_shift:
        place_feet(recipe)
    return _build(recipe)


def place_feet(recipe: BodyRecipe, iterations: int = 5) -> None:
    """Set ``recipe.foot_shift``: translate each foot along its sole until the standing centre of
    mass (default pose) lies ``heel_margin`` behind the centre of the heel's rounded end (a
    negative margin: ahead of it). Moving a foot moves the centre of mass a little, hence a few
    fixed-point iterations (< 1 mm)."""
    recipe.foot_shift = {"l": 0.0, "r": 0.0}
    for _ in range(iterations):
        body = _build(recipe)
        model = body.model
        data = mujoco.MjData(model)
        mujoco.mj_forward(model, data)
        com_x = float(data.subtree_com[body.root_body][0])
        for s in "lr":
            foot = model.body(f"{s}_foot").id
            geom = int(np.flatnonzero(model.geom_bodyid == foot)[0])
            heel_x = float(data.geom_xpos[geom][0] - model.geom_size[geom][1])  # rear end centre
            recipe.foot_shift[s] += com_x + recipe.heel_margin - heel_x


def _build(recipe: BodyRecipe) -> Embodiment:
    family = recipe.family
    planar = family == "planar"
    links = planar_template(recipe.feet) if planar else humanoid_template(recipe.hip_order)
    template = template_links(family, recipe.feet)
    version = "v2" if recipe.feet == "heel" else "v1"  # v2: walker2d feet and hips
    slots = family_slots(family)
    spec = base_spec(family)
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
        shift = np.zeros(3)
        if link.foot and recipe.foot_shift:  # v2: a rigid translation of the whole foot
            shift[0] = recipe.foot_shift[link.foot]
        if link.name.endswith("_foot") and shift[0]:
            li = inert.LinkInertia(li.mass, li.com + shift, li.inertia_com)
        inertials[link.name] = li
        pos = np.asarray(link.pos, dtype=float)
        if link.parent is not None:
            pos = stretches[link.parent] @ pos  # child joints follow the parent's stretch
            if link.name.endswith("_toe"):
                pos = pos + shift  # the toe hangs from the translated sole's front end
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
        geom = add_geom(body, link.geom, stretch, recipe.friction)
        if link.name.endswith("_foot") and shift[0]:
            geom.fromto = geom.fromto + np.concatenate([shift, shift])
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
            d = slot_def(family, slot, version)
            lo, hi = np.deg2rad(d.range_deg) * recipe.range_scale.get(slot, 1.0)
            axis = np.array([0.0, -1.0, 0.0]) if planar else np.array(sl.axis_of(slot))
            if slot in recipe.orient:
                axis = _axis_rotation(recipe.orient[slot]) @ axis
            body.add_joint(name=slot, type=mujoco.mjtJoint.mjJNT_HINGE, axis=axis,
                           range=[lo, hi], damping=0.1, armature=0.01)
        bodies[link.name] = body
    # Gains scale linearly with total mass (paper) times one per-body factor.
    total_mass = sum(li.mass for li in inertials.values())
    scale = total_mass / nominal_mass(family) * recipe.gain_factor
    gains = {}
    for slot in slots:
        if slot in recipe.active:
            d = slot_def(family, slot, version)
            gains[slot] = (d.kp * scale, d.kd * scale, d.tau * scale)
            lo, hi = np.deg2rad(d.range_deg) * recipe.range_scale.get(slot, 1.0)
            add_pd_actuator(spec, slot, *gains[slot], lo, hi)
    model = spec.compile()
    body = embodiment_from_model(
        recipe.name, family, model, {s: s for s in recipe.active}, root_body="pelvis",
        anchors_vertex=True, hip_order=recipe.hip_order, friction=recipe.friction,
        has_arm_vertices=(not planar) or has_arms, dropped=recipe.drop_slots)
    body.gain_factor = recipe.gain_factor
    body.link_theta = dict(recipe.theta)
    body.joint_offsets = joint_offsets
    body.orient_offsets = dict(recipe.orient)
    body.n_repaired_links = n_repaired
    if recipe.heel_margin is not None:
        rest_on_ground(body)  # v2: the body itself is lifted (see embodiment.rest_on_ground)
    else:
        place_on_ground(body)
    return body


def accept(body: Embodiment, recipe_version: str = "v1") -> bool:
    """The rejection test: v1 keeps bodies that stand with a = 0 for 1 s; the planar v2 recipe
    keeps bodies on which a = 0 falls within ``V2_FALL_S`` seconds (no pushes)."""
    if recipe_version == "v2" and body.family == "planar":
        return fall_time(body, V2_FALL_S) <= V2_FALL_S
    return stands(body)


def generate(family: str, seed: int, index: int = 0, randomization: str = "physics",
             scale: float = 1.0, max_tries: int = 20, recipe_version: str = "v1") -> Embodiment:
    """Body ``index`` of the pool of ``seed``: redraw until it passes the rejection test."""
    if recipe_version not in RECIPES:
        raise ValueError(f"recipe_version must be one of {RECIPES}, got {recipe_version!r}")
    for attempt in range(max_tries):
        key = [seed, index, attempt] if recipe_version == "v1" else [seed, index, attempt, 2]
        rng = np.random.default_rng(np.random.SeedSequence(key))
        recipe = random_recipe(family, rng, f"{family}_{seed}_{index}", randomization, scale,
                               recipe_version=recipe_version)
        body = build(recipe)
        if accept(body, recipe_version):
            return body
    return body  # the last draw; callers may check accept()

