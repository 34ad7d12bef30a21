"""FedRounds-v0: conformance, codec and bit accounting, data and oracles."""

from __future__ import annotations

import math

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import papergym
from papergym.envs.fedlearn import codec
from papergym.envs.fedlearn.codec import InvalidAction
from papergym.envs.fedlearn.data import (
    digits_split,
    dirichlet_partition,
    label_entropy,
    make_instance,
)
from papergym.envs.fedlearn.env import FedRoundsEnv
from papergym.envs.fedlearn.models import MLP, LeastSquares, SoftmaxRegression
from papergym.envs.fedlearn.protocol import AveragingServer, ServerStrategy
from papergym.problem import BudgetExceeded

PROBLEM = "papergym/FedRounds-v0"


@pytest.fixture(autouse=True)
def _one_blas_thread(monkeypatch):
    monkeypatch.setenv("PAPERGYM_CACHE", "off")  # tests never read or write ~/.cache
    with threadpool_limits(1):  # tiny matrices: threads only add contention on 2 cores
        yield


def smoke_env(**kwargs) -> FedRoundsEnv:
    return papergym.make(PROBLEM, tier="smoke", **kwargs)


def scripted_action(env: FedRoundsEnv, agent: str, obs: dict) -> dict:
    """A deterministic uplink using all three codecs and scalars."""
    p = env.setting.dim
    theta = obs["downlink"][0].astype(np.float64)
    _, g = env.oracle(agent)(theta)
    support = (np.abs(g) >= np.quantile(np.abs(g), 0.8)).astype(np.int8)
    return codec.build_message(2, p, [(codec.SPARSE, -0.05 * g, support, 0.0),
                                      (codec.SIGN, g, None, 0.001)], scalars=[obs["round"]])


def rollout(env: FedRoundsEnv, seed: int, rounds: int) -> list:
    observations, infos = env.reset(seed=seed)
    trace = [("reset", _frozen(observations), _frozen(infos))]
    while env.agents:
        actions = {a: scripted_action(env, a, o) for a, o in observations.items()
                   if o["participating"]}
        observations, rewards, terms, truncs, infos = env.step(actions)
        trace.append((_frozen(observations), _frozen(rewards), _frozen(infos),
                      env.bits_up_total, env.bits_down_total))
    assert len(trace) == rounds + 1
    return trace


def _frozen(value):
    if isinstance(value, dict):
        return tuple((k, _frozen(v)) for k, v in sorted(value.items()))
    if isinstance(value, np.ndarray):
        return (value.dtype.str, value.shape, value.tobytes())
    return value


# ------------------------------------------------------------------------- conformance

def test_seed_determinism_over_50_rounds_and_seed_changes_partition():
    first = rollout(smoke_env(rounds=50), seed=3, rounds=50)
    second = rollout(smoke_env(rounds=50), seed=3, rounds=50)
    assert first == second
    env_a, env_b = smoke_env(), smoke_env()
    env_a.reset(seed=3)
    env_b.reset(seed=4)
    sizes_a = [len(y) for y in env_a.instance.client_y]
    sizes_b = [len(y) for y in env_b.instance.client_y]
    assert sizes_a != sizes_b


def test_observations_stay_in_their_spaces():
    env = smoke_env()
    observations, _ = env.reset(seed=0)
    for _ in range(3):
        for agent, obs in observations.items():
            assert env.observation_space(agent).contains(obs)
        actions = {a: scripted_action(env, a, o) for a, o in observations.items()
                   if o["participating"]}
        observations, *_ = env.step(actions)


def test_bad_actions_raise_invalid_action_naming_the_agent():
    env = smoke_env()
    observations, _ = env.reset(seed=0)
    agent = next(a for a, o in observations.items() if o["participating"])
    p = env.setting.dim
    wrong_shape = codec.build_message(2, p, [codec.dense(np.ones(p))])
    wrong_shape["values"] = np.ones((2, p + 1), dtype=np.float32)
    with pytest.raises(InvalidAction, match=agent):
        env.step({agent: wrong_shape})
    nan_used = codec.build_message(2, p, [codec.dense(np.full(p, np.nan))])
    with pytest.raises(InvalidAction, match=agent):
        env.step({agent: nan_used})
    assert issubclass(InvalidAction, ValueError)
    # NaN in an unused slot is never sent, so it is fine
    nan_unused = codec.build_message(2, p, [codec.dense(np.zeros(p))])
    nan_unused["values"][1] = np.nan
    env.step({agent: nan_unused})


def test_non_participant_action_is_ignored_and_costs_nothing():
    runs = []
    for send_extra in (False, True):
        env = smoke_env()
        observations, _ = env.reset(seed=1)
        idle = next(a for a, o in observations.items() if not o["participating"])
        actions = {a: scripted_action(env, a, o) for a, o in observations.items()
                   if o["participating"]}
        if send_extra:
            actions[idle] = codec.build_message(2, env.setting.dim,
                                                [codec.dense(np.full(env.setting.dim, 5.0))])
        env.step(actions)
        runs.append((env.theta.copy(), env.bits_up_total, env.bits_down_total))
    assert np.array_equal(runs[0][0], runs[1][0])
    assert runs[0][1:] == runs[1][1:]


# ------------------------------------------------------------------------ codec and bits

@pytest.mark.parametrize("p", [610, 4810, 50])
def test_slot_bit_formulas(p):
    rng = np.random.default_rng(p)
    v = rng.standard_normal(p)
    support = (rng.random(p) < 0.1).astype(np.int8)
    nnz = int(support.sum())
    cases = [
        ([codec.dense(v)], [], 32 * p),
        ([(codec.SPARSE, v, support, 0.0)], [], nnz * (32 + math.ceil(math.log2(p)))),
        ([(codec.SIGN, v, None, 0.5)], [], 32 + p),
        ([], [1.0, 2.0, 3.0], 3 * 32),
        ([], [], 0),
        ([codec.dense(v), (codec.SIGN, v, None, 0.5)], [1.0], 32 * p + 32 + p + 32),
    ]
    for slots, scalars, expected in cases:
        _, bits = codec.encode(codec.build_message(2, p, slots, scalars), 2, p)
        assert bits == expected


class SpyServer(AveragingServer):
    """Plain averaging that records what it is given and what it broadcasts."""

    def __init__(self, scalars=()):
        self.received, self.scalars = [], list(scalars)

    def downlink(self, participants):
        s = self.setting
        return codec.build_message(3, s.dim, [codec.dense(self.theta)], self.scalars)

    def aggregate(self, uplinks):
        self.received.append(uplinks)
        return super().aggregate({})


def test_downlink_charged_once_per_participant_and_cumulative_is_sum():
    server = SpyServer(scalars=[1.0, 2.0])
    env = smoke_env(server=server)
    observations, _ = env.reset(seed=0)
    p, S = env.setting.dim, env.setting.participants
    total = 0
    while env.agents:
        actions = {a: scripted_action(env, a, o) for a, o in observations.items()
                   if o["participating"]}
        expected_up = sum(codec.encode(m, 2, p)[1] for m in actions.values())
        observations, _, _, _, infos = env.step(actions)
        info = next(iter(infos.values()))
        assert info["bits_down_round"] == S * (32 * p + 2 * 32)
        assert info["bits_up_round"] == expected_up
        total += info["bits_round"]
        assert info["bits_total"] == total == env.bits_up_total + env.bits_down_total
    assert sum(r["bits_up"] + r["bits_down"] for r in env.metrics_log) == total


def test_server_receives_exactly_the_decoded_uplink():
    server = SpyServer()
    env = smoke_env(server=server)
    observations, _ = env.reset(seed=2)
    p = env.setting.dim
    rng = np.random.default_rng(0)
    actions = {}
    for agent, obs in observations.items():
        if obs["participating"]:
            v = rng.standard_normal(p) * 1e3
            v[:5] = 0.0  # sign(0) = +1
            support = (rng.random(p) < 0.2).astype(np.int8)
            actions[agent] = codec.build_message(
                2, p, [(codec.SPARSE, v, support, 0.0), (codec.SIGN, v, None, 0.37)], [1.5])
    env.step(actions)
    (received,) = server.received
    assert sorted(received) == sorted(env._index[a] for a in actions)
    for agent, message in actions.items():
        payload = received[env._index[agent]]
        v32 = message["values"][0].astype(np.float32)
        expected_sparse = np.where(message["support"][0] == 1, v32, np.float32(0))
        expected_sign = np.where(message["values"][1] >= 0, np.float32(0.37), np.float32(-0.37))
        assert payload.slots.dtype == np.float32
        assert payload.slots[0].tobytes() == expected_sparse.tobytes()
        assert payload.slots[1].tobytes() == expected_sign.tobytes()
        assert payload.scalars.tolist() == [1.5]


# -------------------------------------------------------------------- data and oracles

def _finite_difference_check(model, theta, X, y, weights=None):
    _, grad = model.loss_grad(theta, X, y, weights)
    rng = np.random.default_rng(0)
    for _ in range(3):
        direction = rng.standard_normal(theta.shape)
        h = 1e-5
        numeric = (model.loss(theta + h * direction, X, y, weights)
                   - model.loss(theta - h * direction, X, y, weights)) / (2 * h)
        analytic = float(grad @ direction)
        assert abs(numeric - analytic) <= 1e-6 * max(1.0, abs(analytic))


def test_gradients_match_central_finite_differences():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((40, 12))
    labels = rng.integers(0, 4, 40)
    _finite_difference_check(LeastSquares(12), rng.standard_normal(12), X, rng.standard_normal(40))
    softmax = SoftmaxRegression(12, 4, l2=1e-2)
    _finite_difference_check(softmax, rng.standard_normal(softmax.p), X, labels,
                             rng.random(40) / 40)
    mlp = MLP(12, 7, 4)
    _finite_difference_check(mlp, mlp.init(rng), X, labels)


def test_oracle_allows_exactly_k_calls_for_participants_only():
    env = smoke_env()
    observations, _ = env.reset(seed=0)
    K, p = env.setting.local_steps, env.setting.dim
    active = next(a for a, o in observations.items() if o["participating"])
    idle = next(a for a, o in observations.items() if not o["participating"])
    theta = np.zeros(p)
    for _ in range(K - 1):
        loss, grad = env.oracle(active)(theta)
        assert grad.shape == (p,) and np.isfinite(loss)
    losses, grads = env.oracle(active)(np.stack([theta, theta + 1.0]))  # 2 points, 1 call
    assert losses.shape == (2,) and grads.shape == (2, p)
    with pytest.raises(BudgetExceeded):
        env.oracle(active)(theta)
    with pytest.raises(BudgetExceeded):
        env.oracle(idle)(theta)
    env.step({})
    assert env.sample_gradients[env._index[active]] == (K + 1) * env.setting.batch_size


def test_dirichlet_split_is_a_deterministic_partition_and_entropy_grows_with_alpha():
    _, y_train, _, _ = digits_split()
    entropies = []
    for alpha in (0.1, 0.5, "iid"):
        parts = dirichlet_partition(y_train, 50, alpha, np.random.default_rng(7))
        again = dirichlet_partition(y_train, 50, alpha, np.random.default_rng(7))
        assert all(np.array_equal(a, b) for a, b in zip(parts, again))
        merged = np.sort(np.concatenate(parts))
        assert np.array_equal(merged, np.arange(len(y_train)))  # each index exactly once
        assert min(len(part) for part in parts) >= 2
        entropies.append(np.mean([label_entropy(y_train[part]) for part in parts]))
    assert entropies[0] < entropies[1] < entropies[2]


def test_lsq_optimum_is_exact():
    instance = make_instance("lsq_synth", np.random.default_rng(0), 10, zeta=5.0, kappa=10.0)
    _, grad = instance.objective(instance.theta_star)
    assert np.linalg.norm(grad) <= 1e-8
    assert instance.f_star == pytest.approx(instance.objective(instance.theta_star)[0])


def test_validation_mode_holds_out_fifteen_percent_and_hides_test():
    env = FedRoundsEnv(data="digits_dirichlet", alpha=0.5, num_clients=20, validation=True)
    env.reset(seed=0)
    X_train, _, X_test, _ = digits_split()
    held = len(env.instance.eval_y)
    assert held + len(env.instance.pooled["y"]) == len(X_train)
    assert 0.10 * len(X_train) < held <= 0.15 * len(X_train)


def test_task_rejects_foreign_artifacts():
    task = papergym.make_task(PROBLEM, tier="smoke")
    with pytest.raises(TypeError, match="FedAlgorithm"):
        task.evaluate(lambda obs: obs, 0)


def test_default_server_is_plain_averaging():
    env = smoke_env()
    assert isinstance(env.server, AveragingServer) and isinstance(env.server, ServerStrategy)


def test_digits_are_read_from_the_file_scikit_learn_ships():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    X_train, y_train, X_test, y_test = digits_split()
    ours = np.concatenate([X_train, X_test]) * 16
    labels = np.concatenate([y_train, y_test])
    order_ours = np.lexsort(np.column_stack([ours, labels]).T)
    order_sklearn = np.lexsort(np.column_stack([X, y]).T)
    assert np.array_equal(ours[order_ours], X[order_sklearn])
    assert np.array_equal(labels[order_ours], y[order_sklearn])
    for c in range(10):  # stratified 75/25
        assert abs(np.mean(y_test == c) - np.mean(y == c)) < 0.01


# ------------------------------------------------------------------------- FedRounds-v1

V1 = "papergym/FedRounds-v1"


def test_v1_warm_up_round_has_every_client_and_is_charged_as_any_round():
    env = papergym.make(V1, tier="smoke")
    observations, _ = env.reset(seed=0)
    n, s, p = env.setting.num_clients, env.setting.participants, env.setting.dim
    assert all(o["participating"] for o in observations.values()) and len(observations) == n
    _, _, _, _, infos = env.step({})
    assert next(iter(infos.values()))["bits_down_round"] == n * 32 * p  # one copy per client
    observations, _, _, _, infos = env.step({})
    assert sum(o["participating"] for o in observations.values()) == s
    assert next(iter(infos.values()))["bits_down_round"] == s * 32 * p
    v0 = smoke_env()
    assert sum(o["participating"] for o in v0.reset(seed=0)[0].values()) == v0.setting.participants


def test_v1_minibatches_with_replacement_are_noisy_even_for_small_clients():
    kwargs = dict(data="digits_dirichlet", alpha=0.1, num_clients=50, participants=50,
                  local_steps=2, batch_size=16, rounds=2)
    for sampling, noisy in (("without_replacement", False), ("with_replacement", True)):
        env = papergym.make(V1, sampling=sampling, **kwargs)
        env.reset(seed=3)
        sizes = np.array([len(y) for y in env.instance.client_y])
        small = int(np.flatnonzero(sizes <= 16)[0])  # Dir(0.1): most clients hold <= B rows
        theta = env.theta0
        oracle = env.oracle(f"client_{small}")
        g1, g2 = oracle(theta)[1], oracle(theta)[1]
        assert (not np.allclose(g1, g2)) == noisy, sampling
        assert env.sample_gradients[small] == 2 * (16 if noisy else sizes[small])


def test_v1_oracle_handle_holds_no_route_to_test_data_or_the_env():
    from papergym.envs.fedlearn.data import FedInstance

    env = papergym.make(V1, tier="smoke")
    env.reset(seed=0)
    oracle = env.oracle("client_0")
    reachable = list(vars(oracle).values()) + list(vars(oracle._state).values())
    assert not any(isinstance(v, (FedRoundsEnv, FedInstance)) for v in reachable)
    eval_X = env.instance.eval_X
    arrays = [v for v in reachable if isinstance(v, np.ndarray)]
    assert not any(a is eval_X or (a.shape == eval_X.shape and np.array_equal(a, eval_X))
                   for a in arrays)
    assert oracle._X is env.instance.client_X[0]  # its own training rows, nobody else's


def test_v1_bits_to_target_is_censored_not_charged():
    from papergym.agents.fedlearn.fedavg import FedAvg
    from papergym.agents.fedlearn.trivial import Trivial

    task = papergym.make_task(V1, tier="smoke")
    still = Trivial().solve(task.train_view(0, task.budget), task.budget, 0)
    metrics = task.evaluate(still, 0).metrics
    assert metrics["reached_target"] == 0.0
    assert "bits_to_target" not in metrics and "rounds_to_target" not in metrics
    v0 = papergym.make_task(PROBLEM, tier="smoke")
    assert v0.evaluate(still, 0).metrics["bits_to_target"] == 10 * v0.bit_budget  # v0 as before
    fedavg = FedAvg({"eta_l": 0.3}).build(0.3)
    reached = task.evaluate(fedavg, 0).metrics
    if reached["reached_target"]:
        assert 0 < reached["bits_to_target"] <= reached["bits_total"]
    assert reached["param_eta_l"] == 0.3
