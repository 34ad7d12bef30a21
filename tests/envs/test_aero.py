"""Shapes, FFD, constraints, the FFD env and the surrogate problem (aero family)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env

import papergym
from papergym.actions import InvalidAction
from papergym.agents.aero.unidrag import transform
from papergym.envs.aero import shapes
from papergym.envs.aero.surrogate import DragSurrogateNet, SurrogateEnsemble

FFD_ID, SURROGATE_ID = "papergym/DragFFD2D-v1", "papergym/DragSurrogate-v1"


@pytest.fixture(scope="module")
def base():
    return shapes.make_shape(1, np.random.default_rng(0))


def test_every_body_type_gives_a_simple_counter_clockwise_profile():
    rng = np.random.default_rng(1)
    for body_type in range(len(shapes.BODY_TYPES)):
        points = shapes.make_shape(body_type, rng)
        assert points.shape == (shapes.K, 2) and shapes.is_simple(points)
        assert shapes.polygon_area(points) > 0 and points[:, 0].min() == 0 and points[:, 0].max() == 1


def test_ffd_is_the_identity_at_zero_and_linear_in_z(base):
    basis = shapes.ffd_basis(base)
    np.testing.assert_allclose(shapes.deform(base, basis, np.zeros(shapes.N_Z)), base, atol=1e-12)
    rng = np.random.default_rng(2)
    a, b = rng.uniform(-0.05, 0.05, (2, shapes.N_Z))
    lhs = shapes.deform(base, basis, 2 * a - 3 * b) - base
    rhs = 2 * (shapes.deform(base, basis, a) - base) - 3 * (shapes.deform(base, basis, b) - base)
    np.testing.assert_allclose(lhs, rhs, atol=1e-12)


def test_a_self_intersecting_polygon_is_not_simple():
    bowtie = np.array([[0, 0], [1, 1], [1, 0], [0, 1]], float)
    assert not shapes.is_simple(bowtie)


def test_random_actions_always_leave_a_feasible_design_and_feasible_ones_untouched():
    env = papergym.make(FFD_ID, horizon=400, budget=0)
    env.reset(seed=5)
    raw = env.unwrapped
    rng = np.random.default_rng(3)
    projected = 0
    for _ in range(300):
        z = rng.uniform(-raw.delta_max, raw.delta_max, shapes.N_Z).astype(np.float32)
        was_feasible = shapes.feasible(raw.design(z), raw.base)
        obs, reward, _, truncated, info = env.step({"z": z, "verify": 0})
        assert shapes.feasible(raw.points, raw.base) and not truncated and reward == 0.0
        if was_feasible:
            np.testing.assert_array_equal(obs["z"], z)
            assert not info["projected"]
        projected += info["projected"]
    assert 0 < projected < 300


def test_out_of_box_moves_and_malformed_actions_are_rejected_by_name():
    env = papergym.make(FFD_ID)
    env.reset(seed=0)
    with pytest.raises(InvalidAction, match="DragFFD2D-v1.*z"):
        env.step({"z": np.full(shapes.N_Z, 0.5, np.float32), "verify": 0})
    with pytest.raises(InvalidAction):
        env.step({"z": np.zeros(shapes.N_Z, np.float32)})
    with pytest.raises(InvalidAction):
        env.step({"z": np.full(shapes.N_Z, np.nan, np.float32), "verify": 1})


def test_a_design_that_breaks_a_constraint_is_rejected_with_the_constraint_named():
    env = papergym.make(FFD_ID)
    env.reset(seed=2)
    raw = env.unwrapped
    z = np.zeros(shapes.N_Z, np.float32)
    z[1:10:2] = raw.delta_max  # lift the whole roof: the frontal height grows by delta_max
    obs, _, _, _, info = env.step({"z": z, "verify": 0})
    assert info["projected"] and info["fraction"] < 1.0
    assert any(v.startswith("height (slack -") for v in info["violations"])
    assert "DragFFD2D-v1" in info["message"] and "height" in info["message"]
    assert shapes.feasible(raw.points, raw.base) and not np.array_equal(obs["z"], z)
    _, _, _, _, info = env.step({"z": np.zeros(shapes.N_Z, np.float32), "verify": 0})
    assert not info["projected"] and "violations" not in info


def test_v1_uses_interpolated_bounce_back_and_v0_stays_registered_on_the_halfway_rule():
    for tier in ("smoke", "standard", "full"):
        v0 = papergym.make("papergym/DragFFD2D-v0", tier=tier).unwrapped
        v1 = papergym.make(FFD_ID, tier=tier).unwrapped
        assert v0.eval_grid.boundary == v0.verify_grid.boundary == "halfway"
        assert v1.eval_grid.boundary == v1.verify_grid.boundary == "interpolated"
        assert v1.eval_grid.length == v0.eval_grid.length and v1.max_budget == v0.max_budget
        assert papergym.make_task(SURROGATE_ID, tier=tier).grid.boundary == "interpolated"
        assert papergym.make_task("papergym/DragSurrogate-v0", tier=tier).grid.boundary == "halfway"


def test_gymnasium_checker_passes_on_the_smoke_tier():
    check_env(papergym.make(FFD_ID, tier="smoke").unwrapped, skip_render_check=True)


def _scripted_episode(seed: int):
    env = papergym.make(FFD_ID)
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    total, rewards, info, done = 0.0, [], {}, False
    while not done:
        z = rng.uniform(-0.03, 0.03, shapes.N_Z).astype(np.float32)
        obs, reward, _, done, info = env.step({"z": z, "verify": int(obs["budget_left"] > 0)})
        rewards.append(reward)
        total += reward
    return rewards, total, info


def test_scripted_episode_repeats_by_seed_and_its_return_is_the_final_score():
    first, total, info = _scripted_episode(7)
    second, _, _ = _scripted_episode(7)
    assert first == second
    assert total == pytest.approx(info["final_reduction"], abs=1e-12)
    assert info["lbm_calls"] == 3.0 and info["feasible"] == 1.0


def test_verify_without_budget_is_refused():
    env = papergym.make(FFD_ID, budget=0, horizon=3)
    env.reset(seed=1)
    _, reward, _, _, info = env.step({"z": np.zeros(shapes.N_Z, np.float32), "verify": 1})
    assert info["verify_refused"] and reward == 0.0


def test_surrogate_gradient_in_z_matches_central_differences(base):
    torch.manual_seed(0)
    net = DragSurrogateNet(width=16, slices=4, heads=2, experts=2).double()
    basis = torch.tensor(shapes.ffd_basis(base))
    base_t = torch.tensor(base)
    body = torch.tensor([2])

    def cd(z: torch.Tensor) -> torch.Tensor:
        return net.predict(shapes.deform(base_t, basis, z)[None], body)["cd"][0]

    z = torch.tensor(np.random.default_rng(4).uniform(-0.02, 0.02, shapes.N_Z), requires_grad=True)
    grad, = torch.autograd.grad(cd(z), z)
    eps = 1e-6
    fd = torch.stack([(cd(z.detach() + eps * e) - cd(z.detach() - eps * e)) / (2 * eps)
                      for e in torch.eye(shapes.N_Z, dtype=torch.float64)])
    assert torch.linalg.norm(grad - fd) / torch.linalg.norm(fd) <= 1e-3


def test_eot_draws_repeat_under_a_seeded_generator(base):
    points = torch.tensor(base, dtype=torch.float32)[None].repeat(8, 1, 1)
    a = transform(points, torch.Generator().manual_seed(3), 0.05)
    b = transform(points, torch.Generator().manual_seed(3), 0.05)
    c = transform(points, torch.Generator().manual_seed(4), 0.05)
    assert torch.equal(a, b) and not torch.equal(a, c)


class _Detached(DragSurrogateNet):
    def predict(self, points, body_type):
        return super().predict(points.detach(), body_type)


def _constant_net() -> DragSurrogateNet:
    net = DragSurrogateNet(width=8, slices=2, layers=1, heads=1, gated=False)
    with torch.no_grad():
        for layer in (net.experts[0][-1], net.cp_head, net.b_head[-1], net.u_head[-1]):
            layer.weight.zero_()
            layer.bias.zero_()
    return net


def test_surrogate_gradient_check_refuses_a_detached_model_and_v1_accepts_a_constant_one():
    v1, v0 = papergym.make_task(SURROGATE_ID), papergym.make_task("papergym/DragSurrogate-v0")
    torch.manual_seed(0)
    with pytest.raises(TypeError, match="differentiable"):
        v1.evaluate(_Detached(width=8, slices=2, heads=1), 0)
    result = v1.evaluate(_constant_net(), 0)  # a zero gradient: differentiable, and R^2 <= 0
    assert result.metrics["cd_r2"] <= 0.0
    with pytest.raises(TypeError, match="zero"):
        v0.evaluate(_constant_net(), 0)


def test_surrogate_task_scores_a_module_and_refuses_anything_else():
    task = papergym.make_task(SURROGATE_ID)
    with pytest.raises(TypeError, match="DragSurrogateNet"):
        task.evaluate(lambda points, body: points, 0)
    torch.manual_seed(0)
    result = task.evaluate(SurrogateEnsemble([DragSurrogateNet(width=16, slices=4, heads=2)]), 0)
    assert np.isfinite(result.metrics["cd_r2"]) and len(result.units) == task.n_test
    data = task.train_view(0, task.budget).dataset()
    assert data["points"].shape == (task.n_train, shapes.K, 2)
    assert (data["z"][::2] == 0).all() and (data["z"][1::2] != 0).any()


def test_full_tier_configurations_build():
    for problem in (FFD_ID, SURROGATE_ID, "papergym/DragFFD2D-v0", "papergym/DragSurrogate-v0"):
        task = papergym.make_task(problem, tier="full")
        assert task is not None
    env = papergym.make(FFD_ID, tier="full")
    assert env.unwrapped.verify_grid.length > env.unwrapped.eval_grid.length
