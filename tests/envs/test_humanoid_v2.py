"""XEmbodiedWalker-v2: generator recipe v2 (walker2d-like feet placed behind the centre of mass,
a reversed rejection test), the bodies resting on the floor, physics-consistent links, and the
task reading each specialist reference once."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import papergym
from papergym import cache
from papergym.envs.humanoid import bodies as B
from papergym.envs.humanoid import inertia as inert
from papergym.envs.humanoid.env import XEmbodiedWalkerEnvV1, XEmbodiedWalkerEnvV2
from papergym.envs.humanoid.task import zero_policy

TINY_PPO = {"n_steps": 64, "batch_size": 32, "n_epochs": 1}
HELDOUT = ("long_light", "short_heavy_arms", "toes_waist", "asymmetric")


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERGYM_CACHE_DIR", str(tmp_path))


def _v2_recipe(index: int) -> B.BodyRecipe:
    rng = np.random.default_rng(np.random.SeedSequence([0, index, 0, 2]))
    return B.random_recipe("planar", rng, f"v2_{index}", recipe_version="v2")


def test_zero_action_falls_on_every_v2_body_and_not_on_v1_bodies():
    """The point of v2: a = 0 (no pushes) falls within V2_FALL_S (5 s) on generated and held-out
    v2 bodies, while the v1 generator's bodies stand through those seconds."""
    v2 = list(B.pool("planar", 0, 8, "physics", "v2"))
    v2 += [B.named("planar", n, "v2") for n in HELDOUT]
    times = [B.fall_time(b, B.V2_FALL_S) for b in v2]
    assert max(times) <= B.V2_FALL_S, times
    v1 = [B.generate("planar", 0, i) for i in range(4)]
    assert all(B.fall_time(b, B.V2_FALL_S) == np.inf for b in v1)
    assert B.fall_time(B.named("planar", "walker2d_v5", "v2"), 3.0) <= 3.0


def test_feet_are_placed_behind_the_centre_of_mass():
    for index in range(6):
        recipe = _v2_recipe(index)
        lo, hi = B.V2_HEEL_MARGIN
        assert lo <= recipe.heel_margin <= hi and recipe.feet == "heel"
        body = B.build(recipe)
        model = body.model
        data = mujoco.MjData(model)
        mujoco.mj_forward(model, data)
        com_x = data.subtree_com[body.root_body][0]
        for side in "lr":
            geom = int(np.flatnonzero(model.geom_bodyid == model.body(f"{side}_foot").id)[0])
            heel_x = data.geom_xpos[geom][0] - model.geom_size[geom][1]
            assert heel_x - com_x == pytest.approx(recipe.heel_margin, abs=1e-3)


def test_v2_links_stay_physical_and_the_foot_moves_rigidly():
    """Every link's compiled mass and principal moments are those of the perturbed template
    link (the foot translation changes neither); the foot's centre of mass moves by the shift."""
    template = B.template_links("planar", "heel")
    for index in range(4):
        recipe = _v2_recipe(index)
        body = B.build(recipe)
        m = body.model
        present = {m.body(i).name for i in range(m.nbody)}
        for name, theta in recipe.theta.items():
            if name not in present:
                continue  # planar arms exist only on bodies that have them
            b = m.body(name).id
            expected = inert.perturb_link(template[name], theta)
            assert m.body_mass[b] == pytest.approx(expected.mass, rel=1e-9)
            np.testing.assert_allclose(np.sort(m.body_inertia[b]),
                                       inert.principal_moments(expected.inertia_com), rtol=1e-9)
            assert np.linalg.eigvalsh(inert.pseudo_inertia(expected)).min() > 0
            if name.endswith("_foot"):
                shift = recipe.foot_shift[name[0]]
                assert m.body_ipos[b][0] == pytest.approx(expected.com[0] + shift, abs=1e-9)


def test_v2_bodies_start_resting_on_the_floor():
    bodies = [B.build(_v2_recipe(i)) for i in range(4)]
    bodies += [B.named("planar", n, "v2") for n in ("long_light", "short_heavy_arms")]
    for body in bodies:
        data = mujoco.MjData(body.model)
        mujoco.mj_forward(body.model, data)
        feet = [g for g in range(body.model.ngeom) if body.foot_side_of_geom[g] >= 0]
        lowest = min(data.geom_xpos[g][2] - body.model.geom_size[g][0] for g in feet)
        assert 0.0 <= lowest <= 0.002
        assert abs(body.nominal_height - data.xpos[body.root_body][2]) < 0.02


def test_v2_env_defaults_and_conformance():
    env = papergym.make("papergym/XEmbodiedWalker-v2")
    inner = env.unwrapped
    assert isinstance(inner, XEmbodiedWalkerEnvV2) and inner.recipe_version == "v2"
    assert (inner.task, inner.v_max, inner.push_interval_s, inner.push_dv) == ("walk", 0.5, 2.0, 1.0)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="XEmbodiedWalker-v2"):
        env.step(np.full(13, np.nan))
    check_env(XEmbodiedWalkerEnvV2(pool_size=2, max_steps=50), skip_render_check=True)
    assert XEmbodiedWalkerEnvV1.recipe_version == "v1"


def test_v2_task_reads_each_reference_once(monkeypatch):
    task = papergym.make_task("papergym/XEmbodiedWalker-v2", tier="smoke", max_steps=30,
                              specialist_steps=128, specialist_chunk=64, reference_episodes=3,
                              specialist=TINY_PPO)
    cache.get(task.specialist_entry("walker2d_v5"))  # build it (the runner's prepare phase)
    reads = []
    real_get = cache.get
    monkeypatch.setattr(cache, "get", lambda entry: reads.append(entry.key) or real_get(entry))
    result = task.evaluate(zero_policy(13), 0)
    (unit,) = result.units
    assert len(reads) == 1
    assert unit["instance"] == "walker2d_v5" and unit["score"] == 0.0
    assert unit["reference_gap_low"] <= unit["reference_gap"]
