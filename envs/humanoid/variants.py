"""Procedural variants of gymnasium's walker2d_v5: the planar bodies of XEmbodiedWalker-v2.

walker2d_v5 is the template [recon: the paper deforms one humanoid template; the planar family
deforms walker2d]. A variant draws, per link type (torso, thigh, leg, foot; both legs alike),
a length factor ``l``, a radius factor ``r`` and a density factor ``rho``, each
U[1 - spread, 1 + spread]. Two randomizations share those draws (so a naive body has the same
geometry as the physics-consistent body of the same key):

* ``physics`` (the paper's physics-consistent morphological randomization): every capsule is
  stretched by ``r`` across and ``l`` along its axis, its density scaled by ``rho``, and the
  link's mass, centre of mass and inertia come from the deformed geometry (MuJoCo's
  inertia-from-geoms). Each joint stays at its parent link's end: a child body is placed at the
  parent's stretched joint position. This is the pseudo-inertia deformation ``J' = (UL)(UL)^T``
  of ``inertia.py`` restricted to a per-axis stretch and a density (the ``d`` and ``alpha`` of
  ``theta``), applied to walker2d's capsules, whose inertia MuJoCo computes exactly.
* ``naive`` (the paper's "naive random" ablation): the same geometry, but each link's mass and
  principal moments are drawn independently of it, as in ``inertia.naive_link`` (mass and
  each moment of the nominal link's box approximation scaled by U[0.5, 2]; the centre of mass
  stays the nominal link's): the moments may break the triangle inequality, and MuJoCo's
  ``balanceinertia`` repairs them at compile time.

The motors become the family's PD actuators as for every gymnasium body
(``named.load_gymnasium_body``: gains x total-mass ratio, torque limit = gear x ctrlrange),
and the body is placed resting on the floor (``embodiment.rest_on_ground``). walker2d's own
feet put the standing centre of mass just ahead of the heel, so a = 0 falls on the template
(2.7 s) and on nearly every variant; the rejection test keeps that property: a
physics-consistent draw is kept only if a = 0 held without pushes falls within ``FALL_S``
seconds, else it is redrawn (its naive twin is not tested: it takes the same draw).

Names: ``w2v_{seed}_{i}`` is body ``i`` of training pool ``seed``; ``w2v_h{k}`` is held-out body
``k``, drawn from a separate seed stream (``HELDOUT_STREAM``), so no training pool contains it;
``w2vn_{seed}_{i}`` is the naive twin of ``w2v_{seed}_{i}``.
"""

from __future__ import annotations

import re

import mujoco
import numpy as np

from . import inertia as inert
from .embodiment import Embodiment, fall_time, rest_on_ground

SPREAD = 0.2  # factors U[0.8, 1.2] [recon; the spec's morphology range]
FALL_S = 5.0  # the rejection test: a = 0 must fall within this many seconds
HELDOUT_STREAM = 90_210  # seed-sequence entropy of the held-out bodies (no pool uses it)
MAX_TRIES = 20
LINK_KINDS = ("torso", "thigh", "leg", "foot")
LINK_KIND = {"torso": "torso", "thigh": "thigh", "leg": "leg", "foot": "foot",
             "thigh_left": "thigh", "leg_left": "leg", "foot_left": "foot"}
PARENT = {"thigh": "torso", "thigh_left": "torso", "leg": "thigh", "leg_left": "thigh_left",
          "foot": "leg", "foot_left": "leg_left"}
TEMPLATE = "walker2d_v5.xml"
_NAME = re.compile(r"^(w2vn?)_(?:h(\d+)|(\d+)_(\d+))$")


def is_variant(name: str) -> bool:
    return _NAME.match(name) is not None


def sample_factors(rng: np.random.Generator, spread: float = SPREAD
                   ) -> dict[str, dict[str, float]]:
    """Length, radius and density factor per link type."""
    return {part: {k: float(rng.uniform(1 - spread, 1 + spread)) for k in LINK_KINDS}
            for part in ("length", "radius", "density")}


def variant_spec(factors: dict[str, dict[str, float]], naive_rng: np.random.Generator | None = None
                 ) -> mujoco.MjSpec:
    """walker2d_v5 deformed by ``factors``; with ``naive_rng`` the inertials are drawn
    independently of the deformed geometry (the naive ablation)."""
    from .named import gymnasium_asset

    spec = mujoco.MjSpec.from_file(gymnasium_asset(TEMPLATE))
    length, radius, density = factors["length"], factors["radius"], factors["density"]
    # the template's inertials, which the naive draws scale
    nominal = spec.compile() if naive_rng is not None else None
    for body in spec.bodies:
        kind = LINK_KIND.get(body.name)
        if kind is None:
            continue
        hinges = [j for j in body.joints if j.type == mujoco.mjtJoint.mjJNT_HINGE]
        if body.name in PARENT:  # the joint stays at the end of the stretched parent link
            joint = np.array(hinges[0].pos)
            parent_length = length[LINK_KIND[PARENT[body.name]]]
            body.pos = (np.array(body.pos) + joint) * parent_length - joint * length[kind]
            for j in hinges:
                j.pos = np.array(j.pos) * length[kind]
        for geom in body.geoms:  # capsules: size = (radius, half-length), pos along the axis
            geom.pos = np.array(geom.pos) * length[kind]
            geom.size = np.array([geom.size[0] * radius[kind], geom.size[1] * length[kind],
                                  geom.size[2]])
            geom.density = 1000.0 * density[kind]
        if nominal is not None:
            b = nominal.body(body.name)
            extent = _box_extent(nominal, b.id)
            li = inert.naive_link(naive_rng, float(b.mass[0]), np.array(b.ipos), extent)
            body.explicitinertial = True
            body.mass = li.mass
            body.ipos = li.com
            body.iquat = np.array(b.iquat)
            body.inertia = np.diag(li.inertia_com)
    if nominal is not None:
        spec.compiler.inertiafromgeom = mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_FALSE
        spec.compiler.balanceinertia = True
    return spec


def _box_extent(model: mujoco.MjModel, body_id: int) -> np.ndarray:
    """Full box sizes (x, y, z) of a link's capsule in its inertial frame: the box
    approximation ``inertia.naive_link`` scales."""
    g = int(np.flatnonzero(model.geom_bodyid == body_id)[0])
    r, half = model.geom_size[g][:2]
    return np.array([2 * r, 2 * r, 2 * (half + r)])


def _key(name: str) -> tuple[list[int], bool]:
    m = _NAME.match(name)
    if m is None:
        raise ValueError(f"{name!r} is not a walker2d variant name (w2v_<seed>_<i>, w2v_h<k>, "
                         "w2vn_<seed>_<i>)")
    naive = m.group(1) == "w2vn"
    if m.group(2) is not None:
        if naive:
            raise ValueError(f"{name!r}: held-out bodies are physics-consistent only")
        return [HELDOUT_STREAM, int(m.group(2))], False
    return [int(m.group(3)), int(m.group(4))], naive


def walker2d_variant(name: str) -> Embodiment:
    """The variant called ``name`` (see the module docstring). A physics-consistent draw is
    redrawn until a = 0 falls; a naive twin takes its twin's kept draw, so the two share the
    geometry and differ only in the link inertials."""
    from .named import GYM_WALKER_MAP, body_from_spec

    key, naive = _key(name)
    attempts = range(MAX_TRIES)
    if naive:
        attempts = [walker2d_variant(name.replace("w2vn_", "w2v_", 1)).draw_attempt]
    for attempt in attempts:
        rng = np.random.default_rng(np.random.SeedSequence([*key, attempt, 3]))
        factors = sample_factors(rng)
        spec = variant_spec(factors, rng if naive else None)
        body = body_from_spec(spec, name, "planar", GYM_WALKER_MAP,
                              source=f"walker2d_v5 variant ({'naive' if naive else 'physics'})")
        rest_on_ground(body)
        body.morph_factors, body.draw_attempt = factors, attempt
        if naive or fall_time(body, FALL_S) <= FALL_S:
            break
    return body


def pool_names(seed: int, size: int, randomization: str = "physics") -> tuple[str, ...]:
    """The names of training pool ``seed``: physics-consistent or naive twins."""
    if randomization not in ("physics", "naive"):
        raise ValueError(f"walker2d variants are 'physics' or 'naive', got {randomization!r}")
    prefix = "w2v" if randomization == "physics" else "w2vn"
    return tuple(f"{prefix}_{seed}_{i}" for i in range(size))
