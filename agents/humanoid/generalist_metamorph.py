"""MetaMorph-style generalist (Gupta et al., ICLR 2022; the paper's C6 baseline): explicit
morphology instead of XHugWBC's embodiment graph.

  tokens  e_i = tanh(Linear([q, qdot, a_prev history, I, m_i])) + W_pos  (one shared embedding;
          m_i = the slot's morphology descriptors, ``morph_obs=True``)
  encoder Transformer, every layer global over the graph vertices (no M = I + A mask)
  decoder mu_i = MLP([Z_i, o^g]), one MLP shared by all slots (MetaMorph's limb decoder)
  critic  the same encoder, per-node value on [Z_i, o^g, privileged], mean over present nodes
Same PPO, randomization, sizes (D = 64, 2 layers, 4 heads) and budget as XHugWBC [recon]; no
state estimator (MetaMorph has none). The policy asks the problem to evaluate it with the
morphology descriptors in its observation (``GeneralistPolicy.env_options``).
"""

from __future__ import annotations

import torch
from torch import nn

from papergym.agent import Agent

from .ppo_core import ActorCritic, HumanoidPPOConfig, Parts, SharedEmbedding, train_ppo
from .xhugwbc_lite import GraphTransformer


def _encoders(parts: Parts, dim: int, layers: int, heads: int) -> GraphTransformer:
    """The actor's encoder (member 0) and the critic's (member 1), run as one batched network."""
    d_tok = parts.h * 3 + 1 + parts.m
    return GraphTransformer(parts.j, d_tok, dim, layers, heads, "none",
                            embed=SharedEmbedding(d_tok, dim, members=2), members=2)


class MetaMorphActorCritic(ActorCritic):
    def __init__(self, parts: Parts, d_priv: int, dim: int, layers: int, heads: int) -> None:
        super().__init__()
        if parts.m == 0:
            raise ValueError("MetaMorph needs the morphology descriptors (morph_obs=True)")
        self.parts = parts
        self.encoders = _encoders(parts, dim, layers, heads)
        self.decoder = nn.Sequential(nn.Linear(dim + parts.n_global, dim), nn.Tanh(),
                                     nn.Linear(dim, 1))
        nn.init.orthogonal_(self.decoder[-1].weight, 0.01)
        nn.init.zeros_(self.decoder[-1].bias)
        self.value_head = nn.Sequential(nn.Linear(dim + parts.n_global + d_priv, dim), nn.Tanh(),
                                        nn.Linear(dim, 1))

    def _tokens(self, obs: torch.Tensor) -> torch.Tensor:
        p = self.parts
        return torch.cat([p.tokens(obs), p.morphology(obs)], -1)

    def forward(self, obs, privileged):
        z_actor, z_critic = self._encode(obs)
        return (*self._decode(z_actor, obs),
                self.node_value(self.value_head, z_critic, obs, privileged))

    def actor(self, obs):
        return self._decode(self._encode(obs)[0], obs)

    def value(self, obs, privileged):
        return self.node_value(self.value_head, self._encode(obs)[1], obs, privileged)

    def _encode(self, obs):
        p = self.parts
        return self.encoders(self._tokens(obs), p.mask(obs), p.present(obs))

    def _decode(self, z, obs):
        """One shared limb decoder on [Z_i, o^g] for every slot; (means, no estimate)."""
        p = self.parts
        ctx = p.global_obs(obs)[:, None].expand(-1, z.shape[1], -1)
        mean = self.decoder(torch.cat([z, ctx], -1)).squeeze(-1)
        return mean * p.present(obs), None


class GeneralistMetaMorph(Agent):
    """MetaMorph-style generalist: morphology tokens, global Transformer, shared limb decoder."""

    id = "generalist_metamorph"
    family = "humanoid"
    role = "baseline"
    paper = "xue2026xhugwbc"

    class Config(HumanoidPPOConfig):
        dim: int = 64
        layers: int = 2
        heads: int = 4

    def solve(self, view, budget, seed):
        c = self.config
        return train_ppo(view, budget, seed,
                         lambda parts, dp, de: MetaMorphActorCritic(parts, dp, c.dim, c.layers,
                                                                    c.heads),
                         c, env_options={"morph_obs": True})
