"""GCN generalist (the paper's GNN policy variant): same training, tokens and node-wise decoder
as XHugWBC, with stacked graph convolutions H' = tanh(D^-1/2 M D^-1/2 H W) over the structural
mask M = I + A (Kipf & Welling 2017, eq. 2) and no positional embedding. 2 layers, D = 64 [recon].
"""

from __future__ import annotations

import torch
from torch import nn

from papergym.agent import Agent

from .ppo_core import ActorCritic, HumanoidPPOConfig, NodeDecoder, Parts, TokenEmbedding, train_ppo


class GCNEncoder(nn.Module):
    def __init__(self, n_nodes: int, d_token: int, dim: int, layers: int) -> None:
        super().__init__()
        self.embed = TokenEmbedding(n_nodes, d_token, dim)
        self.layers = nn.ModuleList(nn.Linear(dim, dim) for _ in range(layers))

    def forward(self, tokens: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        deg = mask.sum(-1).clamp(min=1)
        norm = deg.rsqrt()
        a_hat = norm[:, :, None] * mask * norm[:, None, :]  # D^-1/2 M D^-1/2
        h = self.embed(tokens)[0]  # one member
        for layer in self.layers:
            h = torch.tanh(a_hat @ layer(h))
        return h


class GCNActorCritic(ActorCritic):
    def __init__(self, parts: Parts, d_priv: int, d_est: int, dim: int, layers: int,
                 estimator: bool) -> None:
        super().__init__()
        self.parts = parts
        j, d_tok = parts.j, parts.h * 3 + 1
        self.encoder = GCNEncoder(j, d_tok, dim, layers)
        self.estimator = (nn.Sequential(nn.Linear(j * dim, 128), nn.ELU(), nn.Linear(128, d_est))
                          if estimator else None)
        self.decoder = NodeDecoder(j, dim, parts.n_global + (d_est if estimator else 0))
        self.critic_encoder = GCNEncoder(j, d_tok, dim, layers)
        self.value_head = nn.Sequential(nn.Linear(dim + parts.n_global + d_priv, dim), nn.Tanh(),
                                        nn.Linear(dim, 1))

    def actor(self, obs):
        p = self.parts
        z = self.encoder(p.tokens(obs), p.mask(obs))
        context = p.global_obs(obs)
        est = None
        if self.estimator is not None:
            # Flatten(Z) over graph vertices only: absent slots cannot reach the actions.
            est = self.estimator((z * p.vertex(obs)[..., None]).flatten(1))
            context = torch.cat([context, est], -1)
        return self.decoder(z, context), est

    def value(self, obs, privileged):
        p = self.parts
        z = self.critic_encoder(p.tokens(obs), p.mask(obs))
        return self.node_value(self.value_head, z, obs, privileged)


class GeneralistGCN(Agent):
    """GCN generalist: XHugWBC's pipeline with a graph-convolution encoder."""

    id = "generalist_gcn"
    family = "humanoid"
    role = "baseline"
    paper = "xue2026xhugwbc"

    class Config(HumanoidPPOConfig):
        dim: int = 64
        layers: int = 2
        estimator: bool = True

    def solve(self, view, budget, seed):
        c = self.config
        return train_ppo(view, budget, seed,
                         lambda parts, dp, de: GCNActorCritic(parts, dp, de, c.dim, c.layers,
                                                              c.estimator), c)
