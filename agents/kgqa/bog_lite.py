"""BoG-lite: Backjump-on-Graph without an LLM (Zhang et al., ICML 2026) [recon from the abstract].

Policy: the four-operation network of ``common.BackjumpPolicyNet`` (candidate scorer ->
FORWARD(i), history scorer -> BACKJUMP(j), global MLP -> YIELD / HALT; masked softmax).

Stage 1, SFT (the abstract's "synthetic data containing the atomic operations"): behaviour
cloning on train-question trajectories, half clean gold walks (FORWARD ... YIELD), half with
a deliberate wrong branch (the most similar non-gold relation, often a near miss) that runs
into a (possibly delayed) dead end, then BACKJUMP to the entry before the wrong choice and
the gold continuation. Cross-entropy, Adam 1e-3.

Stage 2, RL with the paper's hybrid reward: answer correctness minus the penalty on redundant
transitions (the Env's -0.01 per step is added back: the paper names no step penalty);
group-relative policy gradient; per question G rollouts (all questions of an update sampled in
lockstep through the view's episode batch), advantage A_i = R_i - mean_G R, not divided by
std_G R (``scale_rewards``, as Dr. GRPO, Liu et al. 2025): a group whose answers tie then gets
advantages of the penalties' size (0.05 per redundant move), where the std division turned
one-step path-length differences into +-1 and RL learned to stop backjumping. Clipped ratio
objective (0.2)
with ``ppo_epochs`` passes per batch; KL penalty (k3 estimator) to the frozen SFT policy;
Adam 3e-4. The abstract does not name the RL algorithm; GRPO follows Explore-on-Graph's
recipe [pred]. Scaled down: updates x questions per update set by the benchmark spec; RL
stops early once the trial's ``train_kg_calls`` budget could not pay a full update.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import torch

from papergym.agent import Agent, AgentConfig
from papergym.agents.kgqa.common import (
    OBS_KEYS,
    NetPolicy,
    behaviour_clone,
    build_sft_pairs,
    seeded_net,
    stack_obs,
)
from papergym.envs.kgqa.backjump import STEP_PENALTY
from papergym.ppo import clipped_surrogate, group_advantages, kl_k3


def hybrid_advantages(returns: np.ndarray, group: torch.Tensor, scale_rewards: bool = False
                      ) -> torch.Tensor:
    """A_i = R_i - mean_G R over each group G of rollouts of one question (Dr. GRPO); with
    ``scale_rewards`` divided by std_G R + 1e-6 (GRPO). Unscaled, a group whose answers tie
    gets advantages no larger than its penalty differences."""
    if scale_rewards:
        return group_advantages(torch.as_tensor(returns), group, unbiased=False)
    r = torch.as_tensor(returns, dtype=torch.float32)
    _, index = torch.unique(torch.as_tensor(group), return_inverse=True)
    k = int(index.max()) + 1 if index.numel() else 0
    count = torch.zeros(k).index_add_(0, index, torch.ones_like(r))
    return r - (torch.zeros(k).index_add_(0, index, r) / count)[index]


class BoGLite(Agent):
    id = "bog_lite"
    family = "kgqa"
    role = "method"
    paper = "zhang2026bog"

    class Config(AgentConfig):
        hidden: int = 64
        sft_epochs: int = 5
        sft_lr: float = 1e-3
        wrong_branch_frac: float = 0.5
        batch_size: int = 64
        rl_updates: int = 300
        questions_per_update: int = 16
        group_size: int = 8
        clip: float = 0.2
        kl_coef: float = 0.01
        rl_lr: float = 3e-4
        ppo_epochs: int = 2
        max_train_questions: int | None = None
        sft_only: bool = False  # return the stage-1 checkpoint (for the RL-vs-SFT claim)
        step_penalty: bool = False  # keep the Env's -0.01 per step in the RL return
        scale_rewards: bool = False  # divide advantages by the group std (GRPO as first shipped)

    def solve(self, view: Any, budget: Any, seed: int) -> NetPolicy:
        cfg = self.config
        rng = np.random.default_rng([seed, 2])
        gen = torch.Generator().manual_seed(seed)
        questions = view.train[: cfg.max_train_questions]
        # Stage 1: SFT on synthetic trajectories containing the four operations.
        net = seeded_net(cfg.hidden, seed)
        pairs = build_sft_pairs(view, questions, rng, wrong_frac=cfg.wrong_branch_frac)
        behaviour_clone(net, pairs, cfg.sft_epochs, cfg.sft_lr, cfg.batch_size, gen)
        if cfg.sft_only or cfg.rl_updates == 0:
            return NetPolicy(net)
        # Stage 2: group-relative RL with the hybrid reward.
        reference = copy.deepcopy(net).eval()
        self.history: list[tuple[float, int]] = []  # (mean rollout return, steps) per update
        optimizer = torch.optim.Adam(net.parameters(), lr=cfg.rl_lr)
        per_update = cfg.questions_per_update * cfg.group_size * view.call_budget
        for _ in range(cfg.rl_updates):
            if budget.remaining("train_kg_calls") < per_update:
                break  # the tier's training budget is spent (the problem would refuse more)
            batch = rng.choice(len(questions), size=min(cfg.questions_per_update,
                                                        len(questions)), replace=False)
            # G rollouts per question, all stepped in lockstep (one forward pass per step)
            chosen = [questions[qi] for qi in batch.tolist() for _ in range(cfg.group_size)]
            trajectories, returns = self._rollouts(net, view, chosen, gen, cfg.step_penalty)
            observations, actions, advantages, group_means = [], [], [], []
            group = torch.arange(len(chosen)) // cfg.group_size
            adv = hybrid_advantages(returns, group, cfg.scale_rewards)
            for start in range(0, len(chosen), cfg.group_size):
                r = returns[start:start + cfg.group_size]
                group_means.append(r.mean())
                if np.all(r == r[0]):
                    continue  # no signal in this group
                for (obs_list, act_list), a in zip(trajectories[start:start + cfg.group_size],
                                                   adv[start:start + cfg.group_size].tolist()):
                    observations += obs_list
                    actions += act_list
                    advantages += [a] * len(act_list)
            self.history.append((float(np.mean(group_means)) if group_means else 0.0,
                                 len(actions)))
            if not actions:
                continue
            obs_t = stack_obs(observations)
            act_t = torch.as_tensor(actions, dtype=torch.long)
            adv_t = torch.as_tensor(advantages, dtype=torch.float32)
            with torch.no_grad():
                old_logp = torch.log_softmax(net(obs_t), -1).gather(1, act_t[:, None])[:, 0]
                ref_logp = torch.log_softmax(reference(obs_t), -1).gather(1, act_t[:, None])[:, 0]
            for _ in range(cfg.ppo_epochs):
                logp = torch.log_softmax(net(obs_t), -1).gather(1, act_t[:, None])[:, 0]
                policy_loss = clipped_surrogate(logp, old_logp, adv_t, cfg.clip)
                kl = kl_k3(logp, ref_logp).mean()
                loss = policy_loss + cfg.kl_coef * kl
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
                optimizer.step()
        return NetPolicy(net.eval())

    @staticmethod
    def _rollouts(net: Any, view: Any, questions: list, gen: torch.Generator,
                  step_penalty: bool = True,
                  ) -> tuple[list[tuple[list[dict[str, np.ndarray]], list[int]]], np.ndarray]:
        """Sample one episode per question from the policy, all in lockstep: per episode its
        (observations, actions) and its return under the hybrid reward (without the Env's
        per-step penalty unless ``step_penalty``)."""
        batch = view.episodes(questions)
        trajectories: list[tuple[list, list]] = [([], []) for _ in questions]
        returns = np.zeros(len(questions))
        while True:
            active = batch.active()
            if not active:
                break
            obs = batch.observations()
            with torch.no_grad():
                probs = torch.softmax(net({k: torch.as_tensor(obs[k], dtype=torch.float32)
                                           for k in OBS_KEYS}), -1)
            actions = torch.multinomial(probs, 1, generator=gen)[:, 0].numpy()
            rewards = batch.step(actions)
            for row, i in enumerate(active):
                trajectories[i][0].append({k: obs[k][row] for k in OBS_KEYS})
                trajectories[i][1].append(int(actions[row]))
                returns[i] += rewards[row] + (0.0 if step_penalty else STEP_PENALTY)
        return trajectories, np.round(returns, 9)  # ties stay ties after adding back
