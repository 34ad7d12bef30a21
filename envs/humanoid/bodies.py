"""Embodiments: procedural planar bipeds and 3-D humanoids built with ``mujoco.MjSpec``, and the
offline gymnasium models mapped onto the same slots.

One template per family [recon, following the paper's single-template scheme]: every link of
the template always exists; a joint is either revolute (actuated, a present slot) or locked
(the links are welded; the slot stays a graph vertex where it is part of the trunk chain).
A generated body is drawn from its template by ``generator`` (the steps are listed there).

Control uses MuJoCo ``general`` actuators that implement the PD law in C at every physics step:
``tau = clip(Kp (q_des - q) - Kd qdot, -tau_max, tau_max)`` with ``ctrl = q_des``. The named
gymnasium models get the same actuators in place of their motors (torque limit = gear x
ctrlrange), so the control law is identical on every body [recon; the spec applied motors with
ctrl = tau / gear, which needs a Python PD loop at 500 Hz].

The code is split by what it does: ``templates`` (the two templates, MjSpec building blocks),
``embodiment`` (the compiled body and its slot embedding), ``generator`` (procedural bodies from
the template), ``variants`` (procedural walker2d_v5 variants, the XEmbodiedWalker-v2 bodies) and
``named`` (offline models, hand-designed bodies, named sets, pools). This module is the
family's one import point.
"""

from __future__ import annotations

from . import variants
from .embodiment import (
    MORPH_FEATURES,
    Embodiment,
    embodiment_from_model,
    fall_time,
    place_on_ground,
    rest_on_ground,
    set_default_ctrl,
    stands,
)
from .generator import (
    JOINT_NOISE,
    ORIENT_NOISE,
    PLANAR_NOMINAL_TOPOLOGIES,
    BodyRecipe,
    build,
    generate,
    random_recipe,
    sample_topology,
)
from .named import (
    CMU_MAP,
    DMC_HUMANOID_MAP,
    DMC_NAMED,
    DMC_WALKER_MAP,
    GYM_HUMANOID_MAP,
    GYM_WALKER_MAP,
    HUMANOID_NAMED,
    NAMED_SETS,
    NAMED_SETS_V2,
    RECIPES,
    V2_HELDOUT,
    body_from_spec,
    dm_control_asset,
    dm_control_available,
    gymnasium_asset,
    load_gymnasium_body,
    named,
    named_recipe,
    named_sets,
    pool,
)
from .templates import (
    HUMANOID_SLOT_DEFS,
    PLANAR_SLOT_DEFS,
    ROBOT_CONAFFINITY,
    ROBOT_CONTYPE,
    TIMESTEP,
    LinkDef,
    SlotDef,
    family_slots,
    humanoid_template,
    nominal_mass,
    planar_template,
    slot_def,
    template_links,
)

__all__ = [
    "MORPH_FEATURES",
    "NAMED_SETS_V2", "RECIPES", "V2_HELDOUT", "body_from_spec", "fall_time", "named_sets",
    "rest_on_ground", "variants",
    "CMU_MAP", "DMC_HUMANOID_MAP", "DMC_NAMED", "DMC_WALKER_MAP", "GYM_HUMANOID_MAP",
    "GYM_WALKER_MAP", "HUMANOID_NAMED", "HUMANOID_SLOT_DEFS", "JOINT_NOISE", "NAMED_SETS",
    "ORIENT_NOISE", "PLANAR_NOMINAL_TOPOLOGIES", "PLANAR_SLOT_DEFS", "ROBOT_CONAFFINITY",
    "ROBOT_CONTYPE", "TIMESTEP", "BodyRecipe", "Embodiment", "LinkDef", "SlotDef", "build",
    "dm_control_asset", "dm_control_available", "embodiment_from_model", "family_slots",
    "generate", "gymnasium_asset", "humanoid_template", "load_gymnasium_body", "named",
    "named_recipe", "nominal_mass", "place_on_ground", "planar_template", "pool",
    "random_recipe", "sample_topology", "set_default_ctrl", "slot_def", "stands",
    "template_links",
]
