"""rlvr problems: verifiers, solvers, generators, splits, Pass@k, the env, the view, asynchrony,
and the shared tinylm toolkit (KV cache, per-sample gradients, deterministic SFT)."""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import comb

import gymnasium as gym
import numpy as np
import pytest
import torch

import papergym
from papergym.envs.rlvr import evaluate as ev
from papergym.envs.rlvr.tasks import (
    AddScratch,
    Countdown,
    Instance,
    ModLinear,
    SubsetSum,
    make_task_def,
    sample_split,
    split_of,
)
from papergym.problem import BudgetExceeded
from papergym.tinylm.gpt import GPT, GPTConfig
from papergym.tinylm.pergrad import per_sample_grad_norms
from papergym.tinylm.sampling import generate

IDS = ["papergym/RLVRCountdown-v0", "papergym/RLVRSubsetSum-v0", "papergym/RLVRModLinear-v0",
       "papergym/RLVRAddScratch-v0"]
SIZES = {"countdown": 3, "subset_sum": 8, "mod_linear": 97, "add_scratch": 8}


# ------------------------------------------------------------------ 1. verifiers and solvers

@pytest.mark.parametrize("name", list(SIZES))
def test_every_listed_solution_is_accepted(name):
    task = make_task_def(name, SIZES[name])
    rng = np.random.default_rng(0)
    for _ in range(200 if name != "countdown" else 60):
        instance = task.sample(rng)
        solutions = task.solutions(instance)
        assert solutions, f"unsolvable instance {instance.prompt}"
        for text in solutions[:40]:
            assert task.verify(instance, text), (instance.prompt, text)
        assert task.verify(instance, task.render(instance, rng))


def test_countdown_solver_equals_brute_force_over_printed_expressions():
    task = Countdown(3)
    for numbers, target in (((2, 3, 4), 10), ((6, 6, 2), 1), ((5, 1, 5), 5)):
        instance = Instance(f"C{','.join(map(str, numbers))};{target}", (numbers, target))
        solutions = set(task.solutions(instance))
        brute = set()
        texts = [str(a) for a in numbers]
        for a, b in itertools.permutations(numbers, 2):
            texts += [f"{a}{o}{b}" for o in "+-*/"]
        for a, b, c in itertools.permutations(numbers):
            for o1, o2 in itertools.product("+-*/", repeat=2):
                texts += [f"({a}{o1}{b}){o2}{c}", f"{a}{o1}({b}{o2}{c})"]
        for text in texts:
            if task.verify(instance, text):
                brute.add(task.canonical(instance, text))
        assert brute == solutions, (instance.prompt, brute ^ solutions)
        assert all(task.verify(instance, t) for t in solutions)
    assert "((2*3)+4)" in task.solutions(Instance("C2,3,4;10", ((2, 3, 4), 10)))


@pytest.mark.parametrize("response", [
    "3+3+4",          # reused number
    "5+5",            # foreign literal
    "3+4",            # wrong value
    "12/(3-3)+4",     # division by zero (and reuse)
    "(3+4*12",        # unbalanced parentheses
    "3*4-2)",         # unbalanced
    "12-3+1;",        # trailing text
    "-3+13",          # unary minus
    "34+12",          # digit concatenation
    "",
])
def test_countdown_rejects_bad_responses(response):
    instance = Instance("C3,4,12;13", ((3, 4, 12), 13))
    assert not Countdown(3).verify(instance, response)
    assert Countdown(3).verify(instance, "12+4-3") and Countdown(3).verify(instance, "(4-3)+12")


def test_countdown_uses_exact_rationals():
    # 7/3*3 = 7 exactly; in float, (7/3)*3 == 7.000000000000001 is False for other values:
    instance = Instance("C7,3,3;7", ((7, 3, 3), 7))
    assert Countdown(3).verify(instance, "7/3*3")
    assert 1 / 49 * 49 != 1  # the float trap the verifier avoids
    assert Countdown(3).verify(Instance("C1,49,49;1", ((1, 49, 49), 1)), "1/49*49")


def test_subset_sum_modlinear_addition_verifiers():
    s = SubsetSum(4)
    inst = Instance("S4,9,2,6;15", ((4, 9, 2, 6), 15))
    assert s.verify(inst, "1,3") and s.verify(inst, "0,1,2")
    for bad in ("3,1", "1,1,2", "1,4", "1,3,", "", "01,3"):
        assert not s.verify(inst, bad)
    m = ModLinear(97)
    inst = Instance("M5x+3=7;11", (5, 3, 7, 11))
    assert m.solutions(inst) == ["3"] and m.verify(inst, "3")
    assert not m.verify(inst, "14") and not m.verify(inst, "03")
    a = AddScratch(4)
    inst = Instance("A4821+9670", (4821, 9670))
    assert a.verify(inst, "garbage=14491") and a.verify(inst, a.render(inst, None))
    assert not a.verify(inst, "14491") and not a.verify(inst, "=14490")


# ------------------------------------------------------------------ 2. generators and splits

@pytest.mark.parametrize("name", list(SIZES))
def test_generator_deterministic_and_solvable(name):
    task = make_task_def(name, SIZES[name])
    a = [task.sample(np.random.default_rng(5)).prompt for _ in range(3)]
    b = [task.sample(np.random.default_rng(5)).prompt for _ in range(3)]
    assert a == b
    rng = np.random.default_rng(1)
    for _ in range(30):
        assert task.solutions(task.sample(rng))


def test_train_draws_never_hit_eval_or_validation():
    task = SubsetSum(6)
    rng = np.random.default_rng(0)
    prompts = [sample_split(task, rng, "train").prompt for _ in range(10_000)]
    assert all(split_of(p) == "train" for p in prompts)
    evals = [sample_split(task, rng, "eval").prompt for _ in range(50)]
    assert all(split_of(p) == "eval" for p in evals) and not set(evals) & set(prompts)


def test_modlinear_answer_unique_and_closed_form():
    task = ModLinear(97)
    rng = np.random.default_rng(3)
    for _ in range(100):
        inst = task.sample(rng)
        a, b, c, p = inst.data
        answers = [x for x in range(p) if (a * x + b) % p == c]
        assert answers == [int(task.solutions(inst)[0])]


# ------------------------------------------------------------------ 3. Pass@k

def test_pass_at_k_equals_enumeration():
    for n in range(1, 9):
        for c in range(n + 1):
            for k in range(1, n + 1):
                samples = [1] * c + [0] * (n - c)
                subsets = list(itertools.combinations(range(n), k))
                share = Fraction(sum(any(samples[i] for i in s) for s in subsets), len(subsets))
                assert ev.pass_at_k_exact(n, c, k) == share
                assert abs(ev.pass_at_k(n, c, k) - float(share)) < 1e-12
    for c in range(0, 129, 7):
        for k in (1, 2, 16, 64, 128):
            exact = 1 - comb(128 - c, k) / comb(128, k)
            assert abs(ev.pass_at_k(128, c, k) - exact) < 1e-12
        assert abs(ev.pass_at_k(128, c, 1) - c / 128) < 1e-12


def test_pass_curve_and_avg():
    correct = np.array([[1, 0, 0, 0], [1, 1, 1, 1], [0, 0, 0, 0]], dtype=bool)
    curve = ev.pass_at_k_curve(correct)
    assert curve[1] == pytest.approx(correct.mean())
    assert curve[4] == pytest.approx(2 / 3)


# ------------------------------------------------------------------ 9. the env and 12. check


def test_env_determinism_500_steps_and_other_seed_differs():
    def run(seed):
        env = papergym.make("papergym/RLVRSubsetSum-v0", tier="smoke")
        env.action_space.seed(seed)
        obs, _ = env.reset(seed=seed)
        out = [obs.tobytes()]
        for _ in range(500):
            obs, r, term, trunc, _ = env.step(env.action_space.sample())
            out.append((obs.tobytes(), r, term, trunc))
            if term or trunc:
                obs, _ = env.reset()
        return out

    assert run(4) == run(4)
    assert run(4) != run(5)


def test_env_scripted_solution_rewards_and_bad_actions():
    from gymnasium.utils.env_checker import check_env

    env = papergym.make("papergym/RLVRModLinear-v0", tier="smoke").unwrapped
    check_env(env, skip_render_check=True)
    from stable_baselines3.common.env_checker import check_env as sb3_check

    sb3_check(env, warn=False)
    inst = Instance("M5x+3=7;11", (5, 3, 7, 11))
    env.reset(seed=0, options={"instance": inst})
    rewards = [env.step(t)[1] for t in env.tokenizer.encode("3")]
    _, reward, terminated, _, info = env.step(env.tokenizer.eos)
    assert rewards == [0.0] and reward == 1.0 and terminated and info["correct"]
    env.reset(seed=0, options={"instance": inst})
    _, reward, terminated, _, _ = env.step(env.tokenizer.eos)  # empty response
    assert reward == -1.0 and terminated
    env.reset(seed=0)
    with pytest.raises(gym.error.InvalidAction):
        env.step(env.tokenizer.vocab_size)
    with pytest.raises(ValueError):
        env.step(float("nan"))
    env.reset(seed=0)
    for _ in range(env.max_response_tokens):  # never EOS: verified as is at the horizon
        _, reward, terminated, _, _ = env.step(0)
    assert terminated and reward == -1.0


# ------------------------------------------------------------------ view, replay, asynchrony

def _task(**kw):
    return papergym.make_task("papergym/RLVRModLinear-v0", tier="smoke", **kw)


def _random_policy(task, seed=0):
    return GPT(task.model_config, generator=torch.Generator().manual_seed(seed))


def test_rollouts_replay_through_step_and_budget():
    task = _task(responses=40)
    view = task.train_view(0, task.budget)
    policy = _random_policy(task)
    batch = view.rollout(policy, view.sample_prompts(4), 4)
    env = papergym.make("papergym/RLVRModLinear-v0", tier="smoke").unwrapped
    for i in range(batch.size):
        env.reset(seed=0, options={"instance": batch.instances[i]})
        ids = batch.tokens[i, 1:][batch.mask[i] > 0].tolist()
        reward = 0.0
        for t in ids:
            _, reward, terminated, _, _ = env.step(t)
        if not terminated:  # hit the horizon in the fast path too
            assert len(ids) == env.max_response_tokens
        assert reward == float(batch.rewards[i]), (batch.instances[i].prompt, ids)
    view.rollout(policy, view.sample_prompts(4), 4)
    with pytest.raises(BudgetExceeded):
        view.rollout(policy, view.sample_prompts(4), 4)


@pytest.mark.parametrize("mode", ["fixed", "uniform"])
def test_async_lag_versions_and_behaviour_logprobs(mode):
    k = 2
    task = _task(responses=10_000, lag=k, lag_mode=mode, curve_every=100)
    view = task.train_view(0, task.budget)
    policy = _random_policy(task)
    stream = view.stream(policy, 2, 2)
    snapshots = {0: {n: p.clone() for n, p in policy.state_dict().items()}}
    with pytest.raises(RuntimeError):
        view.rollout(policy, view.sample_prompts(1), 2)
    for s in range(6):
        batch = stream.next_batch()
        versions = batch.policy_version.tolist()
        if mode == "fixed":
            assert set(versions) == {max(0, s - k)}
        else:
            assert all(max(0, s - k) <= v <= s for v in versions)
        for v in set(versions):
            rows = batch.policy_version == v
            ref = _random_policy(task)
            ref.load_state_dict(snapshots[v])
            with torch.no_grad():
                from papergym.agents.rlvr._common import policy_logprobs

                lp, _ = policy_logprobs(ref, batch.tokens[rows], batch.mask[rows])
            assert torch.allclose(lp, batch.behaviour_logprobs[rows], atol=1e-5)
        with torch.no_grad():  # a real update: perturb the weights
            for p in policy.parameters():
                p.add_(0.05 * torch.randn(p.shape, generator=torch.Generator().manual_seed(s)))
        stream.push_policy(policy)
        snapshots[s + 1] = {n: p.clone() for n, p in policy.state_dict().items()}
    assert len(view.ess_series) == 6 and all(0 < e <= 1 for _, e in view.ess_series)
    assert any(e < 1 - 1e-3 for _, e in view.ess_series[k:])


def test_sync_stream_has_unit_weights_and_budget():
    task = _task(responses=16, curve_every=100)
    view = task.train_view(0, task.budget)
    policy = _random_policy(task)
    stream = view.stream(policy, 2, 4)
    batch = stream.next_batch()
    assert batch.log_w.abs().max() < 1e-6 and abs(batch.ess - 1) < 1e-9
    with pytest.raises(RuntimeError):
        stream.next_batch()  # no push yet
    stream.push_policy(policy)
    stream.next_batch()
    stream.push_policy(policy)
    with pytest.raises(BudgetExceeded):
        stream.next_batch()


# ------------------------------------------------------------------ 10. tinylm

def test_kv_cache_matches_full_recompute():
    model = GPT(GPTConfig(28, 32, 2, 2, 40), generator=torch.Generator().manual_seed(0))
    prompts = [[24, 1, 2, 25], [24, 3, 25], [24, 5, 6, 7, 8, 25]] * 5
    a = generate(model, prompts, 12, 26, 27, torch.Generator().manual_seed(9), temperature=1.3)
    b = generate(model, prompts, 12, 26, 27, torch.Generator().manual_seed(9), temperature=1.3,
                 use_cache=False)
    assert torch.equal(a.responses, b.responses)
    assert torch.allclose(a.logprobs, b.logprobs, atol=1e-5)


def test_pergrad_norms_match_a_loop():
    model = GPT(GPTConfig(28, 16, 1, 2, 12), generator=torch.Generator().manual_seed(1))
    tokens = torch.randint(0, 28, (5, 10), generator=torch.Generator().manual_seed(2))
    weights = torch.rand(5, 9, generator=torch.Generator().manual_seed(3))

    def loss(call, row, w):
        logp = torch.log_softmax(call(row[None, :-1]), -1)
        return (logp.gather(-1, row[None, 1:, None]).squeeze(-1) * w[None]).sum()

    norms = per_sample_grad_norms(model, loss, (tokens, weights), chunk=2)
    for i in range(5):
        model.zero_grad()
        loss(model, tokens[i], weights[i]).backward()
        ref = torch.sqrt(sum(p.grad.pow(2).sum() for p in model.parameters()))
        assert abs(float(norms[i]) - float(ref)) < 1e-4 * float(ref)


def test_sft_is_bit_identical_for_one_seed():
    from papergym.envs.rlvr.base_policy import SFTRecipe, train_sft
    from papergym.envs.rlvr.task import tokenizer

    task_def = ModLinear(13)
    cfg = GPTConfig(28, 16, 1, 2, task_def.prompt_length_bound() + 2 + task_def.max_response_tokens)
    recipe = SFTRecipe(max_steps=6, batch_size=8, check_every=3, pool_size=20,
                       validation_prompts=4, target_accuracy=2.0)
    a, _ = train_sft(task_def, tokenizer(), cfg, recipe, seed=3)
    b, _ = train_sft(task_def, tokenizer(), cfg, recipe, seed=3)
    c, _ = train_sft(task_def, tokenizer(), cfg, recipe, seed=4)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)


# ------------------------------------------------------------------ v1: eval set, rules, kwargs

IDS_V1 = [i.replace("-v0", "-v1") for i in IDS]
IDS_V2 = [i.replace("-v0", "-v2") for i in IDS]


def test_v1_eval_set_is_one_sealed_set_for_every_seed():
    from papergym.problem import set_eval_salt

    task = papergym.make_task("papergym/RLVRSubsetSum-v1", tier="smoke", eval_prompts=32)
    prompts = [i.prompt for i in task.eval_set(0)]
    assert prompts == [i.prompt for i in task.eval_set(7)]  # the same for every seed
    assert all(split_of(p) == "eval" for p in prompts) and len(set(prompts)) > 20
    old = papergym.make_task("papergym/RLVRSubsetSum-v0", tier="smoke", eval_prompts=32)
    assert [i.prompt for i in old.eval_set(0)] != [i.prompt for i in old.eval_set(7)]
    try:
        set_eval_salt(bytes(range(16)))  # sealed: the salt changes the set
        assert [i.prompt for i in task.eval_set(0)] != prompts
    finally:
        set_eval_salt(None)


def test_v1_task_arguments_reach_the_sft_recipe_and_its_cache_key():
    from papergym.envs.rlvr.base_policy import sft_entry

    a = papergym.make_task("papergym/RLVRSubsetSum-v1", tier="smoke", corrupt_fraction=0.5,
                           sft_pool_size=321)
    b = papergym.make_task("papergym/RLVRSubsetSum-v1", tier="smoke")
    assert a.recipe.corrupt_fraction == 0.5 and a.recipe.pool_size == 321
    assert b.recipe.corrupt_fraction == 0.3
    keys = [sft_entry(t.id, t.tier, 0, t.task_def, t.tokenizer, t.model_config, t.recipe).config
            for t in (a, b)]
    assert keys[0] != keys[1]
    with pytest.raises(ValueError):
        papergym.make_task("papergym/RLVRSubsetSum-v1", tier="smoke", corrupt_fraction=1.5)
    # standard: 3 SFT bases, one per seed group
    std = papergym.make_task("papergym/RLVRSubsetSum-v1", tier="standard")
    assert [std.base_seed(s) for s in range(5)] == [0, 1, 2, 0, 1]


def test_v1_collapse_rule_is_relative_to_the_base_and_ignores_single_points():
    base = 0.4
    steady = [(0, 0.4), (10, 0.45), (20, 0.5), (30, 0.1), (40, 0.5), (50, 0.48)]
    assert not ev.collapse_relative(steady, base, 0.1, False)  # one bad point is noise
    falling = [(0, 0.4), (10, 0.45), (20, 0.3), (30, 0.25), (40, 0.2)]
    assert ev.collapse_relative(falling, base, 0.1, False)
    assert not ev.collapse_relative(falling, base, 0.25, False)  # within the margin
    assert ev.collapse_relative(steady, base, 0.1, True)  # non-finite always collapses
    # v0's rule fires on a single low last point; v1's does not
    spike = [(0, 0.4), (10, 0.5), (20, 0.5), (30, 0.2)]
    assert ev.collapse_flag(spike, False) and not ev.collapse_relative(spike, base, 0.1, False)


def test_v1_target_needs_a_sustained_crossing():
    curve = [(0, 0.3), (10, 0.5), (20, 0.3), (30, 0.45), (40, 0.46), (50, 0.2)]
    assert ev.sustained_crossing(curve, 0.4, 1) == 10.0
    assert ev.sustained_crossing(curve, 0.4, 2) == 30.0
    assert ev.sustained_crossing(curve, 0.4, 3) is None
    assert ev.sustained_crossing([], 0.4, 2) is None


@pytest.mark.parametrize("env_id", IDS_V1 + IDS_V2)
def test_versioned_envs_pass_check_env_and_name_their_id(env_id):
    from gymnasium.utils.env_checker import check_env

    env = papergym.make(env_id, tier="smoke").unwrapped
    check_env(env, skip_render_check=True)
    env.reset(seed=0)
    with pytest.raises(gym.error.InvalidAction, match=env_id):
        env.step(env.tokenizer.vocab_size)


# ------------------------------------------------------------------ v2: SFT base inside a band



def test_v2_checkpoint_selection_is_closest_to_the_band_centre():
    from papergym.envs.rlvr.base_policy import select_checkpoint

    band = (0.3, 0.5)
    assert select_checkpoint([(25, 0.1), (50, 0.28), (75, 0.43), (100, 0.55)], band) == 2
    tie = [(25, 0.125), (50, 0.375), (75, 0.625), (100, 0.875)]  # exact binary fractions
    assert select_checkpoint(tie, (0.25, 0.75)) == 1  # the earliest of a tie
    assert select_checkpoint([(25, 0.0), (50, 0.05), (75, 0.2)], band) == 2  # never reached
    assert select_checkpoint([(25, 0.1), (50, 0.75)], band) == 0  # a jump over the band


def _scripted_checks(monkeypatch, accuracies):
    from papergym.envs.rlvr import base_policy

    calls = []

    def fake(model, task_def, tokenizer, instances, generator, samples=1, temperature=1.0):
        calls.append((samples, temperature))
        return accuracies[len(calls) - 1]

    monkeypatch.setattr(base_policy, "validation_accuracy", fake)
    return calls


def test_v2_sft_stops_above_the_band_and_returns_the_selected_checkpoint(monkeypatch):
    from papergym.envs.rlvr.base_policy import SFTRecipe, train_sft
    from papergym.envs.rlvr.task import tokenizer

    task_def = ModLinear(13)
    cfg = GPTConfig(28, 16, 1, 2, task_def.prompt_length_bound() + 2 + task_def.max_response_tokens)
    kw = dict(batch_size=8, check_every=2, pool_size=20, validation_prompts=4)
    calls = _scripted_checks(monkeypatch, [0.1, 0.2, 0.42, 0.33, 0.6, 0.9, 0.9, 0.9])
    band = SFTRecipe(max_steps=16, target_band=(0.3, 0.5), check_samples=3,
                     check_temperature=0.6, **kw)
    state, info = train_sft(task_def, tokenizer(), cfg, band, seed=3)
    # stopped at the first check above the band (the 5th, step 10), kept the 3rd (0.42, step 6)
    assert len(calls) == 5 and set(calls) == {(3, 0.6)}
    assert info["sft_steps"] == 6.0 and info["sft_validation_accuracy"] == 0.42
    assert info["sft_last_step"] == 10.0 and info["sft_checks"] == 5.0
    _scripted_checks(monkeypatch, [0.0] * 8)
    fixed, _ = train_sft(task_def, tokenizer(), cfg,
                         SFTRecipe(max_steps=6, target_accuracy=2.0, **kw), seed=3)
    assert all(torch.equal(state[k], fixed[k]) for k in state)  # the weights of step 6
    later, _ = train_sft(task_def, tokenizer(), cfg,
                         SFTRecipe(max_steps=10, target_accuracy=2.0, **kw), seed=3)
    assert not all(torch.equal(state[k], later[k]) for k in state)


def test_v2_sft_without_band_keeps_the_first_crossing_rule(monkeypatch):
    from papergym.envs.rlvr.base_policy import SFTRecipe, train_sft
    from papergym.envs.rlvr.task import tokenizer

    task_def = ModLinear(13)
    cfg = GPTConfig(28, 16, 1, 2, task_def.prompt_length_bound() + 2 + task_def.max_response_tokens)
    calls = _scripted_checks(monkeypatch, [0.1, 0.3, 0.9, 0.9])
    _, info = train_sft(task_def, tokenizer(), cfg,
                        SFTRecipe(max_steps=16, batch_size=8, check_every=2, pool_size=20,
                                  validation_prompts=4, target_accuracy=0.25), seed=3)
    assert len(calls) == 2 and calls[0] == (1, 1.0) and info["sft_steps"] == 4.0


def test_v2_band_arguments_reach_the_recipe_and_its_cache_key():
    from papergym.envs.rlvr.base_policy import sft_entry

    std = papergym.make_task("papergym/RLVRAddScratch-v2", tier="standard")
    assert std.recipe.target_band == (0.3, 0.5) and std.recipe.check_temperature == 0.6
    assert std.task_def.size == 5 and std.recipe.check_every <= 50
    assert std.recipe.validation_prompts * std.recipe.check_samples >= 1024
    v1 = papergym.make_task("papergym/RLVRAddScratch-v1", tier="standard")
    assert v1.recipe.target_band is None and v1.recipe.check_samples == 1
    other = papergym.make_task("papergym/RLVRAddScratch-v2", tier="standard", sft_band_low=0.2,
                               sft_band_high=0.4)
    keys = [sft_entry(t.id, t.tier, 0, t.task_def, t.tokenizer, t.model_config, t.recipe).config
            for t in (std, other)]
    assert keys[0] != keys[1]
    with pytest.raises(ValueError):
        papergym.make_task("papergym/RLVRAddScratch-v2", tier="smoke", sft_band_high=None)


