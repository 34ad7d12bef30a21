"""Every humanoid agent on a tiny smoke budget: it trains within the problem's budget, returns a
policy the problem scores, and the scores come from the problem."""

from __future__ import annotations

from types import SimpleNamespace

import gymnasium
import numpy as np
import pytest

import papergym
from papergym.agent import REGISTRY
from papergym.agents.humanoid.generalist_mlp import GeneralistMLP, MLPActorCritic
from papergym.agents.humanoid.ppo_core import HumanoidPPOConfig, train_ppo
from papergym.ppo import PPOConfig
from papergym.vector import SameStepVectorEnv

SMOKE = {"pool_size": 2, "max_steps": 30, "train_steps": 128, "eval_episodes": 1,
         "heldout": ["walker2d_v5"], "specialist_steps": 128, "specialist_chunk": 64,
         "reference_episodes": 2, "validation_episodes": 1}
PPO_SMALL = {"n_envs": 2, "n_steps": 32, "epochs": 1, "minibatches": 2}


@pytest.fixture(autouse=True)
def _cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERGYM_CACHE_DIR", str(tmp_path))


@pytest.mark.parametrize("agent_id,config", [
    ("xhugwbc_lite", PPO_SMALL), ("generalist_gcn", PPO_SMALL), ("generalist_mlp", PPO_SMALL),
    ("generalist_metamorph", PPO_SMALL), ("generalist_mlp", {**PPO_SMALL, "randomization": "naive"}),
    ("zero_action", {}), ("specialist_ppo", {"hyperparameters": {"n_steps": 64, "n_epochs": 1}}),
])
def test_agent_smoke(agent_id, config):
    kwargs = dict(SMOKE)
    if agent_id == "specialist_ppo":
        kwargs["bodies"] = ["walker2d_v5"]
    task = papergym.make_task("papergym/XEmbodiedWalker-v2", tier="smoke", **kwargs)
    budget = task.budget
    agent = REGISTRY.get(agent_id, family="humanoid")(config)
    policy = agent.solve(task.train_view(0, budget), budget, 0)
    if agent_id == "zero_action":
        assert budget.used["env_steps"] == 0
    else:
        assert 0 < budget.used["env_steps"] <= 128
    result = task.evaluate(policy, 0)
    assert np.isfinite(list(result.metrics.values())).all()
    assert [u["instance"] for u in result.units] == ["walker2d_v5"]
    if agent_id == "zero_action":  # a = 0 is the lower reference: S = 0 exactly
        assert result.metrics["score"] == 0.0


def test_transformer_policy_is_deterministic_and_masks_absent_slots():
    task = papergym.make_task("papergym/XEmbodiedWalker-v2", tier="smoke", **SMOKE)
    budget = task.budget
    agent = REGISTRY.get("xhugwbc_lite", family="humanoid")(PPO_SMALL)
    policy = agent.solve(task.train_view(1, budget), budget, 1)
    env = papergym.make("papergym/XEmbodiedWalker-v2", bodies=["walker2d_v5"])
    obs, _ = env.reset(seed=0)
    a1, a2 = policy(obs), policy(obs)
    assert np.array_equal(a1, a2) and a1.shape == (13,)
    # the graph-masked first layer: an edit to an absent slot's token cannot reach present slots
    present = env.unwrapped.body.present
    obs2 = obs.copy()
    layout = env.unwrapped.layout
    joints = obs2[layout.slices["joints"]].reshape(5, 13, 3)
    joints[:, 4, :] = 5.0  # l_toe: absent on walker2d_v5 and not a graph vertex
    assert not present[4]
    obs2[layout.slices["joints"]] = joints.ravel()
    np.testing.assert_allclose(policy(obs2)[present], a1[present], atol=1e-6)


@pytest.mark.parametrize("net_name", ["xhugwbc", "metamorph"])
def test_pruned_encoder_computes_what_the_full_one_does(net_name):
    """The encoders skip slots that are a graph vertex of no body in the batch; on a batch of
    two topologies (walker2d_v5: 7 vertices of 13; short_heavy_arms: more) every output that
    reaches the loss, and every gradient, equals the full computation's."""
    import torch

    from papergym.agents.humanoid.generalist_metamorph import MetaMorphActorCritic
    from papergym.agents.humanoid.ppo_core import Parts
    from papergym.agents.humanoid.xhugwbc_lite import GraphTransformer, TransformerActorCritic

    obs, priv = [], []
    for body in ["walker2d_v5", "walker2d_v5", "short_heavy_arms"]:
        env = papergym.make("papergym/XEmbodiedWalker-v1", bodies=[body], morph_obs=True)
        o, info = env.reset(seed=len(obs))
        for _ in range(3):
            o, *_, info = env.step(env.action_space.sample())
        obs.append(o)
        priv.append(info["privileged"])
        parts = Parts(env.unwrapped.layout.as_dict())
    torch.manual_seed(0)
    if net_name == "xhugwbc":
        net = TransformerActorCritic(parts, len(priv[0]), len(info["estimator_target"]), 16, 2, 2,
                                     "first", True)
    else:
        net = MetaMorphActorCritic(parts, len(priv[0]), 16, 2, 2)
    encoders = [m for m in net.modules() if isinstance(m, GraphTransformer)]

    def outputs(batch):
        o, p = torch.as_tensor(np.stack([obs[k] for k in batch])), torch.as_tensor(
            np.stack([priv[k] for k in batch]))
        net.zero_grad()
        mean, est = net.actor(o)
        value = net.value(o, p)
        present = parts.present(o) > 0
        loss = mean[present].square().sum() + value.square().sum()
        if est is not None:
            loss = loss + est.square().sum()
        loss.backward()
        grads = [q.grad.clone() for q in net.parameters() if q.grad is not None]
        return mean[present], est, value, grads

    for batch in ([0, 1], [0, 2]):  # one topology (6 slots pruned); two (fewer pruned)
        for e in encoders:
            e.prune = True
        pruned = outputs(batch)
        for e in encoders:
            e.prune = False
        full = outputs(batch)
        for a, b in zip(pruned[:3], full[:3]):
            if a is not None:
                torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
        assert len(pruned[3]) == len(full[3])
        for a, b in zip(pruned[3], full[3]):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)
    vertex = parts.vertex(torch.as_tensor(obs[0][None]))[0]
    assert int(vertex.sum()) == 7 and parts.j == 13  # what the walker batch skips


@pytest.mark.parametrize("embed", ["node", "shared"])
def test_two_member_encoder_is_two_encoders(embed):
    """The actor's and the critic's encoder run as one two-member batched network; each
    member computes what a one-member encoder with that member's weights computes, outputs and
    gradients (the weights of member g are the g-th slice of every parameter)."""
    import torch

    from papergym.agents.humanoid.ppo_core import Parts, SharedEmbedding
    from papergym.agents.humanoid.xhugwbc_lite import GraphTransformer

    env = papergym.make("papergym/XEmbodiedWalker-v1", bodies=["walker2d_v5", "short_heavy_arms"])
    obs = []
    for seed in range(4):
        env.reset(seed=seed)
        obs.append(env.step(env.action_space.sample())[0])
    parts = Parts(env.unwrapped.layout.as_dict())
    o = torch.as_tensor(np.stack(obs))
    tokens, mask, present = parts.tokens(o), parts.mask(o), parts.present(o)
    d_tok = tokens.shape[-1]

    def encoder(members):
        emb = SharedEmbedding(d_tok, 16, members) if embed == "shared" else None
        return GraphTransformer(parts.j, d_tok, 16, 2, 2, "first", embed=emb, members=members)

    torch.manual_seed(0)
    pair = encoder(2)
    with torch.no_grad():
        for q in pair.parameters():
            q.normal_(0, 0.3)  # away from the initial zeros and ones
    z = pair(tokens, mask, present)
    (z[0].sin().sum() + z[1].cos().sum()).backward()
    assert not torch.allclose(z[0], z[1])
    for g, fn in enumerate([torch.sin, torch.cos]):
        single = encoder(1)
        single.load_state_dict({k: v[g:g + 1] for k, v in pair.state_dict().items()})
        z_g = single(tokens, mask, present)
        fn(z_g[0]).sum().backward()
        torch.testing.assert_close(z_g[0], z[g], rtol=1e-5, atol=1e-6)
        for (name, q), q_g in zip(pair.named_parameters(), single.parameters()):
            torch.testing.assert_close(q.grad[g:g + 1], q_g.grad, rtol=1e-4, atol=1e-6,
                                       msg=name)


def test_metamorph_reads_the_morphology_and_is_evaluated_with_it():
    task = papergym.make_task("papergym/XEmbodiedWalker-v2", tier="smoke", **SMOKE)
    budget = task.budget
    agent = REGISTRY.get("generalist_metamorph", family="humanoid")(PPO_SMALL)
    policy = agent.solve(task.train_view(0, budget), budget, 0)
    assert policy.env_options == {"morph_obs": True}
    assert task.observation_options(policy) == {"morph_obs": True}
    env = papergym.make("papergym/XEmbodiedWalker-v2", bodies=["w2v_h0"], morph_obs=True)
    obs, _ = env.reset(seed=0)
    morph = env.unwrapped.layout.slices["morphology"]
    np.testing.assert_allclose(obs[morph].reshape(13, 6), env.unwrapped.body.morphology(),
                               rtol=1e-6)
    heavier = obs.copy()
    heavier[morph] = heavier[morph] * 1.5
    present = env.unwrapped.body.present
    assert np.abs(policy(heavier)[present] - policy(obs)[present]).max() > 1e-6
    sneaky = SimpleNamespace(env_options={"bodies": ["w2v_0_0"]})
    with pytest.raises(ValueError, match="may choose only"):
        task.observation_options(sneaky)


def test_budget_is_enforced_by_the_problem():
    task = papergym.make_task("papergym/XEmbodiedWalker-v2", tier="smoke", **SMOKE)
    budget = task.budget
    env = task.train_view(0, budget).make_env()
    env.reset(seed=0)
    for _ in range(128):
        _, _, term, trunc, _ = env.step(np.zeros(13))
        if term or trunc:
            env.reset(seed=1)
    with pytest.raises(papergym.BudgetExceeded):
        env.step(np.zeros(13))


class _Recorder(gymnasium.Wrapper):
    """Keeps every observation a policy acts on: reset observations and non-final step ones."""

    def __init__(self, env, seen):
        super().__init__(env)
        self.seen = seen

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        self.seen.append(obs)
        return obs, info

    def step(self, action):
        obs, r, term, trunc, info = self.env.step(action)
        if not (term or trunc):
            self.seen.append(obs)
        return obs, r, term, trunc, info


def test_observation_normalizer_sees_every_observation():
    """CleanRL / NormalizeObservation: the running statistics are those of every observation the
    policy acted on, not of a few rollout-start ones (6 rollouts of 2 envs x 16 steps)."""
    task = papergym.make_task("papergym/XEmbodiedWalker-v2", tier="smoke", **SMOKE)
    budget, seen = task.budget, []
    view = task.train_view(0, budget)
    recording = SimpleNamespace(make_vector_env=lambda n: SameStepVectorEnv(
        [_Recorder(view.make_env(), seen) for _ in range(n)]))
    config = HumanoidPPOConfig(n_envs=2, n_steps=16, epochs=1, minibatches=2)
    assert isinstance(config, PPOConfig) and GeneralistMLP.Config().minibatches == 4
    policy = train_ppo(recording, budget, 0, lambda parts, dp, de: MLPActorCritic(
        parts, dp, (16,)), config)
    seen = np.stack(seen)
    assert len(seen) == 2 + 128  # the first resets, then one observation per step
    cont = policy.norm.index
    np.testing.assert_allclose(policy.norm.stats.count, len(seen), rtol=1e-4)
    np.testing.assert_allclose(policy.norm.stats.mean, seen[:, cont].mean(0), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(policy.norm.stats.var, seen[:, cont].var(0), rtol=1e-3, atol=1e-5)


def test_generalist_ft_fine_tunes_a_copy_on_each_heldout_body():
    """Generalist-FT: the problem offers each held-out body's fine-tuning budget; the policy
    scored there is a fine-tuned copy, the pretrained one stays as it was for the next body."""
    import torch

    task = papergym.make_task("papergym/XEmbodiedWalker-v2", tier="smoke",
                              **{**SMOKE, "heldout": ["walker2d_v5", "w2v_h0"],
                                 "finetune_steps": 64})
    budget = task.budget
    policy = REGISTRY.get("generalist_ft", family="humanoid")(PPO_SMALL).solve(
        task.train_view(0, budget), budget, 0)
    before = [p.detach().clone() for p in policy.net.parameters()]
    view = task.finetune_view("w2v_h0", 0)
    tuned = policy.adapt(view, view.budget, 0)
    assert view.budget.used == {"env_steps": 64}
    moved = max(float((a - b).detach().abs().max()) for a, b in
                zip(tuned.net.parameters(), policy.net.parameters()))
    assert moved > 1e-6  # the copy trained
    assert all(torch.equal(a, b) for a, b in zip(before, policy.net.parameters()))
    result = task.evaluate(policy, 0)
    assert [u["finetune_used"] for u in result.units] == [64.0, 64.0]
    zero_shot = task.evaluate(tuned, 0)  # no adapt(): scored as it is
    assert [u["finetune_used"] for u in zero_shot.units] == [0.0, 0.0]


def test_generalist_ft_adapts_across_the_sandbox(tmp_path):
    """Through the runner, the agent process fine-tunes over the problem's metered view."""
    from papergym.benchmarks.runner import run_benchmark
    from papergym.benchmarks.spec import find_spec
    from papergym.leaderboard.store import Store

    spec = find_spec("humanoid")
    spec = spec.model_copy(update={"problems": [p for p in spec.problems
                                                if p.name == "walker_finetune"],
                                   "claims": []})
    with Store(tmp_path / "results.sqlite") as store:
        summary = run_benchmark(spec, "smoke", store=store, workers=1, agents=["generalist_ft"])
        rows = store.all(benchmark="humanoid")
    assert summary.failed == 0 and len(rows) == 1, summary.failures
    assert rows[0].metrics["finetune_used"] == 128.0
