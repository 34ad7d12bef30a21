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
"""

from __future__ import annotations

from dataclasses import dataclass, field

import mujoco
import numpy as np

from . import inertia as inert
from . import slots as sl
from .embodiment import Embodiment, embodiment_from_model, place_on_ground, stands
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


def random_recipe(family: str, rng: np.random.Generator, name: str,
                  randomization: str = "physics", scale: float = 1.0,
                  active: set[str] | None = None) -> BodyRecipe:
    """Draw one body: topology, theta_inert per link, joint offsets, ranges, gains, friction."""
    planar = family == "planar"
    links = planar_template() if planar else humanoid_template()
    template = template_links(family)
    recipe = BodyRecipe(family, name, set(active) if active is not None else
                        sample_topology(family, rng))
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
    return recipe


def build(recipe: BodyRecipe) -> Embodiment:
    """Compile a recipe with MjSpec into an :class:`Embodiment`."""
    family = recipe.family
    planar = family == "planar"
    links = planar_template() if planar else humanoid_template(recipe.hip_order)
    template = template_links(family)
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
        add_geom(body, link.geom, stretch, recipe.friction)
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
    scale = total_mass / nominal_mass(family) * recipe.gain_factor
    gains = {}
    for slot in slots:
        if slot in recipe.active:
            d = slot_def(family, slot)
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
    place_on_ground(body)
    return body


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

