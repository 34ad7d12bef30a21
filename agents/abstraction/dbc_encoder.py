"""DBC-style learned encoder (Zhang et al. 2021, "Learning invariant representations for RL
without reconstruction"), scaled down, with sample access only.

One-hot state -> MLP 2 x 64 -> embedding e (dim 8); a latent Gaussian dynamics head
(e, a) -> N(mu, sigma) of the next embedding and a reward head (e, a) -> r. Loss on random pairs
(i, j) of a batch (DBC eq. 4):
    (||e_i - e_j||_1 - |r_i - r_j| - gamma W2(N(mu_i, sigma_i), N(mu_j, sigma_j)))^2
with the target detached, plus the reward MSE and the Gaussian NLL of the detached next
embedding. Adam 1e-3, batch 256, on N = ``sample_factor`` |S| |A| uniformly drawn transitions.
Then complete linkage on the embedding distances, within each observed label (the samples carry
L(s)), cut at epsilon tuned by the one protocol as ``metric_cluster``'s (the default 0 first,
then its own draws from log-U[1e-3, 0.3]), each candidate scored by the problem on its
validation MDPs, which the routine sees through their samplers only.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from papergym.agent import Agent, AgentConfig
from papergym.agents.abstraction.common import EPS_RANGE, complete_linkage, tuned_routine
from papergym.tuning import Tuned


class Encoder(nn.Module):
    def __init__(self, n_states: int, n_actions: int, hidden: int, dim: int) -> None:
        super().__init__()
        self.n_actions = n_actions
        self.embed = nn.Sequential(nn.Linear(n_states, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                                   nn.ReLU(), nn.Linear(hidden, dim))
        self.dynamics = nn.Sequential(nn.Linear(dim + n_actions, hidden), nn.ReLU(),
                                      nn.Linear(hidden, 2 * dim))
        self.reward = nn.Sequential(nn.Linear(dim + n_actions, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def heads(self, e: torch.Tensor, a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        x = torch.cat([e, nn.functional.one_hot(a, self.n_actions).float()], dim=1)
        mu, log_sigma = self.dynamics(x).chunk(2, dim=1)
        return mu, log_sigma.clamp(-5, 2).exp(), self.reward(x).squeeze(1)


def train_encoder(sampler: Any, gamma: float, steps: int, seed: int, hidden: int = 64, dim: int = 8,
                  batch: int = 256, lr: float = 1e-3) -> tuple[np.ndarray, np.ndarray]:
    """(embeddings (S, dim), observed unsafe labels (S,)) from the sampler's whole budget."""
    S, A = int(sampler.n_states), int(sampler.n_actions)
    rng = np.random.default_rng([seed, 41])
    n = int(sampler.remaining())
    states = rng.integers(0, S, size=n)
    actions = rng.integers(0, A, size=n)
    rewards, nexts, unsafe = (np.asarray(x) for x in sampler.sample(states, actions))
    labels = np.zeros(S, dtype=bool)
    labels[states] = unsafe
    torch.manual_seed(seed)
    net = Encoder(S, A, hidden, dim)
    optimizer = torch.optim.Adam(net.parameters(), lr=lr)
    eye = torch.eye(S)
    s_t, a_t = torch.as_tensor(states), torch.as_tensor(actions)
    r_t, n_t = torch.as_tensor(rewards, dtype=torch.float32), torch.as_tensor(nexts)
    gen = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        idx = torch.randint(0, n, (batch,), generator=gen)
        e = net.embed(eye[s_t[idx]])
        mu, sigma, r_hat = net.heads(e, a_t[idx])
        with torch.no_grad():
            e_next = net.embed(eye[n_t[idx]])
        perm = torch.randperm(batch, generator=gen)
        w2 = torch.sqrt(((mu - mu[perm]) ** 2).sum(1) + ((sigma - sigma[perm]) ** 2).sum(1) + 1e-12)
        target = ((r_t[idx] - r_t[idx][perm]).abs() + gamma * w2).detach()
        bisim = ((e - e[perm]).abs().sum(1) - target).pow(2).mean()
        reward_loss = (r_hat - r_t[idx]).pow(2).mean()
        nll = (((e_next - mu) / sigma) ** 2 / 2 + sigma.log()).sum(1).mean()
        loss = bisim + reward_loss + nll
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with torch.no_grad():
        return net.embed(eye).numpy().astype(float), labels


def embedding_distance(e: np.ndarray) -> np.ndarray:
    return np.abs(e[:, None, :] - e[None, :, :]).sum(axis=2)


class DBCRoutine:
    access = "samples"

    def __init__(self, eps: float, steps: int, seed: int) -> None:
        self.eps, self.steps, self.seed, self.calls = eps, steps, seed, 0

    def __call__(self, sampler: Any) -> np.ndarray:
        self.calls += 1
        e, labels = train_encoder(sampler, float(sampler.gamma), self.steps, self.seed + 7919 * self.calls)
        v_range = 1.0 / (1.0 - float(sampler.gamma))
        return complete_linkage(embedding_distance(e), self.eps * v_range, groups=labels)


class DBCEncoder(Tuned, Agent):
    id = "dbc_encoder"
    family = "abstraction"
    role = "baseline"
    paper = "zhang2021dbc"
    problems = ("papergym/StateAbstraction-v*",)
    search_space = {"eps": EPS_RANGE}

    class Config(AgentConfig):
        steps: int = 1500
        eps: float = 0.0  # times V_range
        tune: bool = True  # tune eps by the protocol when the view grants tuning runs

    def solve(self, view: Any, budget: Any, seed: int) -> DBCRoutine:
        # each candidate routine trains the same encoders (its call count seeds them), so the
        # candidates differ in eps only
        return tuned_routine(self, view, lambda c: DBCRoutine(c.eps, c.steps, seed))
