"""The torus-graph model and its Tasks: closed forms against finite differences and brute force,
the Gibbs sampler against von Mises moments, and what the Tasks score and refuse."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import i0, i1

import papergym
from papergym import cache
from papergym.envs.torus import tg
from papergym.envs.torus.states import matched_accuracy


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def test_score_matches_finite_differences_and_the_conditional_form(rng):
    phi, x = rng.normal(size=(6, 6, 2)), rng.uniform(0, 2 * np.pi, (4, 6))
    s, h = tg.score(phi, x), 1e-5
    for k in range(6):
        e = np.zeros(6)
        e[k] = h
        fd = (tg.energy(phi, x + e) - tg.energy(phi, x - e)) / (2 * h)
        np.testing.assert_allclose(s[:, k], fd, atol=1e-8)
    np.testing.assert_allclose(tg.score_by_conditionals(phi, x), s, atol=1e-12)


def test_laplacian_identity(rng):
    phi, x = rng.normal(size=(5, 5, 2)), rng.uniform(0, 2 * np.pi, (3, 5))
    h, lap = 1e-4, np.zeros(3)
    for k in range(5):
        e = np.zeros(5)
        e[k] = h
        lap += (tg.energy(phi, x + e) - 2 * tg.energy(phi, x) + tg.energy(phi, x - e)) / h ** 2
    expected = -np.einsum("nijc,ijc->n", tg.stats(x), phi * tg.lap_weights(5)[..., None])
    np.testing.assert_allclose(lap, expected, atol=1e-5)


def test_conditional_coefficients_equal_brute_force(rng):
    phi, x = rng.normal(size=(6, 6, 2)), rng.uniform(0, 2 * np.pi, (3, 6))
    big_a, big_b = tg.conditional_coefficients(phi, x)
    for k in range(6):
        def energy_at(v, k=k):
            y = x.copy()
            y[:, k] = v
            return tg.energy(phi, y)
        np.testing.assert_allclose(big_a[:, k], (energy_at(0) - energy_at(np.pi)) / 2, atol=1e-12)
        np.testing.assert_allclose(big_b[:, k], energy_at(np.pi / 2) - (energy_at(0) + energy_at(np.pi)) / 2,
                                   atol=1e-12)
    np.testing.assert_allclose(tg.mean_stats(x), tg.stats(x).mean(0), atol=1e-12)


def test_gibbs_marginal_of_one_von_mises(rng):
    kappa = 1.3
    phi = np.array([[[kappa, 0.0]]])
    x, rhat = tg.gibbs(phi, 20000, rng, chains=500, burn=20, thin=1)
    values = np.cos(x[:, 0])
    assert abs(values.mean() - i1(kappa) / i0(kappa)) < 3 * values.std() / np.sqrt(len(values))
    assert rhat < 1.05


def test_gibbs_phase_difference_coupling(rng):
    alpha = 0.8
    phi = np.zeros((2, 2, 2))
    phi[1, 0, 0] = alpha  # cos(x_0 - x_1)
    x, _ = tg.gibbs(phi, 20000, rng, chains=1000, burn=50, thin=2)
    values = np.cos(x[:, 0] - x[:, 1])
    assert abs(values.mean() - i1(alpha) / i0(alpha)) < 3 * values.std() / np.sqrt(len(values))
    assert abs(np.cos(x[:, 0]).mean()) < 0.03  # uniform marginals


def test_rhat_flags_disagreeing_chains(rng):
    mixed = rng.uniform(0, 2 * np.pi, (20, 400, 3))
    assert tg.split_rhat(mixed) < 1.02
    stuck = mixed.copy()
    stuck[:, :100] = 0.1 * stuck[:, :100]  # one chain group stuck near 0
    assert tg.split_rhat(stuck) > 1.05


def _fit_task():
    return papergym.make_task("papergym/TGFit-v0", tier="smoke", n=2000)


def test_tgfit_scores_the_truth_perfectly_and_refuses_bad_artifacts(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERGYM_CACHE", "off")
    task = _fit_task()
    view = task.train_view(3, task.budget)
    assert view.data().shape == (2000, 5) and not hasattr(view, "phi")
    truth = cache.get(task.entry(3))
    result = task.evaluate(truth["phi"].copy(), 3).metrics
    assert result["r2"] == pytest.approx(1.0) and result["edge_auroc"] == 1.0
    edge_only = task.evaluate({"edge_scores": tg.edge_strengths(truth["phi"])}, 3).metrics
    assert "r2" not in edge_only and edge_only["edge_auroc"] == 1.0
    with pytest.raises(TypeError):
        task.evaluate([1, 2], 3)
    with pytest.raises(ValueError, match="finite"):
        task.evaluate(np.full((5, 5, 2), np.nan), 3)
    with pytest.raises(PermissionError):
        task.train_view(10 ** 6, task.budget)


def test_tgfit_ground_truth_depends_on_the_eval_salt(monkeypatch):
    from papergym.problem import set_eval_salt

    monkeypatch.setenv("PAPERGYM_CACHE", "off")
    task = _fit_task()
    public = task.entry(0).config["phi_seed"]
    set_eval_salt(b"0123456789abcdef")
    try:
        assert task.entry(0).config["phi_seed"] != public
    finally:
        set_eval_salt(None)


def test_hmm_accuracy_is_invariant_to_label_permutations(rng):
    states = rng.integers(0, 3, 200)
    labels = np.where(rng.random(200) < 0.8, states, rng.integers(0, 3, 200))
    base = matched_accuracy(labels, states, 3)
    assert base > 0.8
    for perm in ([1, 2, 0], [2, 1, 0]):
        assert matched_accuracy(np.array(perm)[labels], states, 3) == pytest.approx(base)


def test_tghmm_and_te_tasks_score_the_truth(monkeypatch):
    monkeypatch.setenv("PAPERGYM_CACHE", "off")
    hmm = papergym.make_task("papergym/TGHMM-v0", tier="smoke", steps=300)
    inst = cache.get(hmm.entry(1))
    assert np.abs(np.diagonal(inst["phis"], axis1=1, axis2=2)).max() == 0  # coupling only
    assert hmm.evaluate((inst["states"] + 1) % 2, 1).metrics["accuracy"] == 1.0
    with pytest.raises(ValueError, match="labels"):
        hmm.evaluate(np.full(300, 5), 1)
    for version in ("v0", "v1"):
        te = papergym.make_task(f"papergym/TGTransferEntropy-{version}", tier="smoke", steps=500,
                                pair_steps=300)
        inst = cache.get(te.entry(1))
        pairs = np.zeros((4, 2, 2))
        pairs[np.arange(4), inst["sources"], 1 - inst["sources"]] = 1.0
        metrics = te.evaluate({"network": inst["pattern"].astype(float), "pairs": pairs}, 1).metrics
        assert metrics["auroc"] == 1.0 and metrics["direction_accuracy"] == 1.0


def test_cross_harmonic_simulator_is_the_ar_tg_at_harmonic_1_and_couples_1_to_2_above(rng):
    """``simulate_cross_harmonic`` with harmonic 1 draws tg.simulate_ar's process (same stream,
    same series); with harmonic 2 the target's phase follows twice the source's lagged phase:
    |mean exp(i(y_1[t] - 2 y_0[t-1]))| is large while the 1:1 locking value is near 0."""
    from papergym.envs.torus.transfer import simulate_cross_harmonic

    w = np.zeros((2, 2, 1, 2))
    w[1, 0, 0] = (3.0, 0.0)
    assert np.array_equal(simulate_cross_harmonic(w, 300, np.random.default_rng(4), 1),
                          tg.simulate_ar(w, 300, np.random.default_rng(4)))
    y = simulate_cross_harmonic(w, 5000, rng, 2)
    lock_12 = np.abs(np.mean(np.exp(1j * (y[1:, 1] - 2 * y[:-1, 0]))))
    lock_11 = np.abs(np.mean(np.exp(1j * (y[1:, 1] - y[:-1, 0]))))
    assert lock_12 > 0.7 and lock_11 < 0.05  # I1(3)/I0(3) = 0.81; 1:1 at 5,000 steps: SE 0.014


def test_scaling_needs_a_clock_for_every_dimension():
    task = papergym.make_task("papergym/TGScaling-v0", tier="smoke")
    task.train_view(0, task.budget)
    with pytest.raises(ValueError, match="clock"):
        task.evaluate({"ssm": {d: np.zeros((d, d, 2)) for d in (20, 40)}}, 0)
    assert tg.TWO_PI > 0


def test_edge_metrics_stay_in_bounds_on_a_perfect_ranking():
    from papergym.envs.torus.fit import _edge_metrics

    rng = np.random.default_rng(9)
    mask = np.triu(rng.random((30, 30)) < 0.5, 1)
    mask = mask | mask.T
    metrics = _edge_metrics(mask * 2.0 + rng.random((30, 30)) * 0.1, mask)
    assert all(0.0 <= v <= 1.0 for v in metrics.values())
    assert metrics["edge_auroc"] == 1.0 and metrics["edge_auprc"] == pytest.approx(1.0)
