"""continual agents: EBLoRA's Stiefel geometry and invariants, GPM growth, merging, and every agent
on the smoke tier."""

from __future__ import annotations

import types

import numpy as np
import pytest
import torch
from threadpoolctl import threadpool_limits

import papergym
from papergym.agent import REGISTRY
from papergym.agents.continual import eblora as E
from papergym.agents.continual._common import grow_subspace
from papergym.agents.continual.seq_lora import LoRALearner

AGENTS = ("frozen", "seq_lora", "eblora", "olora", "inflora", "sdlora", "eblora_nof", "eblora_diag",
          "eblora_randinit", "joint", "per_task")


def fake_view(width=32, rank=4, seed=0):
    gen = np.random.default_rng(seed)
    sizes = [64, width, width, width, 10]
    weights = [gen.normal(0, 1 / np.sqrt(i), size=(o, i)).astype(np.float32)
               for i, o in zip(sizes[:-1], sizes[1:])]
    biases = [gen.normal(0, 0.1, size=o).astype(np.float32) for o in sizes[1:]]
    return types.SimpleNamespace(weights=weights, biases=biases, adapted=(0, 1, 2), rank=rank, init_seed=seed)


class FakeTask:
    def __init__(self, seed=0, n=64):
        rng = np.random.default_rng(seed)
        self.X, self.y = rng.uniform(0, 1, size=(n, 64)), rng.integers(0, 10, size=n)

    def gradient_data(self):
        return self.X, self.y


def orthonormal(rows, cols, seed):
    q, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(rows, cols)))
    return torch.tensor(q)


def train(learner, task, steps, seed=1):
    rng = np.random.default_rng(seed)
    opt = learner.optimizer()
    for _ in range(steps):
        idx = rng.integers(0, len(task.y), size=16)
        X = torch.tensor(task.X[idx], dtype=torch.float32)
        loss = torch.nn.functional.cross_entropy(learner.logits(X),
                                                 torch.as_tensor(task.y[idx]))
        opt.zero_grad()
        loss.backward()
        learner.step(opt)


def eblora_learner(**cfg):
    view = fake_view()
    learner = E.EBLoRALearner(view, E.EBLoRAConfig(lr=1e-2, **cfg))
    learner.F = [orthonormal(64, 10, 1), orthonormal(32, 6, 2), orthonormal(32, 6, 3)]  # earlier tasks'
    return learner


def test_stiefel_invariants_hold_after_200_steps():
    learner = eblora_learner()
    task = FakeTask()
    learner.begin_task(task)
    learner.active = True
    train(learner, task, 200)
    eye = torch.eye(learner.rank)
    for U, V, F in zip(learner.U, learner.V, learner.F):
        assert (U.T @ U - eye).abs().max() <= 1e-5
        assert (V.T @ V - eye).abs().max() <= 1e-5
        assert (F.float().T @ V).abs().max() <= 1e-6  # V stays orthogonal to the frozen subspace
    # every singular value of Delta W equals |s| alpha / r
    for d, s in zip(learner.deltas(), learner.s):
        sigma = torch.linalg.svdvals(d.double())[: learner.rank]
        expected = abs(float(s.detach())) * learner.alpha / learner.rank
        assert torch.allclose(sigma, torch.full_like(sigma, expected), rtol=1e-6, atol=0)
        assert abs(float(s.detach())) > 0.005  # the magnitude moved


def test_projected_gradient_is_tangent_and_the_retraction_is_a_retraction():
    X = orthonormal(40, 5, 0)
    F = orthonormal(40, 7, 1)
    F = F - X @ (X.T @ F)  # a subspace X is orthogonal to
    F, _ = torch.linalg.qr(F)
    X = E.polar(X - F @ (F.T @ X))
    G = torch.tensor(np.random.default_rng(2).normal(size=(40, 5)))
    for basis in (None, F):
        xi = E.riemannian_grad(X, G, basis)
        assert torch.linalg.norm(X.T @ xi + xi.T @ X) <= 1e-6
    xi = E.riemannian_grad(X, G, F)
    assert (F.T @ xi).abs().max() <= 1e-12 + (F.T @ X).abs().max() * 10
    Y = E.retract(X, 0.3 * xi, F)
    assert torch.allclose(Y.T @ Y, torch.eye(5, dtype=Y.dtype), atol=1e-10)
    assert (F.T @ Y).abs().max() <= 1e-10
    assert torch.allclose(E.retract(X, torch.zeros_like(X), F), X, atol=1e-10)  # identity at 0
    # a first-order retraction: R(X, t xi) = X + t xi + O(t^2)
    t = 1e-4
    assert torch.linalg.norm(E.retract(X, t * xi) - X - t * xi) <= 1e-6


def test_init_is_a_descent_direction_within_the_allowed_subspace():
    learner = eblora_learner()
    task = FakeTask()
    grads = learner.layer_gradients(task.X, task.y)
    learner.begin_task(task)
    for d, G, F, V, s in zip(learner.deltas(), grads, learner.F, learner.V, learner.s):
        assert float((d.detach().double() * G.double()).sum()) < 0
        assert (F.float().T @ V).abs().max() <= 1e-6
        assert float(s.detach()) == pytest.approx(E.S_INIT)
    random = E.RandomInitLearner(fake_view(), E.EBLoRAConfig())
    random.begin_task(task)
    assert all(torch.allclose(U.T @ U, torch.eye(4), atol=1e-6) for U in random.U)


def test_gpm_growth_is_orthonormal_captures_the_energy_and_is_capped():
    rng = np.random.default_rng(0)
    G = torch.tensor(rng.normal(size=(48, 6)) @ rng.normal(size=(6, 30)) + 0.01 * rng.normal(size=(48, 30)))
    F = grow_subspace(torch.zeros(48, 0, dtype=torch.float64), G, 0.99, cap=40)
    assert torch.allclose(F.T @ F, torch.eye(F.shape[1], dtype=F.dtype), atol=1e-6)
    assert float(((F.T @ G) ** 2).sum()) >= 0.99 * float((G ** 2).sum())
    assert 6 <= F.shape[1] <= 8
    G2 = torch.tensor(rng.normal(size=(48, 60)))
    F2 = grow_subspace(F, G2, 0.99, cap=40)
    assert F2.shape[1] == 40 and torch.allclose(F2[:, : F.shape[1]].abs(), F.abs(), atol=1e-8)
    assert torch.allclose(F2.T @ F2, torch.eye(40, dtype=F2.dtype), atol=1e-6)


def test_adamw_is_torchs():
    from papergym.agents.continual._common import AdamW
    rng = np.random.default_rng(0)
    a = torch.tensor(rng.normal(size=(5, 3)), requires_grad=True)
    b = a.detach().clone().requires_grad_()
    ours, ref = AdamW([a], lr=1e-2, weight_decay=0.1), torch.optim.AdamW([b], lr=1e-2, weight_decay=0.1)
    for _ in range(5):
        target = torch.tensor(rng.normal(size=(5, 3)))
        for p, opt in ((a, ours), (b, ref)):
            opt.zero_grad()
            ((p - target) ** 2).sum().backward()
            opt.step()
    assert torch.allclose(a, b, atol=1e-12)


def test_adamw_parameter_groups_are_torchs():
    from papergym.agents.continual._common import AdamW
    rng = np.random.default_rng(1)
    a, b = (torch.tensor(rng.normal(size=(4, 2)), requires_grad=True) for _ in range(2))
    a2, b2 = (t.detach().clone().requires_grad_() for t in (a, b))
    ours = AdamW([{"params": [a]}, {"params": [b], "lr": 0.3}], lr=1e-2)
    ref = torch.optim.AdamW([{"params": [a2]}, {"params": [b2], "lr": 0.3}], lr=1e-2, weight_decay=0.0)
    for _ in range(4):
        target = torch.tensor(rng.normal(size=(4, 2)))
        for ps, opt in (((a, b), ours), ((a2, b2), ref)):
            opt.zero_grad()
            sum(((p - target) ** 2).sum() for p in ps).backward()
            opt.step()
    assert torch.allclose(a, a2, atol=1e-12) and torch.allclose(b, b2, atol=1e-12)


@pytest.mark.parametrize("mult", [1.0, 10.0])
def test_the_magnitude_steps_with_its_own_learning_rate(mult):
    learner = eblora_learner(magnitude_lr_mult=mult)
    task = FakeTask()
    learner.begin_task(task)
    learner.active = True
    train(learner, task, 1)  # Adam's first step moves every entry by its lr (times sign)
    for s in learner.s:
        assert abs(float(s.detach()) - E.S_INIT) == pytest.approx(1e-2 * mult, rel=1e-3)
    eblora = REGISTRY.get("eblora", "continual")({})
    assert eblora.config.magnitude_lr_mult == 1.0  # the official code's: s shares the lr
    assert len({round(c.magnitude_lr_mult, 9) for c in eblora.tuning_candidates(8)}) == 8


def test_merging_leaves_the_outputs_unchanged():
    task = FakeTask()
    for learner in (LoRALearner(fake_view(), E.EBLoRAConfig(lr=1e-2)), eblora_learner()):
        learner.begin_task(task)
        learner.active = True
        train(learner, task, 20)
        X = torch.tensor(task.X, dtype=torch.float32)
        with torch.no_grad():
            before = learner.logits(X)
            update = learner.end_task(task)
            after = learner.logits(X)  # adapters merged and inactive
        assert not learner.active and max(np.abs(u).max() for u in update) > 0
        assert (before - after).abs().max() <= 1e-5


def run(agent_id, problem="papergym/ContinualLoRA-v1", seed=0, **kwargs):
    task = papergym.make_task(problem, tier="smoke", **kwargs)
    cls = REGISTRY.get(agent_id, "continual")
    task.set_agent_role(cls.role)
    budget = task.budget
    with threadpool_limits(1):
        artifact = cls({}).solve(task.train_view(seed, budget), budget, seed)
        return task.evaluate(artifact, seed).metrics


@pytest.fixture(scope="module")
def smoke():
    return {a: run(a, tasks=2) for a in AGENTS}


def test_every_agent_completes_the_smoke_stream(smoke):
    frozen = smoke["frozen"]["mfn"]
    for agent in AGENTS[1:]:
        assert smoke[agent]["mfn"] > frozen + 0.05, agent
    assert smoke["per_task"]["bwt"] == 0  # task-specific adapters never forget
    assert smoke["eblora"]["top1_share"] == pytest.approx(1 / 4, abs=1e-5)
    assert smoke["seq_lora"]["top1_share"] > 1 / 4 + 0.1  # imbalance is measurable at this scale
    assert smoke["eblora_diag"]["top1_share"] > smoke["eblora"]["top1_share"]


def test_sequential_lora_forgets_on_the_hard_stream():
    metrics = run("seq_lora", "papergym/ContinualLoRAHard-v1")
    assert metrics["bwt"] < -0.1


@pytest.mark.parametrize("agent_id", ["seq_lora", "per_task"])
def test_agents_tune_through_the_view_once_per_configuration(agent_id):
    task = papergym.make_task("papergym/ContinualLoRA-v1", tier="smoke", tuning_runs=4, tasks=2, epochs=1)
    cls = REGISTRY.get(agent_id, "continual")
    task.set_agent_role(cls.role)  # the per-task reference tunes with its privilege too
    budget = task.budget
    view = task.train_view(0, budget)
    with threadpool_limits(1):
        task.evaluate(cls({}).solve(view, budget, 0), 0)
    assert budget.used["tuning_runs"] == 4 and len(view.tuning.runs) == 4
    assert all(0 <= s <= 1 for _, s in view.tuning.runs)
    tried = [config for config, _ in view.tuning.runs]
    assert cls({}).config.model_dump() in tried  # the defaults are always a candidate
    assert len({config["lr"] for config in tried}) == 4  # its own draws, none repeated
    metrics = task.evaluate(view.receipt, 0).metrics  # the row shows the configuration chosen
    assert metrics["chosen_lr"] == pytest.approx(view.tuning.summary()["chosen"]["lr"])
    assert "chosen_threshold" not in metrics


def test_every_method_gets_the_sections_budget_and_its_own_draws():
    tuned = [a for a in AGENTS if a != "frozen"]
    candidates = {a: REGISTRY.get(a, "continual")({}).tuning_candidates(8) for a in tuned}
    for agent, configs in candidates.items():  # EBLoRA had 4, InfLoRA and O-LoRA 8
        assert len(configs) == 8, agent
        assert configs[0] == REGISTRY.get(agent, "continual")({}).config, agent  # defaults first
    assert [c.lr for c in candidates["eblora"][1:]] != [c.lr for c in candidates["inflora"][1:]]
    assert {c.threshold for c in candidates["inflora"]} <= {0.95, 0.99}
    assert {c.orth_lambda for c in candidates["olora"]} <= {0.1, 0.5}


class StubTuningView:
    """A view whose tuning runs score from a table, recorded as the problem records them."""

    def __init__(self, scores):
        from papergym.tuning import TuningRecord
        self.tuning_runs, self.scores = len(scores), scores
        self.tuning = TuningRecord(len(scores))

    def validation_score(self, fit, config):
        score = self.scores[round(config["lr"], 12)]
        self.tuning.add(config, score)
        return score


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("tie", ["all", "draws"])
def test_the_configuration_used_is_the_one_recorded(seed, tie):
    agent = REGISTRY.get("seq_lora", "continual")({})
    lrs = [round(c.lr, 12) for c in agent.tuning_candidates(5)]
    # all five tie (the defaults win), or the four draws tie above the defaults
    scores = {lr: 0.5 if tie == "all" or i > 0 else 0.4 for i, lr in enumerate(lrs)}
    view, used = StubTuningView(scores), []
    agent.fit = lambda v, cfg: used.append(cfg.model_dump())
    agent.solve(view, None, seed)
    assert used == [view.tuning.summary()["chosen"]]
    if tie == "all":
        assert round(used[0]["lr"], 12) == lrs[0]
