"""predcoding problems and the shared PC core: the spec's correctness tests."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import papergym
from papergym.datasets import digits_split
from papergym.envs.predcoding import core as C
from papergym.envs.predcoding.task import make_artifact, split
from papergym.problem import BudgetExceeded

DEPTH = "papergym/PCDepth-v0"
RESIDUAL = "papergym/PCDepthResidual-v0"


def net(depth=4, width=16, blocks=0, seed=0, batch=8):
    arch = C.Architecture.residual(blocks, width) if blocks else C.Architecture.mlp(depth, width)
    rng = np.random.default_rng(seed)
    params = C.init_params(arch, rng)
    for b in params.b:  # non-zero biases, so that no term vanishes by accident
        b += rng.normal(0, 0.1, size=b.shape)
    x = rng.uniform(0, 1, size=(batch, 64))
    y = rng.integers(0, 10, size=batch)
    return arch, params, x, y


def torch_forward(params, arch, x):
    """An independent forward pass (torch's tanh GELU), returning every u_l."""
    W = [torch.tensor(w, requires_grad=True) for w in params.W]
    b = [torch.tensor(v, requires_grad=True) for v in params.b]
    h = [torch.tensor(x)]
    for layer in range(1, arch.depth + 1):
        inp = h[-1] if layer == 1 else torch.nn.functional.gelu(h[-1], approximate="tanh")
        u = inp @ W[layer - 1].T + b[layer - 1]
        if layer in arch.skips:
            u = u + h[arch.skips[layer]]
        h.append(u)
    return W, b, h


# ------------------------------------------------------------------------------ the core

@pytest.mark.parametrize("blocks", [0, 2])
def test_energy_equals_an_independent_computation(blocks):
    arch, params, x, y = net(depth=5, blocks=blocks)
    state = C.init_state(params, arch, x, C.one_hot(y))
    rng = np.random.default_rng(1)
    for k in range(1, arch.depth):  # move the latents off the forward pass
        state.h[k] = state.h[k] + rng.normal(0, 0.3, size=state.h[k].shape)
    pi = rng.uniform(0.1, 2.0, size=arch.depth)
    expected = 0.0
    with torch.no_grad():
        W, b, _ = torch_forward(params, arch, x)
        for layer in range(1, arch.depth + 1):
            prev = torch.tensor(state.h[layer - 1])
            inp = prev if layer == 1 else torch.nn.functional.gelu(prev, approximate="tanh")
            u = inp @ W[layer - 1].T + b[layer - 1]
            if layer in arch.skips:
                u = u + torch.tensor(state.h[arch.skips[layer]])
            expected += 0.5 * pi[layer - 1] * float(((torch.tensor(state.h[layer]) - u) ** 2).sum())
    assert C.energy(params, arch, state, pi) == pytest.approx(expected, rel=1e-12)


def test_forward_initialization_leaves_only_the_output_error():
    arch, params, x, y = net(depth=6)
    state = C.init_state(params, arch, x, C.one_hot(y))
    e, _ = C.errors(params, arch, state)
    assert all(np.array_equal(e[k], np.zeros_like(e[k])) for k in range(1, arch.depth))
    assert np.linalg.norm(e[arch.depth]) > 0.1
    np.testing.assert_allclose(C.forward(params, arch, x)[-1], torch_forward(params, arch, x)[2][-1].detach())


@pytest.mark.parametrize("blocks", [0, 2])
def test_backprop_errors_give_the_autograd_gradient(blocks):
    arch, params, x, y = net(depth=5, blocks=blocks)
    h0 = C.forward(params, arch, x)
    target = C.one_hot(y)
    gW, gb = C.weight_grads(params, arch, h0[:-1], C.backprop_errors(params, arch, h0, target - h0[-1]))
    W, b, h = torch_forward(params, arch, x)
    loss = 0.5 * ((torch.tensor(target) - h[-1]) ** 2).sum() / len(x)
    loss.backward()
    for ours, theirs in zip([*gW, *gb], [*W, *b]):
        np.testing.assert_allclose(ours, theirs.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_pc_equilibrium_with_a_weak_nudge_gives_the_backprop_gradient():
    """Classic PC-BP correspondence (Whittington & Bogacz 2017): free output nudged by beta toward
    the target, relaxed to equilibrium; the weight update / beta matches the BP gradient."""
    arch, params, x, y = net(depth=4, width=16)
    h0 = C.forward(params, arch, x)
    target, beta, lr = C.one_hot(y), 1e-3, 0.2
    state = C.init_state(params, arch, x, None)
    config = C.InferenceConfig(lr_h=lr)
    for _ in range(500):
        e, _ = C.errors(params, arch, state)
        output_grad = e[-1] + beta * (state.h[-1] - target)  # d/dh_L of E + beta/2 ||h_L - y||^2
        C.inference_step(params, arch, state, np.ones(arch.depth), config)
        state.h[-1] = state.h[-1] - lr * output_grad
    gW, _ = C.pc_weight_grads(params, arch, state, "settled")
    bW, _ = C.weight_grads(params, arch, h0[:-1], C.backprop_errors(params, arch, h0, target - h0[-1]))
    for ours, bp in zip(gW, bW):
        cosine = np.sum(ours * bp) / (np.linalg.norm(ours) * np.linalg.norm(bp))
        assert cosine >= 0.99
        assert np.linalg.norm(ours) / beta == pytest.approx(np.linalg.norm(bp), rel=0.05)


def test_one_wave_step_with_unit_step_makes_fu_exactly_backprop_at_the_top():
    """One inference step (S schedule, lr_h = 1): the top two layers' FU errors are the backprop
    deltas exactly (Z-IL's limit); with L = 2 the whole update is backprop's."""
    for depth in (2, 5):
        arch, params, x, y = net(depth=depth)
        state = C.init_state(params, arch, x, C.one_hot(y))
        C.relax(params, arch, state, C.InferenceConfig(T=1, lr_h=1.0, schedule="S"))
        fu = C.update_errors(params, arch, state, "fu")
        bp = C.backprop_errors(params, arch, state.h0, state.h[-1] - state.h0[-1])
        for layer in (depth, depth - 1):
            np.testing.assert_allclose(fu[layer - 1], bp[layer - 1], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("blocks,aux", [(0, False), (2, False), (2, True)])
def test_energy_decreases_monotonically_during_relaxation(blocks, aux):
    arch, params, x, y = net(depth=6, blocks=blocks)
    state = C.init_state(params, arch, x, C.one_hot(y), aux=aux)
    energies = [C.energy(params, arch, state)]
    C.relax(params, arch, state, C.InferenceConfig(T=60, lr_h=0.05, aux=aux),
            on_step=lambda t, s, pi: energies.append(C.energy(params, arch, s)))
    assert all(b <= a + 1e-12 for a, b in zip(energies, energies[1:]))
    assert energies[-1] < 0.9 * energies[0]


def test_s_schedule_is_a_wave_and_leaves_latents_below_it_untouched():
    arch, params, x, y = net(depth=7)
    n = arch.depth
    for t in range(n):
        pi = C.precisions("S", n, t, alpha=1e-3)
        assert np.sum(pi == 1.0) == 1 and pi[n - 1 - t] == 1.0
        assert np.all(pi[: n - 1 - t] == 0) and np.all(pi[n - t:] == 1e-3)
    for steps in range(1, n):
        state = C.init_state(params, arch, x, C.one_hot(y))
        C.relax(params, arch, state, C.InferenceConfig(T=steps, lr_h=0.7, momentum=0.5, schedule="S"))
        front = n - steps  # latents h_k with k < front have not been reached
        for k in range(1, n):
            same = np.array_equal(state.h[k], state.h0[k])
            assert same == (k < front), (steps, k)


def test_decaying_schedule_spikes_then_decays():
    pi = C.precisions("D", 5, 2, decay=1.0)  # front at layer 2
    np.testing.assert_allclose(pi, [0, 0, 1, np.exp(-1), np.exp(-2)])


def test_fu_gradient_ignores_the_settled_input_latent():
    arch, params, x, y = net(depth=5)
    state = C.init_state(params, arch, x, C.one_hot(y))
    C.relax(params, arch, state, C.InferenceConfig(T=8, lr_h=0.5))
    grad_w3 = lambda rule: C.pc_weight_grads(params, arch, state, rule)[0][2]  # noqa: E731
    fu_before, settled_before = grad_w3("fu"), grad_w3("settled")
    state.h[2] = state.h[2] + 0.5  # perturb the settled input of layer 3
    fu_after, settled_after = grad_w3("fu"), grad_w3("settled")
    assert np.array_equal(fu_before, fu_after)
    assert not np.allclose(settled_before, settled_after)


def test_auxiliary_neurons_delay_the_skip_path_like_the_main_path():
    arch, params, x, y = net(blocks=1)  # layers 1 (input), 2-3 (block, skip 1 -> 3), 4 (output)
    results = {}
    for aux in (False, True):
        state = C.init_state(params, arch, x, C.one_hot(y), aux=aux)
        state.h[3] = state.h[3] + 0.3  # energy arriving at the block's output
        C.relax(params, arch, state, C.InferenceConfig(T=1, lr_h=0.5, aux=aux))
        results[aux] = (np.array_equal(state.h[1], state.h0[1]), np.array_equal(state.h[2], state.h0[2]))
    assert results[False] == (False, False)  # without: the block input moves at once, via the skip
    assert results[True] == (True, False)  # with: only the two nodes one step away move
    # the forward function is the same with or without the auxiliary latents
    s_aux = C.init_state(params, arch, x, None, aux=True)
    np.testing.assert_allclose(C.predictions(params, arch, s_aux)[-1], C.forward(params, arch, x)[-1])


def test_energy_imbalance_on_a_hand_made_example():
    errs = [np.array([[1.0, 0.0], [0.0, 0.0]]), np.array([[0.0, 10.0], [3.0, 4.0]])]
    # sample 0: ||e||^2 = 1 and 100 -> 2 decades; sample 1: 0 (floored at 1e-30) and 25
    np.testing.assert_allclose(C.imbalance(errs), [2.0, np.log10(25.0 / 1e-30)])


def test_config_and_architecture_errors_are_clear():
    with pytest.raises(ValueError, match="schedule"):
        C.InferenceConfig(schedule="wave")
    with pytest.raises(ValueError, match="momentum"):
        C.InferenceConfig(momentum=1.0)
    with pytest.raises(ValueError, match="blocks"):
        C.Architecture(depth=7, width=8, blocks=2)


# ------------------------------------------------------------------------------ the tasks

def test_splits_are_disjoint_stratified_and_never_reach_the_view():
    X_tr, y_tr, X_val, y_val = split(3)
    _, _, X_te, _ = digits_split()
    assert len(y_tr) + len(y_val) + len(X_te) == 1797
    assert abs(len(y_val) / 1797 - 0.15) < 0.01 and abs(len(y_tr) / 1797 - 0.60) < 0.01
    rows = lambda X: {r.tobytes() for r in X}  # noqa: E731
    task = papergym.make_task(DEPTH, tier="smoke")
    view = task.train_view(3, task.budget)
    seen = {r.tobytes() for xb, _ in view.batches.epoch() for r in xb} | rows(view.validation[0])
    test_only = rows(X_te) - rows(X_tr) - rows(X_val)  # some digits images are duplicates
    assert test_only and not seen & test_only
    for c in range(10):
        assert abs(np.mean(y_val == c) - np.mean(y_tr == c)) < 0.02
    assert not split(3)[1].tobytes() == split(4)[1].tobytes()


def test_view_meters_epochs_and_tuning_runs():
    task = papergym.make_task(DEPTH, tier="smoke", epochs=2)
    budget = task.budget
    view = task.train_view(0, budget)
    sizes = [len(yb) for _, yb in view.batches.epoch()]
    assert sizes[:-1] == [64] * (len(sizes) - 1) and sum(sizes) == view.n_train
    view.batches.epoch()
    with pytest.raises(BudgetExceeded):
        view.batches.epoch()
    with pytest.raises(BudgetExceeded):  # smoke grants no tuning run
        view.validation_accuracy(lambda v: None, {"lr": 1e-3})


def test_evaluate_scores_the_artifact_and_rejects_bad_ones():
    task = papergym.make_task(RESIDUAL, tier="smoke", blocks=2)
    params = C.init_params(task.arch, np.random.default_rng(0))
    inference = C.InferenceConfig(T=8, lr_h=0.5, aux=True, schedule="S", weight_update="fu")
    artifact = make_artifact(params, inference)
    first, again = task.evaluate(artifact, 0).metrics, task.evaluate(artifact, 0).metrics
    assert first == again and 0 <= first["accuracy"] <= 1 and first["inference_steps"] == 8
    assert first["energy_imbalance"] > 0
    with pytest.raises(TypeError, match="dict"):
        task.evaluate(lambda x: x, 0)
    bad = make_artifact(params, {"schedule": "wave"})
    with pytest.raises(TypeError, match="schedule"):
        task.evaluate(bad, 0)
    short = dict(artifact, W=artifact["W"][:-1])
    with pytest.raises(TypeError, match="weight matrices"):
        task.evaluate(short, 0)
    with pytest.raises(ValueError, match="blocks"):
        papergym.make_task(RESIDUAL, tier="smoke", blocks=0)


def test_a_diverged_tuning_run_scores_zero_and_a_good_one_is_cached(monkeypatch):
    monkeypatch.setenv("PAPERGYM_CACHE", "off")
    task = papergym.make_task(DEPTH, tier="smoke", depth=3, epochs=1, tuning_runs=2)
    view = task.train_view(0, task.budget)
    params = C.init_params(task.arch, np.random.default_rng(0))
    nan = C.Params([w * np.nan for w in params.W], params.b)
    assert view.validation_accuracy(lambda v: make_artifact(nan, C.InferenceConfig()),
                                    {"run": "nan"}) == 0.0
    score = view.validation_accuracy(lambda v: make_artifact(params, C.InferenceConfig()),
                                     {"run": "init"})
    assert 0 < score < 0.5 and view.tuning.runs == [({"run": "nan"}, 0.0), ({"run": "init"}, score)]
    tuning = task.evaluate(make_artifact(params, C.InferenceConfig()), 0).info["tuning"]
    assert tuning["chosen"] == {"run": "init"} and tuning["validation_score"] == score
    assert tuning["budget"] == 2 and len(tuning["candidates"]) == 2


def test_an_agent_cannot_name_a_tuning_cache_key():
    task = papergym.make_task(DEPTH, tier="smoke", depth=3, epochs=1, tuning_runs=2)
    view = task.train_view(0, task.budget)
    with pytest.raises(TypeError, match="mapping of settings"):
        view.validation_accuracy(lambda v: None, "bp@0000(lr=0.001)")
    assert view.budget.used.get("tuning_runs", 0) == 0
