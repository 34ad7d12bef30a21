"""XEmbodiedWalker-v2: physics-consistent walker2d variants (each link's mass is density x
the deformed capsule's volume, each joint at its parent link's end), a = 0 falling on every
body, naive twins with the same geometry, held-out bodies outside every pool, the agent's one
training option, and the task reading each specialist reference once."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import papergym
from papergym import cache
from papergym.envs.humanoid import bodies as B
from papergym.envs.humanoid import variants as V
from papergym.envs.humanoid.env import XEmbodiedWalkerEnvV1, XEmbodiedWalkerEnvV2
from papergym.envs.humanoid.task import zero_policy
from papergym.problem import Budget

TINY_PPO = {"n_steps": 64, "batch_size": 32, "n_epochs": 1}
LINKS = ("torso", "thigh", "leg", "foot", "thigh_left", "leg_left", "foot_left")
CHILD_JOINTS = {"thigh_joint": "torso", "leg_joint": "thigh", "foot_joint": "leg",
                "thigh_left_joint": "torso", "leg_left_joint": "thigh_left",
                "foot_left_joint": "leg_left"}


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERGYM_CACHE_DIR", str(tmp_path))


def _capsule(model: mujoco.MjModel, link: str) -> int:
    return int(np.flatnonzero(model.geom_bodyid == model.body(link).id)[0])


def test_variant_links_are_their_deformed_capsules():
    """Independent oracle: a link's mass is 1000 x its density factor x the capsule volume
    (pi r^2 2h + 4/3 pi r^3) of the deformed geometry, and the sizes are walker2d's times the
    drawn length and radius factors."""
    template = B.named("planar", "walker2d_v5").model
    for name in ("w2v_h0", "w2v_0_3", "w2v_7_11"):
        body = B.named("planar", name)
        m, f = body.model, body.morph_factors
        for link in LINKS:
            kind = V.LINK_KIND[link]
            g, g0 = _capsule(m, link), _capsule(template, link)
            r, h = m.geom_size[g][:2]
            assert r == pytest.approx(template.geom_size[g0][0] * f["radius"][kind], rel=1e-12)
            assert h == pytest.approx(template.geom_size[g0][1] * f["length"][kind], rel=1e-12)
            volume = np.pi * r * r * 2 * h + 4 / 3 * np.pi * r**3
            density = 1000.0 * f["density"][kind]
            assert m.body_mass[m.body(link).id] == pytest.approx(density * volume, rel=1e-9)
        assert min(f[p][k] for p in f for k in f[p]) >= 1 - V.SPREAD
        assert max(f[p][k] for p in f for k in f[p]) <= 1 + V.SPREAD


def test_every_joint_stays_at_its_parent_links_end():
    for name in ("walker2d_v5", "w2v_h1", "w2v_0_5"):
        m = B.named("planar", name).model
        d = mujoco.MjData(m)
        mujoco.mj_forward(m, d)
        for joint, parent in CHILD_JOINTS.items():
            g = _capsule(m, parent)
            axis = d.geom_xmat[g].reshape(3, 3)[:, 2]
            ends = [d.geom_xpos[g] + s * m.geom_size[g][1] * axis for s in (1, -1)]
            gap = min(np.linalg.norm(d.xanchor[m.joint(joint).id] - e) for e in ends)
            assert gap < 1e-9, (name, joint, gap)


def test_zero_action_falls_on_every_v2_body_and_not_on_v1_bodies():
    """The point of v2: a = 0 (no pushes) falls within FALL_S on training and held-out
    bodies, while the v1 generator's bodies stand through those seconds."""
    bodies = list(B.pool("planar", 0, 8, "physics", "v2"))
    bodies += [B.named("planar", n) for n in B.V2_HELDOUT[:4]]
    times = [B.fall_time(b, V.FALL_S) for b in bodies]
    assert max(times) <= V.FALL_S, times
    v1 = [B.generate("planar", 0, i) for i in range(4)]
    assert all(B.fall_time(b, V.FALL_S) == np.inf for b in v1)


def test_naive_twins_share_the_geometry_not_the_inertials():
    for i in range(4):
        phys, naive = B.named("planar", f"w2v_3_{i}"), B.named("planar", f"w2vn_3_{i}")
        assert naive.morph_factors == phys.morph_factors
        np.testing.assert_array_equal(naive.model.geom_size, phys.model.geom_size)
        masses = [naive.model.body_mass[naive.model.body(k).id] for k in LINKS]
        assert not np.allclose(masses, [phys.model.body_mass[phys.model.body(k).id]
                                        for k in LINKS], rtol=0.02)
    nominal = B.named("planar", "walker2d_v5").model
    for i in range(8):
        m = B.named("planar", f"w2vn_0_{i}").model
        for link in LINKS:  # the naive rule: the template link's mass x U[0.5, 2]
            ratio = m.body_mass[m.body(link).id] / nominal.body_mass[nominal.body(link).id]
            assert 0.5 <= ratio <= 2.0


def test_heldout_bodies_are_in_no_training_pool():
    heldout = {tuple(sorted((p, k, v) for p, d in B.named("planar", n).morph_factors.items()
                            for k, v in d.items())) for n in B.V2_HELDOUT[1:4]}
    for seed in range(3):
        for body in B.pool("planar", seed, 16, "physics", "v2"):
            key = tuple(sorted((p, k, v) for p, d in body.morph_factors.items()
                               for k, v in d.items()))
            assert key not in heldout
    assert B.pool("planar", 0, 4, "naive", "v2")[0].name == "w2vn_0_0"
    with pytest.raises(ValueError, match="not a walker2d variant"):
        V.walker2d_variant("w2v_x")
    with pytest.raises(ValueError, match="physics-consistent only"):
        V.walker2d_variant("w2vn_h0")


def test_v2_bodies_start_resting_on_the_floor():
    for body in [B.named("planar", n) for n in ("w2v_h0", "w2v_1_2", "w2vn_1_2")]:
        data = mujoco.MjData(body.model)
        mujoco.mj_forward(body.model, data)
        feet = [g for g in range(body.model.ngeom) if body.foot_side_of_geom[g] >= 0]
        lowest = min(data.geom_xpos[g][2] - body.model.geom_size[g][0] for g in feet)
        assert 0.0 <= lowest <= 0.002
        assert abs(body.nominal_height - data.xpos[body.root_body][2]) < 0.02


def test_an_agent_may_choose_the_randomization_and_nothing_else():
    task = papergym.make_task("papergym/XEmbodiedWalker-v2", tier="smoke")
    view = task.train_view(5, Budget(env_steps=10))
    names = [b.name for b in view.make_env(randomization="naive").unwrapped.bodies]
    assert names == ["w2vn_5_0", "w2vn_5_1"]
    assert [b.name for b in view.make_env().unwrapped.bodies] == ["w2v_5_0", "w2v_5_1"]
    with pytest.raises(ValueError, match="cannot be chosen by an agent"):
        view.make_env(bodies="heldout")


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
    heldout = XEmbodiedWalkerEnvV2(bodies="heldout", max_steps=5)
    assert [b.name for b in heldout.bodies] == list(B.V2_HELDOUT)


def test_v2_task_reads_each_reference_once(monkeypatch):
    task = papergym.make_task("papergym/XEmbodiedWalker-v2", tier="smoke", max_steps=30,
                              train_steps=64, specialist_steps=128, specialist_chunk=64,
                              reference_episodes=3, specialist=TINY_PPO)
    cache.get(task.specialist_entry("walker2d_v5"))  # build it (the runner's prepare phase)
    reads = []
    real_get = cache.get
    monkeypatch.setattr(cache, "get", lambda entry: reads.append(entry.key) or real_get(entry))
    result = task.evaluate(zero_policy(13), 0)
    (unit,) = result.units
    assert len(reads) == 1
    assert unit["instance"] == "walker2d_v5" and unit["score"] == 0.0
    assert unit["reference_gap_low"] <= unit["reference_gap"]


def test_v2_bodies_and_rollouts_are_deterministic():
    """A variant rebuilt from scratch is the same model, bit for bit, and seeded rollouts on
    the v2 pool and held-out bodies repeat exactly."""
    first = B.named("planar", "w2vn_2_3").model
    B.named.cache_clear()
    again = B.named("planar", "w2vn_2_3").model
    for field in ("body_mass", "body_inertia", "body_ipos", "body_pos", "geom_size",
                  "jnt_range", "actuator_gainprm"):
        np.testing.assert_array_equal(getattr(first, field), getattr(again, field))

    def rollout(bodies):
        env = XEmbodiedWalkerEnvV2(bodies=bodies, pool_size=4, max_steps=100)
        rng = np.random.default_rng(3)
        obs, _ = env.reset(seed=11)
        out = [obs]
        for t in range(300):
            obs, reward, term, trunc, _ = env.step(rng.uniform(-1, 1, 13))
            out.append(np.r_[obs, reward, term, trunc])
            if term or trunc:
                out.append(env.reset(seed=50 + t)[0])
        return np.concatenate(out)

    for bodies in ("train", "heldout"):
        np.testing.assert_array_equal(rollout(bodies), rollout(bodies))
