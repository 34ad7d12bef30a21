"""The assimilation problems: the L96 and Kolmogorov integrators against closed forms, the
observation design, the cycling dynamics, and that no truth state ever reaches an agent."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium.utils.env_checker import check_env

import papergym
from papergym.actions import InvalidAction
from papergym.envs.assimilation.env import (
    KolmogorovCyclingEnv,
    KolmogorovCyclingV1Env,
    Lorenz96CyclingEnv,
    make_training_set,
    physical_residual,
)
from papergym.envs.assimilation.models import Kolmogorov, Lorenz96


def test_the_rest_state_f_is_a_fixed_point():
    model = Lorenz96()
    assert np.array_equal(model.tendency(np.full(40, 8.0)), np.zeros(40))


def test_the_advection_term_conserves_energy_exactly():
    x = np.random.default_rng(0).normal(0, 4, (50, 40))
    assert np.max(np.abs(np.sum(Lorenz96().advection(x) * x, axis=-1))) <= 1e-10


def test_rk4_conserves_energy_in_the_unforced_undamped_limit():
    model = Lorenz96(forcing=0.0, damping=0.0, dt=0.01)
    x = np.random.default_rng(1).normal(0, 1, 40)
    e0 = np.sum(x**2)
    for _ in range(500):
        x = model.step(x)
    assert abs(np.sum(x**2) - e0) / e0 <= 1e-6
    # the damped model loses energy: the test can fail
    damped = Lorenz96(forcing=0.0, damping=1.0, dt=0.01)
    y = np.random.default_rng(1).normal(0, 1, 40)
    for _ in range(500):
        y = damped.step(y)
    assert np.sum(y**2) < 0.1 * e0


def test_rk4_is_fourth_order():
    model = Lorenz96()
    x0 = model.random_state(np.random.default_rng(2))

    def integrate(dt: float, t: float = 0.4) -> np.ndarray:
        x = x0.copy()
        for _ in range(int(round(t / dt))):
            x = model.step(x, dt)
        return x

    reference = integrate(0.05 / 64)
    e1 = np.linalg.norm(integrate(0.05) - reference)
    e2 = np.linalg.norm(integrate(0.025) - reference)
    assert 12 <= e1 / e2 <= 20


def test_the_climatological_std_is_near_3_6():
    model = Lorenz96()
    x = model.random_state(np.random.default_rng(3))
    states = []
    for _ in range(10_000):
        x = model.step(x)
        states.append(x)
    assert 3.4 <= np.std(states) <= 3.8


def test_kolmogorov_laminar_flow_is_steady_and_euler_conserves_energy_and_enstrophy():
    model = Kolmogorov(size=16)
    y = 2 * np.pi * np.arange(16) / 16
    k = model.wavenumber
    amplitude = -k / (k**2 / model.reynolds + model.drag)  # (nu k^2 + drag) A = -k
    laminar = np.repeat((amplitude * np.cos(k * y))[:, None], 16, axis=1).reshape(-1)
    assert np.max(np.abs(model.tendency(laminar))) <= 1e-9 * np.max(np.abs(laminar))
    assert np.max(np.abs(model.forecast(laminar, 2) - laminar)) <= 1e-9 * np.max(np.abs(laminar))
    # the inviscid, unforced, undragged limit: the de-aliased Galerkin scheme conserves both
    euler = Kolmogorov(size=16, reynolds=np.inf, drag=0.0, forcing_scale=0.0, dt=0.005)
    w = euler.random_state(np.random.default_rng(4), spinup=0.0)
    _, _, inv, dealias, _ = euler._grids()
    w = np.fft.irfft2(np.fft.rfft2(w.reshape(16, 16)) * dealias, s=(16, 16)).reshape(-1)

    def invariants(field: np.ndarray) -> tuple[float, float]:
        w_hat = np.fft.rfft2(field.reshape(16, 16))
        weight = np.ones(w_hat.shape)
        weight[:, 1:-1] = 2.0  # the rfft half-plane counts interior columns twice
        return float(np.sum(weight * np.abs(w_hat) ** 2 * inv)), float(np.sum(weight * np.abs(w_hat) ** 2))

    e0, z0 = invariants(w)
    for _ in range(100):
        w = euler.step(w)
    e1, z1 = invariants(w)
    assert abs(e1 - e0) / e0 <= 1e-4 and abs(z1 - z0) / z0 <= 1e-4


def test_the_torch_kolmogorov_step_is_the_numpy_step_to_round_off_and_differentiable():
    model = Kolmogorov(size=16, spinup=0.5)
    w = model.random_state(np.random.default_rng(6), 3)
    reference = model.forecast(w, 1)  # the problem's numpy integrator, ten RK4 steps
    scale = np.max(np.abs(reference))
    assert np.max(np.abs(model.forecast(torch.as_tensor(w), 1).numpy() - reference)) <= 1e-12 * scale
    tendency = model.tendency(w)
    torch_tendency = model.tendency(torch.as_tensor(w)).numpy()
    assert np.max(np.abs(torch_tendency - tendency)) <= 1e-12 * np.max(np.abs(tendency))
    single = model.step(torch.as_tensor(w, dtype=torch.float32))
    assert single.dtype == torch.float32 and single.shape == (3, 256)
    assert np.max(np.abs(single.numpy() - model.step(w))) <= 1e-5 * scale
    # a different model is not matched: the comparison can fail
    assert np.max(np.abs(model.with_forcing(1.1).forecast(w, 1) - reference)) > 1e-3
    # v1's model (the state projected onto the 2/3 band first) agrees too, in float64, on fields
    # with out-of-band content (as an analysis has)
    v1 = Kolmogorov(size=16, spinup=0.5, dealias_state=True)
    rough = w + np.random.default_rng(8).normal(0.0, 1.0, w.shape)
    reference = v1.forecast(rough, 1)
    scale = np.max(np.abs(reference))
    assert np.max(np.abs(v1.forecast(torch.as_tensor(rough), 1).numpy() - reference)) <= 1e-12 * scale
    tendency = v1.tendency(rough)
    torch_tendency = v1.tendency(torch.as_tensor(rough)).numpy()
    assert np.max(np.abs(torch_tendency - tendency)) <= 1e-12 * np.max(np.abs(tendency))
    # the torch path differentiates: its gradient is the finite-difference one
    small = Kolmogorov(size=8, dt=0.01)
    x = torch.as_tensor(small.random_state(np.random.default_rng(7), spinup=0.0)).requires_grad_(True)
    assert torch.autograd.gradcheck(lambda v: small.step(small.step(v)), (x,), eps=1e-6, atol=1e-6)


def test_v1_projects_the_state_onto_the_two_thirds_band_and_v0_does_not():
    v0, v1 = Kolmogorov(size=16, spinup=0.5), Kolmogorov(size=16, spinup=0.5, dealias_state=True)
    _, _, _, dealias, _ = v0._grids()

    def project(f: np.ndarray) -> np.ndarray:
        return np.fft.irfft2(np.fft.rfft2(f.reshape(-1, 16, 16)) * dealias, s=(16, 16)).reshape(f.shape)

    out_of_band = lambda f: np.abs(np.fft.rfft2(f.reshape(-1, 16, 16)) * ~dealias).max()  # noqa: E731
    truth = v0.random_state(np.random.default_rng(9), 2)
    assert out_of_band(truth) <= 1e-10 * np.abs(truth).max()  # the truth lives in the band
    assert np.max(np.abs(v1.forecast(truth, 1) - v0.forecast(truth, 1))) <= 1e-10 * np.abs(truth).max()
    rough = truth + np.random.default_rng(10).normal(0.0, 1.0, truth.shape)  # an analysis-like field
    assert out_of_band(rough) > 1.0
    # v1: the out-of-band modes are dropped, the forecast is that of the projected field
    assert np.max(np.abs(v1.step(rough) - v0.step(project(rough)))) <= 1e-12 * np.abs(truth).max()
    assert out_of_band(v1.step(rough)) <= 1e-10 * np.abs(truth).max()
    # v0: they stay, and their products in u . grad omega (aliased ones included) reach the band
    aliased = project(v0.step(rough)) - v0.step(project(rough))
    assert np.max(np.abs(aliased)) > 1e-3


def test_the_block_is_never_observed_and_each_cycle_observes_round_rho_n_others():
    env = Lorenz96CyclingEnv(horizon=1250, rho_obs=0.2, ensemble_size=1)
    obs, _ = env.reset(seed=5)
    block = env._block
    assert block.sum() == 10 and np.all(np.diff(np.flatnonzero(np.roll(block, -np.argmax(~block) - 1)))) == 1
    seen, noise = np.zeros(40, dtype=bool), []
    for cycle in range(1250):
        mask = obs["mask"].astype(bool)
        assert mask.sum() == 8 and not (mask & block).any()
        assert np.all(obs["y"][~mask] == 0.0)
        noise.extend(obs["y"][mask] - env._truth[cycle, mask])
        seen |= mask
        obs, *_ = env.step(obs["background"].astype(np.float32))
    assert not (seen & block).any() and seen[~block].all()
    assert len(noise) >= 10_000 and abs(np.std(noise) - 1.0) <= 0.03


def _rollout(seed: int, cycles: int = 20) -> list[dict]:
    env = Lorenz96CyclingEnv(horizon=cycles, rho_obs=0.1)
    obs, _ = env.reset(seed=seed)
    out = [obs]
    for _ in range(cycles):
        action = (0.5 * obs["background"] + 0.5 * obs["y"][None]).astype(np.float32)
        obs, reward, _, _, info = env.step(action)
        out.append({**obs, "reward": reward, **info})
    return out


def test_a_scripted_rollout_repeats_with_the_same_seed():
    a, b, c = _rollout(7), _rollout(7), _rollout(8)
    for x, y in zip(a, b):
        assert x.keys() == y.keys()
        for key in x:
            assert np.array_equal(x[key], y[key])
    assert not np.array_equal(a[5]["background"], c[5]["background"])


def test_a_perfect_analysis_gives_the_truth_as_next_background():
    env = Lorenz96CyclingEnv(horizon=5, ensemble_size=3)
    env.reset(seed=9)
    for cycle in range(4):
        truth = env._truth[cycle]
        obs, reward, *_ = env.step(np.repeat(truth[None], 3, axis=0).astype(np.float32))
        expected = env.model.forecast(truth.astype(np.float32).astype(float), 1)
        assert np.max(np.abs(obs["background"] - expected)) <= 1e-12
        assert np.max(np.abs(obs["background"][0] - env._truth[cycle + 1])) <= 1e-4  # float32 action
        assert reward >= -1e-5
    # in float64 the cycle is exact
    x = env._truth[0]
    assert np.max(np.abs(env.model.forecast(x, 1) - env._truth[1])) <= 1e-12


def _scores(env, analysis) -> dict[str, float]:
    """Run one episode whose analysis at each cycle is ``analysis(env, obs)``; the env's scores."""
    obs, _ = env.reset(seed=3)
    done = False
    while not done:
        obs, _, _, done, _ = env.step(analysis(env, obs).astype(np.float32))
    return env.episode_scores()


def test_forecast_skill_is_one_for_the_truth_and_zero_for_the_free_run():
    env = Lorenz96CyclingEnv(horizon=30, ensemble_size=1)
    perfect = _scores(env, lambda e, obs: e._truth[e._cycle][None])
    for lead in (1, 5, 10):
        assert perfect[f"forecast_skill_{lead}"] >= 1 - 1e-4  # float32 analyses: round-off only
        assert perfect[f"forecast_never_{lead}"] <= 1e-4
    # returning the background (one member) is the free run itself: its forecast from cycle c
    # at lead k is the free run at c + k, so the skill is 0 only if both verify at c + k
    free = _scores(env, lambda e, obs: obs["background"])
    assert abs(free["skill"]) <= 1e-3
    for lead in (1, 5, 10):
        assert abs(free[f"forecast_skill_{lead}"]) <= 1e-3, (lead, free[f"forecast_skill_{lead}"])
        assert free[f"forecast_never_{lead}"] > 1.0  # a free run has no skill on the block


def test_model_error_changes_only_the_truth():
    env = Lorenz96CyclingEnv(horizon=3, model_error=True)
    env.reset(seed=1)
    assert env.model.forcing == 8.0 and env._truth_model.forcing == 8.5
    assert np.max(np.abs(env.model.forecast(env._truth[0], 1) - env._truth[1])) > 1e-3


@pytest.mark.parametrize("bad", [np.nan, np.inf, 60.0, -51.0])
def test_nan_and_out_of_box_actions_raise(bad):
    env = Lorenz96CyclingEnv(horizon=3, ensemble_size=2)
    obs, _ = env.reset(seed=0)
    action = obs["background"].astype(np.float32)
    action[1, 3] = bad
    with pytest.raises(InvalidAction):
        env.step(action)
    with pytest.raises(InvalidAction):
        env.step(np.zeros((3, 40), np.float32))


TRUTH_CASES = [
    (lambda: Lorenz96CyclingEnv(horizon=15, rho_obs=0.2, ensemble_size=2), "papergym/Lorenz96Cycling-v0", {}),
    (lambda: KolmogorovCyclingV1Env(size=8, horizon=6, rho_obs=0.2, ensemble_size=2, spinup=0.5),
     "papergym/KolmogorovCycling-v1", {"size": 8, "spinup": 0.5}),
]


@pytest.mark.parametrize("make_env, problem, kwargs", TRUTH_CASES, ids=["l96", "kolmogorov"])
def test_no_observation_info_or_public_attribute_holds_a_truth_state(make_env, problem, kwargs):
    env = make_env()
    obs, _ = env.reset(seed=11)
    truths, n = env._truth, env.n

    def arrays(value):
        if isinstance(value, dict):
            for v in value.values():
                yield from arrays(v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                yield from arrays(v)
        elif isinstance(value, np.ndarray) and value.dtype.kind == "f":
            yield value

    def holds_truth(value) -> bool:
        for arr in arrays(value):
            rows = arr.reshape(-1, arr.shape[-1]) if arr.ndim and arr.shape[-1] == n else arr.reshape(1, -1)
            for row in rows:
                if row.shape == (n,) and np.min(np.max(np.abs(truths - row), axis=1)) < 1e-6:
                    return True
        return False

    assert holds_truth({"planted": [truths[3] + 0.0]})  # the probe finds a truth state where there is one
    for _ in range(env.horizon):
        assert not holds_truth(obs)
        assert not holds_truth({k: v for k, v in vars(env).items() if not k.startswith("_")})
        action = (obs["background"] + 0.3).astype(np.float32)
        obs, _, _, done, info = env.step(action)
        assert all(np.isscalar(v) for v in info.values())
        if done:
            break
    # and the problem's view exposes none either
    task = papergym.make_task(problem, tier="smoke", **kwargs)
    view = task.train_view(0, task.budget)
    assert not holds_truth({k: v for k, v in vars(view).items() if not k.startswith("_")})


def test_check_env_on_non_default_configurations():
    check_env(Lorenz96CyclingEnv(horizon=5, rho_obs=0.05, ensemble_size=1, window=3, model_error=True),
              skip_render_check=True)
    check_env(KolmogorovCyclingEnv(size=8, horizon=3, ensemble_size=2, spinup=0.5), skip_render_check=True)
    check_env(KolmogorovCyclingV1Env(size=8, horizon=3, ensemble_size=2, spinup=0.5), skip_render_check=True)


def test_kolmogorov_env_never_observes_its_patch_and_cycles_the_analysis():
    env = KolmogorovCyclingV1Env(size=8, horizon=6, rho_obs=0.2, ensemble_size=2, spinup=0.5)
    assert env.model.dealias_state and not KolmogorovCyclingEnv(size=8).model.dealias_state
    obs, _ = env.reset(seed=3)
    block = env._block.reshape(8, 8)
    assert block.sum() == 16 and (block.sum(axis=0) % 4 == 0).all()
    for cycle in range(6):
        assert not (obs["mask"].astype(bool) & env._block).any()
        assert obs["mask"].sum() == round(0.2 * 64)
        truth = env._truth[cycle]
        obs, *_ = env.step(np.repeat(truth[None], 2, axis=0).astype(np.float32))
        if cycle < 5:
            assert np.max(np.abs(obs["background"][0] - env._truth[cycle + 1])) <= 1e-4
    scores = env.episode_scores()
    assert scores["rmse_all"] <= 1e-4 and scores["skill"] > 0.99


def test_the_physical_residual_separates_true_and_shuffled_states():
    model = Lorenz96()
    traj = make_training_set(model, 1, 30, 0)[0]
    true = np.mean([physical_residual(model, traj[t], traj[t + 1]) for t in range(29)])
    shuffled = np.mean([physical_residual(model, traj[t], traj[(t + 13) % 30]) for t in range(29)])
    assert true <= 0.3 * shuffled  # the midpoint rule leaves an O(Delta^2) floor
    assert true < shuffled


def test_training_set_seeds_are_validated_and_deterministic():
    model = Lorenz96()
    a, b = make_training_set(model, 2, 5, 0), make_training_set(model, 2, 5, 0)
    assert a.shape == (2, 5, 40) and np.array_equal(a, b)
    assert not np.array_equal(a, make_training_set(model, 2, 5, 1))
    with pytest.raises(ValueError):
        make_training_set(model, 1, 2, 100)
