"""XHugWBC generalist (Xue et al., ICML 2026): PPO over physics-consistently randomized bodies
with a morphology-aware Transformer policy over aligned joint tokens.

Architecture (paper sec. 3.3; sizes recon: D = 64, 2 layers, 4 heads):
  tokens  X = NodeLinear(Linear([q, qdot, a_prev history, I]_i)) + W_pos        (per slot)
  encoder layer 1 attends along the embodiment graph only (attention mask M = I + A),
          later layers attend globally over the present/graph slots (main-text order;
          ``mask_order="last"`` puts the graph-masked layer last, the appendix's order)
  estimator P = MLP(Flatten(Z)) -> privileged (base velocity, height), MSE loss
  decoder  mu_i = NodeLinear_i([Z_i, P, o^g])  (node-wise action decoding)
  critic   same encoder architecture, own weights (run with the actor's as one two-member
           batched network), per-node value on [Z_i, o^g, privileged], value = mean over
           present nodes (asymmetric critic).
Scaled down: PPO for the problem's env_steps budget (the paper: >= 1e8 steps on GPU).
PPO update: rsl_rl's (the legged-locomotion PPO HugWBC builds on): 5 epochs x 4 minibatches of
512 with the lr adapted to a KL of 0.01 from 1e-3, instead of CleanRL's 10 x 64 of 32 at a
fixed 3e-4: less than half the learner's cost per step (``HumanoidPPOConfig``).
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from papergym.agent import Agent

from .ppo_core import (
    ActorCritic,
    HumanoidPPOConfig,
    Linears,
    NodeDecoder,
    NodeLinear,
    Parts,
    TokenEmbedding,
    train_ppo,
)


class MaskedSelfAttention(nn.Module):
    """Multi-head self-attention with a per-sample boolean block mask (B, J, J), for G members
    at once: (G, B, J, D) -> (G, B, J, D)."""

    def __init__(self, dim: int, heads: int, members: int = 1) -> None:
        super().__init__()
        self.heads, self.d_head = heads, dim // heads
        self.qkv = Linears(members, dim, 3 * dim)
        self.out = Linears(members, dim, dim)

    def forward(self, x: torch.Tensor, block: torch.Tensor) -> torch.Tensor:
        g, b, j, d = x.shape
        q, k, v = (self.qkv(x).view(g, b, j, 3, self.heads, self.d_head)
                   .permute(3, 0, 1, 4, 2, 5))  # each (G, B, heads, J, d_head)
        scores = (q @ k.transpose(-1, -2)) * self.d_head ** -0.5
        scores = scores.masked_fill(block[None, :, None], float("-inf"))
        # softmax written out: torch's kernel is slow for rows of 13-32 entries on CPU
        weights = (scores - scores.amax(-1, keepdim=True).detach()).exp()
        weights = weights / weights.sum(-1, keepdim=True)
        return self.out((weights @ v).transpose(2, 3).reshape(g, b, j, d))


class LayerNorms(nn.Module):
    """Layer normalization over the last dim with a gain and bias per member: (G, B, J, D)."""

    def __init__(self, members: int, dim: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(members, 1, 1, dim))
        self.bias = nn.Parameter(torch.zeros(members, 1, 1, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.addcmul(self.bias, F.layer_norm(x, x.shape[-1:]), self.weight)


class GraphTransformer(nn.Module):
    """Pre-norm Transformer encoder whose first (or last) layer is masked by M = I + A
    (``mask_order="none"``: every layer global, as MetaMorph's). ``embed`` replaces XHugWBC's
    node-specific token embedding; it is called as ``embed(tokens, nodes)``.

    ``members`` encoders with their own weights run on the same tokens as one batched network
    (the actor's and the critic's encoder): tokens (B, J, i) -> Z (G, B, J, D), member g's Z
    exactly what a single encoder with member g's weights computes (tested).

    Slots that are a graph vertex of no body in the batch (absent limbs of the aligned layout)
    can neither attend nor be attended to, so the encoder runs on the other slots only and
    returns Z = 0 for them: the same Z on every vertex, at a fraction of the cost (7 of 13
    slots on the planar walkers). ``prune = False`` computes every slot (the tests' oracle)."""

    prune: bool = True

    def __init__(self, n_nodes: int, d_token: int, dim: int, layers: int, heads: int,
                 mask_order: str, positional: bool = True, embed: nn.Module | None = None,
                 members: int = 1) -> None:
        super().__init__()
        self.embed = embed if embed is not None else TokenEmbedding(n_nodes, d_token, dim, members)
        self.pos = nn.Parameter(torch.zeros(members, 1, n_nodes, dim)) if positional else None
        self.attn = nn.ModuleList(MaskedSelfAttention(dim, heads, members) for _ in range(layers))
        self.ff = nn.ModuleList(nn.Sequential(Linears(members, dim, 2 * dim), nn.GELU(),
                                              Linears(members, 2 * dim, dim))
                                for _ in range(layers))
        self.ln1 = nn.ModuleList(LayerNorms(members, dim) for _ in range(layers))
        self.ln2 = nn.ModuleList(LayerNorms(members, dim) for _ in range(layers))
        self.masked_layer = {"first": 0, "last": layers - 1, "none": None}[mask_order]

    def forward(self, tokens: torch.Tensor, mask: torch.Tensor, present: torch.Tensor) -> torch.Tensor:
        # Graph vertices: present slots and locked trunk joints (rows of M with an edge).
        vertex = (mask.sum(-1) > 1) | (present > 0)
        b, j = vertex.shape
        nodes = vertex.any(0).nonzero().squeeze(-1) if self.prune else None
        if nodes is not None and len(nodes) == j:
            nodes = None
        if nodes is not None:
            tokens, vertex = tokens[:, nodes], vertex[:, nodes]
            mask = mask[:, nodes][:, :, nodes]
        x = self.embed(tokens, nodes)
        if self.pos is not None:
            x = x + (self.pos if nodes is None else self.pos[:, :, nodes])
        graph_block = mask <= 0  # True = may not attend
        # Global layers attend to graph vertices only.
        global_block = ~vertex[:, None, :].expand_as(graph_block)
        eye = torch.eye(mask.shape[-1], dtype=torch.bool)
        for k, (attn, ff, ln1, ln2) in enumerate(zip(self.attn, self.ff, self.ln1, self.ln2)):
            block = graph_block if k == self.masked_layer else global_block & ~eye
            x = x + attn(ln1(x), block)
            x = x + ff(ln2(x))
        if nodes is None:
            return x
        return x.new_zeros(x.shape[0], b, j, x.shape[-1]).index_copy(2, nodes, x)


class TransformerActorCritic(ActorCritic):
    def __init__(self, parts: Parts, d_priv: int, d_est: int, dim: int, layers: int, heads: int,
                 mask_order: str, estimator: bool) -> None:
        super().__init__()
        self.parts = parts
        j, d_tok = parts.j, parts.h * 3 + 1
        # the actor's encoder (member 0) and the critic's (member 1): same architecture, own weights
        self.encoders = GraphTransformer(j, d_tok, dim, layers, heads, mask_order, members=2)
        self.estimator = (nn.Sequential(nn.Linear(j * dim, 128), nn.ELU(), nn.Linear(128, d_est))
                          if estimator else None)
        d_ctx = parts.n_global + (d_est if estimator else 0)
        self.decoder = NodeDecoder(j, dim, d_ctx)
        self.value_head = nn.Sequential(nn.Linear(dim + parts.n_global + d_priv, dim), nn.Tanh(),
                                        nn.Linear(dim, 1))

    def forward(self, obs, privileged):
        p = self.parts
        z_actor, z_critic = self.encoders(p.tokens(obs), p.mask(obs), p.present(obs))
        return (*self._decode(z_actor, obs),
                self.node_value(self.value_head, z_critic, obs, privileged))

    def actor(self, obs):
        p = self.parts
        return self._decode(self.encoders(p.tokens(obs), p.mask(obs), p.present(obs))[0], obs)

    def value(self, obs, privileged):
        p = self.parts
        z = self.encoders(p.tokens(obs), p.mask(obs), p.present(obs))[1]
        return self.node_value(self.value_head, z, obs, privileged)

    def _decode(self, z, obs):
        """Node-wise action means from the actor's Z, and the state estimate P."""
        p = self.parts
        context = p.global_obs(obs)
        est = None
        if self.estimator is not None:
            # Flatten(Z) over graph vertices only: absent slots cannot reach the actions.
            est = self.estimator((z * p.vertex(obs)[..., None]).flatten(1))
            context = torch.cat([context, est], -1)
        return self.decoder(z, context), est


class XHugWBCLite(Agent):
    """XHugWBC generalist: graph-masked Transformer + state estimator, PPO on the training pool."""

    id = "xhugwbc_lite"
    family = "humanoid"
    role = "method"
    paper = "xue2026xhugwbc"

    class Config(HumanoidPPOConfig):
        dim: int = 64
        layers: int = 2
        heads: int = 4
        mask_order: Literal["first", "last"] = "first"
        estimator: bool = True

    def solve(self, view, budget, seed):
        c = self.config

        def make_net(parts, d_priv, d_est):
            return TransformerActorCritic(parts, d_priv, d_est, c.dim, c.layers, c.heads,
                                          c.mask_order, c.estimator)

        return train_ppo(view, budget, seed, make_net, c)


__all__ = ["XHugWBCLite", "GraphTransformer", "NodeLinear"]
