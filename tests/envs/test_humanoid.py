"""Correctness tests of the humanoid family (XHugWBC): generator, pseudo-inertia, graph,
control law, masks, termination, named models, conformance."""

from __future__ import annotations

import itertools

import mujoco
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from papergym.envs.humanoid import bodies as B
from papergym.envs.humanoid import inertia as inert
from papergym.envs.humanoid import slots as sl
from papergym.envs.humanoid.env import XEmbodiedHumanoidEnv, XEmbodiedWalkerEnv


def _random_link(rng):
    m = rng.uniform(0.5, 5.0)
    size = rng.uniform(0.05, 0.5, 3)
    return inert.LinkInertia(m, rng.uniform(-0.1, 0.1, 3), np.diag(inert.box_inertia(m, size)))


# --------------------------------------------------------------------------- pseudo-inertia


def test_pseudo_inertia_perturbation_is_always_physical():
    rng = np.random.default_rng(0)
    for _ in range(1000):
        link = _random_link(rng)
        theta = inert.sample_theta(rng, np.ones(3), scale=rng.uniform(0.5, 3.0))
        j = inert.deformation(theta) @ inert.pseudo_inertia(link) @ inert.deformation(theta).T
        assert np.all(np.linalg.eigvalsh(j) > 0)
        new = inert.perturb_link(link, theta)
        assert new.mass > 0
        moments = inert.principal_moments(new.inertia_com)
        for a, b, c in itertools.permutations(moments):
            assert a + b >= c * (1 - 1e-9)
        e = inert.stretch_matrix(theta)
        assert new.mass == pytest.approx(np.exp(2 * theta[0]) * link.mass, rel=1e-9)
        np.testing.assert_allclose(new.com, e @ link.com + theta[7:], rtol=1e-9, atol=1e-12)


def test_zero_theta_returns_the_template_link():
    link = _random_link(np.random.default_rng(1))
    same = inert.perturb_link(link, np.zeros(10))
    assert same.mass == pytest.approx(link.mass, rel=1e-12)
    np.testing.assert_allclose(same.com, link.com, atol=1e-12)
    np.testing.assert_allclose(same.inertia_com, link.inertia_com, atol=1e-12)


def test_naive_sampler_breaks_the_triangle_inequality_sometimes():
    rng = np.random.default_rng(2)
    bad = sum(not inert.satisfies_triangle(np.diag(inert.naive_link(
        rng, 1.0, np.zeros(3), np.array([0.05, 0.05, 0.5])).inertia_com)) for _ in range(500))
    assert bad > 0


def test_compiled_link_matches_the_perturbed_pseudo_inertia():
    rng = np.random.default_rng(3)
    recipe = B.random_recipe("humanoid", rng, "probe")
    body = B.build(recipe)
    template = B.template_links("humanoid")
    for name in ("l_thigh", "torso", "r_foot"):
        expected = inert.perturb_link(template[name], recipe.theta[name])
        b = body.model.body(name).id
        assert body.model.body_mass[b] == pytest.approx(expected.mass, rel=1e-9)
        np.testing.assert_allclose(np.sort(body.model.body_inertia[b]),
                                   inert.principal_moments(expected.inertia_com), rtol=1e-9)


# --------------------------------------------------------------------------- generator


@pytest.mark.parametrize("family,n", [("planar", 120), ("humanoid", 80)])
def test_generated_bodies_compile_with_valid_inertia(family, n):
    for seed in range(n):
        body = B.build(B.random_recipe(family, np.random.default_rng(seed), f"b{seed}"))
        m = body.model
        assert np.all(m.body_mass[1:] > 0)
        for moments in m.body_inertia[1:]:
            assert inert.satisfies_triangle(moments)
        lo, hi = (12, 32) if family == "humanoid" else (6, 13)
        assert lo <= body.n_actuated <= hi
        # the slot mask matches the actuated joints
        assert body.n_actuated == m.nu
        assert sorted(body.act_id[body.present]) == list(range(m.nu))


def test_same_seed_same_model_bit_for_bit():
    a = B.build(B.random_recipe("humanoid", np.random.default_rng(5), "x"))
    b = B.build(B.random_recipe("humanoid", np.random.default_rng(5), "x"))
    for field in ("body_mass", "body_inertia", "jnt_range", "geom_size", "jnt_axis", "body_pos"):
        assert np.array_equal(getattr(a.model, field), getattr(b.model, field))


def test_rejection_test_keeps_nominal_topologies():
    for name in B.PLANAR_NOMINAL_TOPOLOGIES:
        assert B.stands(B.named("planar", name))
    assert B.stands(B.named("humanoid", "biped12_nominal"))


def test_joint_randomization_bounds_and_gain_scaling():
    for seed in range(20):
        rng = np.random.default_rng(seed)
        recipe = B.random_recipe("humanoid", rng, "j")
        body = B.build(recipe)
        for delta, bound in body.joint_offsets.values():
            assert np.linalg.norm(delta) <= bound + 1e-12
        for link in B.humanoid_template(recipe.hip_order):
            if len(link.joints) > 1:
                np.testing.assert_allclose(sum(recipe.orient[s] for s in link.joints), 0,
                                           atol=1e-12)
        assert sorted(recipe.hip_order) == sorted(sl.HIP_TEMPLATE_ORDER)
        thigh = body.model.body("l_thigh").id
        kinematic = [body.model.joint(j).name for j in range(body.model.njnt)
                     if body.model.jnt_bodyid[j] == thigh]
        assert kinematic == [f"l_{j}" for j in recipe.hip_order]
        ratio = body.total_mass / B.nominal_mass("humanoid") * recipe.gain_factor
        for i in np.flatnonzero(body.present):
            d = B.slot_def("humanoid", sl.HUMANOID_SLOTS[i])
            assert body.kp[i] == pytest.approx(d.kp * ratio, rel=1e-9)
            assert body.kd[i] == pytest.approx(d.kd * ratio, rel=1e-9)
            assert body.tau_max[i] == pytest.approx(d.tau * ratio, rel=1e-9)


# --------------------------------------------------------------------------- graph


def _is_tree(adj, vertices):
    idx = np.flatnonzero(vertices)
    sub = adj[np.ix_(idx, idx)]
    if sub.sum() // 2 != len(idx) - 1:
        return False
    seen, stack = {0}, [0]
    while stack:
        u = stack.pop()
        for v in np.flatnonzero(sub[u]):
            if v not in seen:
                seen.add(int(v))
                stack.append(int(v))
    return len(seen) == len(idx)


def test_embodiment_graph_is_a_tree_with_ankles_under_knees():
    bodies = [B.build(B.random_recipe(f, np.random.default_rng(s), "g"))
              for f in ("planar", "humanoid") for s in range(15)]
    bodies += [B.named("planar", n) for n in ("walker2d_v5", "hopper", "no_ankle")]
    bodies += [B.named("humanoid", "gym_humanoid")]
    for body in bodies:
        a = body.adjacency
        assert np.array_equal(a, a.T) and not np.any(np.diag(a))
        assert _is_tree(a, body.vertex), body.name
        np.testing.assert_array_equal(sl.structural_mask(a), a + np.eye(len(a), dtype=a.dtype))
        slots = B.family_slots(body.family)
        for s in "lr":
            knee = slots.index(f"{s}_knee")
            ankles = [f"{s}_ankle"] if body.family == "planar" else [f"{s}_ankle_pitch",
                                                                      f"{s}_ankle_roll"]
            for ankle in ankles:
                i = slots.index(ankle)
                if body.present[i] and body.present[knee]:
                    assert a[i, knee] == 1


# --------------------------------------------------------------------------- control and masks


def test_pd_law_is_the_applied_actuator_force():
    env = XEmbodiedHumanoidEnv(bodies=["g1_like_29"], max_steps=50)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    body, data = env.body, env.data
    p = np.flatnonzero(body.present)
    data.qpos[body.qpos_adr[p]] += rng.uniform(-0.3, 0.3, len(p))
    data.qvel[body.dof_adr[p]] = rng.uniform(-3, 3, len(p))
    a = rng.uniform(-1, 1, env.n_slots)
    q_des = np.clip(body.q0[p] + a[p] * body.half_range[p], body.q_low[p], body.q_high[p])
    data.ctrl[body.act_id[p]] = q_des
    mujoco.mj_forward(body.model, data)
    q, qd = data.qpos[body.qpos_adr[p]], data.qvel[body.dof_adr[p]]
    expected = np.clip(body.kp[p] * (q_des - q) - body.kd[p] * qd, -body.tau_max[p], body.tau_max[p])
    np.testing.assert_allclose(data.actuator_force[body.act_id[p]], expected, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("cls,name", [(XEmbodiedWalkerEnv, "walker2d_v5"),
                                      (XEmbodiedHumanoidEnv, "gym_humanoid")])
def test_masks_hide_absent_slots_in_observation_and_action(cls, name):
    env_a, env_b = cls(bodies=[name], obs="dict"), cls(bodies=[name], obs="dict")
    oa, _ = env_a.reset(seed=3)
    env_b.reset(seed=3)
    present = oa["present"].astype(bool)
    assert present.sum() == env_a.body.n_actuated < env_a.n_slots
    rng = np.random.default_rng(0)
    for _ in range(30):
        a = rng.uniform(-1, 1, env_a.n_slots)
        b = a.copy()
        b[~present] = rng.uniform(-1, 1, (~present).sum())  # differ only on absent slots
        oa, ra, *_ = env_a.step(a)
        ob, rb, *_ = env_b.step(b)
        assert np.array_equal(oa["joints"], ob["joints"]) and ra == rb
        assert np.all(oa["joints"][:, ~present, :] == 0)


def test_termination_at_sixty_degrees():
    env = XEmbodiedWalkerEnv(bodies=["nominal_legs"])
    env.reset(seed=0)
    for angle, fallen in ((59.0, False), (61.0, True)):
        env.data.qpos[env._root_adr + 2] = np.deg2rad(angle)
        mujoco.mj_forward(env.body.model, env.data)
        env._measure()  # what a step reads after its physics
        assert env._fallen() is fallen
    env3 = XEmbodiedHumanoidEnv(bodies=["biped12_nominal"])
    env3.reset(seed=0)
    for angle, fallen in ((59.0, False), (61.0, True)):
        half = np.deg2rad(angle) / 2
        env3.data.qpos[env3._root_adr + 3: env3._root_adr + 7] = [np.cos(half), np.sin(half), 0, 0]
        mujoco.mj_forward(env3.body.model, env3.data)
        env3._measure()
        assert env3._fallen() is fallen


def test_non_finite_action_raises():
    env = XEmbodiedWalkerEnv(bodies=["nominal_legs"])
    env.reset(seed=0)
    with pytest.raises(ValueError, match="non-finite"):
        env.step(np.full(13, np.nan))


# --------------------------------------------------------------------------- named models


def test_named_gymnasium_models_map_to_slots():
    walker = B.named("planar", "walker2d_v5")
    slots = np.array(sl.PLANAR_SLOTS)
    assert set(slots[walker.present]) == {f"{s}_{j}" for s in "lr" for j in ("hip", "knee", "ankle")}
    hopper = B.named("planar", "hopper")
    assert set(slots[hopper.present]) == {"r_hip", "r_knee", "r_ankle"}
    humanoid = B.named("humanoid", "gym_humanoid")
    assert humanoid.n_actuated == 17
    assert not humanoid.present[sl.HUMANOID_SLOTS.index("l_ankle_pitch")]
    for group in B.NAMED_SETS["humanoid"].values():
        for name in group:
            assert 12 <= B.named("humanoid", name).n_actuated <= 32
    named = [n for g in B.NAMED_SETS["humanoid"].values() for n in g]
    assert len(named) >= 12
    assert not set(B.NAMED_SETS["humanoid"]["train"]) & set(B.NAMED_SETS["humanoid"]["heldout"])


def test_dm_control_models_when_installed():
    if not B.dm_control_available():
        pytest.skip("dm-control is not installed (optional extra; only its XML files are used)")
    walker = B.named("planar", "dmc_walker")
    slots = np.array(sl.PLANAR_SLOTS)
    assert set(slots[walker.present]) == {f"{s}_{j}" for s in "lr" for j in ("hip", "knee", "ankle")}
    assert walker.pitch_sign == -1.0  # dm-control's rooty turns about +y, ours about -y
    humanoid = B.named("humanoid", "dmc_humanoid")
    assert humanoid.n_actuated == 21 and humanoid.present[sl.HUMANOID_SLOTS.index("l_ankle_roll")]
    cmu = B.named("humanoid", "dmc_humanoid_cmu")  # 56 hinges: 32 mapped, the rest locked
    assert cmu.n_actuated == 32 and cmu.model.njnt == 33
    for body in (walker, humanoid, cmu):
        assert B.stands(body)


# --------------------------------------------------------------------------- conformance


@pytest.mark.parametrize("cls,kwargs", [
    (XEmbodiedWalkerEnv, {"bodies": "train", "pool_size": 2}),
    (XEmbodiedWalkerEnv, {"bodies": ["walker2d_v5"], "obs": "dict"}),
    (XEmbodiedHumanoidEnv, {"bodies": ["gym_humanoid", "biped12"], "task": "stand"}),
])
def test_gymnasium_check_env(cls, kwargs):
    check_env(cls(**kwargs), skip_render_check=True)


def test_seeded_determinism_over_1000_steps():
    def rollout():
        env = XEmbodiedWalkerEnv(bodies="heldout", max_steps=200)
        rng = np.random.default_rng(1)
        obs, _ = env.reset(seed=7)
        out = [obs]
        for t in range(1000):
            obs, r, term, trunc, _ = env.step(rng.uniform(-1, 1, 13))
            out.append((obs, r, term, trunc))
            if term or trunc:
                obs, _ = env.reset(seed=100 + t)
                out.append(obs)
        return out

    a, b = rollout(), rollout()
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if isinstance(x, tuple):
            assert np.array_equal(x[0], y[0]) and x[1:] == y[1:]
        else:
            assert np.array_equal(x, y)
