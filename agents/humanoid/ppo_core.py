"""CleanRL-style PPO shared by the humanoid generalists (single file, top to bottom).

A vector env of metered envs from the problem (``view.make_vector_env``: one call steps all of
them, charged to the problem's ``env_steps`` budget; same-step autoreset, the sub-envs'
episodes go on from their first reset seeds) trained with the shared PPO arithmetic of
:mod:`papergym.ppo` (GAE, clipped surrogate, clipped value loss, return scaling, the
KL-adaptive learning rate) and CleanRL's ``ppo_continuous_action`` recipe: the observation
normalizer is updated with every observation the policy acts on, rewards are divided by the
running std of the discounted return, value clipping, 2,048-sample rollouts (8 envs x 256
steps); the update is rsl_rl's (5 epochs x 4 minibatches, KL-adaptive learning rate; see
:class:`HumanoidPPOConfig`). Humanoid specifics: asymmetric critic (privileged inputs from
``info["privileged"]``), optional state-estimator loss (MSE to ``info["estimator_target"]``),
masked Gaussian log-likelihood over present slots only. Also the pieces the graph policies
share: the observation splitter, the observation normalizer, per-slot token embedding and
node-wise decoder.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import torch
from torch import nn

from papergym.ppo import (
    PPOConfig,
    ReturnScaler,
    RunningMeanStd,
    adaptive_lr,
    anneal_lr,
    clipped_surrogate,
    clipped_value_loss,
    diag_gaussian_kl,
    gae,
    kl_k3,
    normalize,
    set_lr,
    torch_threads,
)
from papergym.problem import EVAL_SEED_OFFSET


class HumanoidPPOConfig(PPOConfig):
    """CleanRL's defaults (:class:`papergym.ppo.PPOConfig`) with the 2,048-sample rollout split
    over 8 envs, the update of the legged-locomotion PPO that HugWBC builds on (rsl_rl, Rudin
    et al. 2022: 5 epochs x 4 minibatches, lr 1e-3 adapted to a KL of 0.01 per minibatch), plus
    the weight of the state-estimator loss and the initial exploration noise.

    Actions are joint targets (a = 1 is half a joint's range, ~1.3 rad on a hip), so CleanRL's
    initial std of 1.0 (0.6 here before) makes every rollout a flail; with std 0.2 the policy
    balances (walker2d_v5, pushes of up to 0.5 m/s, 400-step episodes, 10^5 steps: return 425
    vs 134 for a = 0), with std 0.6 it did not (163).

    The update was CleanRL's 10 epochs x 64 minibatches of 32 samples (640 optimizer steps per
    rollout, 6-8x the environment's cost per step, most of it per-call overhead); it is now
    rsl_rl's 5 epochs x 4 minibatches of 512 (20 steps per rollout: batched matmuls, 1.9x the
    environment for the MLP generalist). Fewer steps need larger ones: with CleanRL's fixed
    3e-4 annealed, 5 x 4 did not learn w2v_h0 zero-shot in 10^5 steps (-23 [-43, -2] vs a = 0),
    with rsl_rl's adaptive 1e-3 it beats a = 0 on all three held-out bodies (+272, +251, +292;
    CleanRL's 10 x 64: +299, +138, +338; MLP generalist, pool of 16, seed 0, 8 episodes).
    """

    n_envs: int = 8
    n_steps: int = 256
    epochs: int = 5
    minibatches: int = 4
    lr: float = 1e-3  # the start of the adaptive schedule (rsl_rl's)
    anneal_lr: bool = False  # the KL-adaptive schedule replaces it
    desired_kl: float | None = 0.01
    estimator_coef: float = 1.0
    threads: int | None = 1  # torch intra-op threads while training (None: torch's setting)
    init_log_std: float = -1.6  # std 0.2 of the joint-target actions at the start
    # the training pool's morphology randomization ("physics" or "naive", the paper's C3
    # ablation); None keeps the problem's
    randomization: str | None = None


# --------------------------------------------------------------------------- observation parts


class Parts:
    """Split flat observations (B, obs) into the tensors the networks use."""

    def __init__(self, layout: dict[str, int]) -> None:
        self.j, self.h = layout["n_slots"], layout["history"]
        self.g, self.c = layout["n_globals"], layout["n_command"]
        j, h, g, c = self.j, self.h, self.g, self.c
        self.s_joint = slice(0, h * j * 3)
        self.s_glob = slice(self.s_joint.stop, self.s_joint.stop + h * g)
        self.s_pres = slice(self.s_glob.stop, self.s_glob.stop + j)
        self.s_cmd = slice(self.s_pres.stop, self.s_pres.stop + c)
        self.s_adj = slice(self.s_cmd.stop, self.s_cmd.stop + j * j)
        self.m = layout.get("n_morph", 0)  # morphology descriptors per slot (morph_obs=True)
        self.s_morph = slice(self.s_adj.stop, self.s_adj.stop + j * self.m)
        self.size = self.s_morph.stop
        self.continuous = np.r_[np.arange(self.s_joint.start, self.s_glob.stop),
                                np.arange(self.s_cmd.start, self.s_cmd.stop),
                                np.arange(self.s_morph.start, self.s_morph.stop)]

    def tokens(self, obs: torch.Tensor) -> torch.Tensor:
        """(B, J, H*3 + 1): per-slot history of (q, 0.1 qdot, previous action) and the flag I."""
        b = obs.shape[0]
        joint = obs[:, self.s_joint].reshape(b, self.h, self.j, 3).permute(0, 2, 1, 3)
        return torch.cat([joint.reshape(b, self.j, self.h * 3), self.present(obs)[..., None]], -1)

    def morphology(self, obs: torch.Tensor) -> torch.Tensor:
        """(B, J, n_morph): the per-slot morphology descriptors (empty without morph_obs)."""
        return obs[:, self.s_morph].reshape(-1, self.j, self.m)

    def present(self, obs: torch.Tensor) -> torch.Tensor:
        return obs[:, self.s_pres]

    def vertex(self, obs: torch.Tensor) -> torch.Tensor:
        """Graph vertices: present slots and locked trunk joints (rows of M with an edge)."""
        m = self.mask(obs)
        return ((m.sum(-1) > 1) | (self.present(obs) > 0)).to(obs.dtype)

    def mask(self, obs: torch.Tensor) -> torch.Tensor:
        """M = I + A as (B, J, J)."""
        return obs[:, self.s_adj].reshape(-1, self.j, self.j)

    def global_obs(self, obs: torch.Tensor) -> torch.Tensor:
        """o^g: latest globals (angular velocity / gravity) and the command."""
        glob = obs[:, self.s_glob].reshape(-1, self.h, self.g)[:, -1]
        return torch.cat([glob, obs[:, self.s_cmd]], -1)

    @property
    def n_global(self) -> int:
        return self.g + self.c


class ObsNorm:
    """Running mean/variance of the continuous observation entries (binary parts untouched),
    clipped to +-10 after normalization, as gymnasium's ``NormalizeObservation``."""

    def __init__(self, index: np.ndarray) -> None:
        self.index = index
        self.stats = RunningMeanStd(shape=(len(index),))

    def update(self, x: np.ndarray) -> None:
        self.stats.update(np.asarray(x, np.float64)[:, self.index])

    def __call__(self, x: np.ndarray) -> np.ndarray:
        out = np.array(x, dtype=np.float32, copy=True)
        out[..., self.index] = np.clip((out[..., self.index] - self.stats.mean) /
                                       np.sqrt(self.stats.var + 1e-8), -10, 10)
        return out


class NodeLinear(nn.Module):
    """A separate linear map per slot (the paper's node-specific layers): (B, J, i) -> (B, J, o)."""

    def __init__(self, n_nodes: int, d_in: int, d_out: int, gain: float = np.sqrt(2)) -> None:
        super().__init__()
        w = torch.empty(n_nodes, d_in, d_out)
        for k in range(n_nodes):
            nn.init.orthogonal_(w[k], gain=gain)
        self.weight = nn.Parameter(w)
        self.bias = nn.Parameter(torch.zeros(n_nodes, d_out))

    def forward(self, x: torch.Tensor, nodes: torch.Tensor | None = None) -> torch.Tensor:
        """``nodes``: the slots that the J' columns of ``x`` (B, J', i) hold (default: all)."""
        w, b = (self.weight, self.bias) if nodes is None else (self.weight[nodes], self.bias[nodes])
        return torch.einsum("bji,jio->bjo", x, w) + b


class Linears(nn.Module):
    """``members`` independent linear maps run as one batched matmul: (G, ..., i) -> (G, ..., o).
    Each member is initialized as torch's ``nn.Linear`` on its own. An ensemble of networks that
    see the same input (an actor's and a critic's encoder) then costs one op per layer, not
    one per network: on CPU, at PPO's minibatch sizes, the per-op overhead dominates."""

    def __init__(self, members: int, d_in: int, d_out: int) -> None:
        super().__init__()
        w, b = torch.empty(members, d_in, d_out), torch.empty(members, 1, d_out)
        for g in range(members):
            layer = nn.Linear(d_in, d_out)
            w[g], b[g, 0] = layer.weight.detach().T, layer.bias.detach()
        self.weight, self.bias = nn.Parameter(w), nn.Parameter(b)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        g, lead = x.shape[0], x.shape[1:-1]
        y = torch.baddbmm(self.bias, x.reshape(g, -1, x.shape[-1]), self.weight)
        return y.view(g, *lead, y.shape[-1])


class TokenEmbedding(nn.Module):
    """X = NodeLinear(Linear(token)): shared projection, then a node-specific layer per slot;
    for ``members`` encoders at once: tokens (B, J', i) -> (G, B, J', D)."""

    def __init__(self, n_nodes: int, d_token: int, dim: int, members: int = 1) -> None:
        super().__init__()
        self.proj = Linears(members, d_token, dim)
        node = [NodeLinear(n_nodes, dim, dim) for _ in range(members)]
        self.node_weight = nn.Parameter(torch.stack([n.weight.detach() for n in node]))
        self.node_bias = nn.Parameter(torch.stack([n.bias.detach() for n in node])[:, None])

    def forward(self, tokens: torch.Tensor, nodes: torch.Tensor | None = None) -> torch.Tensor:
        """``tokens`` (B, J', i) of the slots ``nodes`` (default: all J)."""
        g = self.node_weight.shape[0]
        h = torch.tanh(self.proj(tokens.expand(g, *tokens.shape)))
        w, b = self.node_weight, self.node_bias
        if nodes is not None:
            w, b = w[:, nodes], b[:, :, nodes]
        return torch.einsum("gbji,gjio->gbjo", h, w) + b


class SharedEmbedding(nn.Module):
    """e_i = tanh(Linear(token_i)), one map for every slot (MetaMorph's token embedding);
    tokens (B, J', i) -> (G, B, J', D) for ``members`` encoders."""

    def __init__(self, d_token: int, dim: int, members: int = 1) -> None:
        super().__init__()
        self.members = members
        self.proj = Linears(members, d_token, dim)

    def forward(self, tokens: torch.Tensor, nodes: torch.Tensor | None = None) -> torch.Tensor:
        return torch.tanh(self.proj(tokens.expand(self.members, *tokens.shape)))


class NodeDecoder(nn.Module):
    """Per slot, a node-specific head on [Z_i, P, o^g] -> one action mean (node-wise decoding)."""

    def __init__(self, n_nodes: int, dim: int, d_context: int, d_out: int = 1) -> None:
        super().__init__()
        self.hidden = NodeLinear(n_nodes, dim + d_context, dim)
        self.out = NodeLinear(n_nodes, dim, d_out, gain=0.01)

    def forward(self, z: torch.Tensor, context: torch.Tensor) -> torch.Tensor:
        ctx = context[:, None, :].expand(-1, z.shape[1], -1)
        return self.out(torch.tanh(self.hidden(torch.cat([z, ctx], -1)))).squeeze(-1)


# --------------------------------------------------------------------------- the agent network


class ActorCritic(nn.Module):
    """Interface every generalist network implements (see the agent modules)."""

    estimator_dim: int = 0
    parts: Parts

    def actor(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(action mean (B, J), estimator output or None)."""
        raise NotImplementedError

    def value(self, obs: torch.Tensor, privileged: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def forward(self, obs: torch.Tensor, privileged: torch.Tensor):
        """(action mean, estimator output or None, value) in one call: networks whose actor
        and critic can share one pass override it (the Transformers batch their two encoders)."""
        return (*self.actor(obs), self.value(obs, privileged))

    def node_value(self, head: nn.Module, z: torch.Tensor, obs: torch.Tensor,
                   privileged: torch.Tensor) -> torch.Tensor:
        """The asymmetric critic's read-out: a per-node value ``head`` on [Z_i, o^g, privileged],
        averaged over the present nodes."""
        p = self.parts
        ctx = torch.cat([p.global_obs(obs), privileged], -1)[:, None].expand(-1, z.shape[1], -1)
        v = head(torch.cat([z, ctx], -1)).squeeze(-1)
        pres = p.present(obs)
        return (v * pres).sum(-1) / pres.sum(-1).clamp(min=1)


class GeneralistPolicy:
    """The artifact: deterministic mean action of the trained actor, obs -> action. It keeps
    what PPO needs to go on training it (the exploration ``log_std``; see ``train_ppo``'s
    ``start``)."""

    def __init__(self, net: ActorCritic, norm: ObsNorm, n_slots: int,
                 env_options: dict[str, Any] | None = None,
                 log_std: torch.Tensor | None = None) -> None:
        self.net, self.norm, self.n_slots = net.eval(), norm, n_slots
        # the observation options it was trained with, which the problem evaluates it with
        self.env_options = {k: v for k, v in (env_options or {}).items() if k == "morph_obs"}
        self.log_std = log_std

    def __call__(self, observation: np.ndarray) -> np.ndarray:
        obs = torch.as_tensor(self.norm(np.asarray(observation)[None]))
        with torch.no_grad():
            mean, _ = self.net.actor(obs)
        return np.clip(mean[0].numpy(), -1, 1).astype(np.float32)


def masked_log_prob(mean, log_std, action, present):
    """Gaussian log-likelihood summed over present slots only (absent slots carry no gradient)."""
    var = torch.exp(2 * log_std)
    lp = -((action - mean) ** 2) / (2 * var) - log_std - 0.5 * np.log(2 * np.pi)
    ent = 0.5 + 0.5 * np.log(2 * np.pi) + log_std
    return (lp * present).sum(-1), (ent * present).sum(-1)


def train_ppo(view: Any, budget: Any, seed: int, make_net, c: HumanoidPPOConfig,
              env_options: dict[str, Any] | None = None,
              start: GeneralistPolicy | None = None) -> GeneralistPolicy:
    """PPO until the problem's env_steps budget is spent; returns the deterministic policy.
    ``env_options`` (e.g. ``morph_obs``) are passed to every training env and kept on the
    policy, so that the problem evaluates it on the observation it was trained on. With
    ``start``, training goes on from a copy of that policy (its network, exploration noise
    and observation statistics; a fresh optimizer and return scaler): fine-tuning."""
    with torch_threads(c.threads):
        return _train_ppo(view, budget, seed, make_net, c, env_options, start)


def _train_ppo(view, budget, seed, make_net, c, env_options, start) -> GeneralistPolicy:
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    n = c.n_envs
    options = dict(env_options or {})
    if c.randomization is not None:
        options["randomization"] = c.randomization
    # one vector env (a single call steps all n, metered n steps), same-step autoreset
    envs = view.make_vector_env(n, **options)
    parts = Parts(envs.envs[0].unwrapped.layout.as_dict())
    j_env = parts.j
    obs, infos = envs.reset(seed=[reset_seed(rng) for _ in range(n)])
    priv = infos["privileged"]
    est_dim = infos["estimator_target"].shape[1]
    if start is None:
        net: ActorCritic = make_net(parts, priv.shape[1], est_dim)
        log_std = nn.Parameter(torch.full((j_env,), float(c.init_log_std)))
        norm = ObsNorm(parts.continuous)
    else:
        net = copy.deepcopy(start.net).train()
        log_std = nn.Parameter(start.log_std.detach().clone() if start.log_std is not None
                               else torch.full((j_env,), float(c.init_log_std)))
        norm = copy.deepcopy(start.norm)
    params = [*net.parameters(), log_std]
    optim = torch.optim.Adam(params, lr=c.lr, eps=1e-5, fused=True)  # one kernel per tensor
    norm.update(obs)  # every observation the policy acts on enters the statistics
    scaler = ReturnScaler(n, c.gamma) if c.norm_reward else None
    total = max(int(budget.remaining("env_steps")), 1)
    gen = torch.Generator().manual_seed(int(rng.integers(2**31)))
    lr = c.lr
    while budget.remaining("env_steps") >= n:
        if c.anneal_lr and c.desired_kl is None:
            anneal_lr(optim, c.lr, 1.0 - budget.remaining("env_steps") / total)
        t_len = int(min(c.n_steps, budget.remaining("env_steps") // n))
        b_obs = np.zeros((t_len, n, obs.shape[1]), np.float32)
        b_priv = np.zeros((t_len, n, priv.shape[1]), np.float32)
        b_est = np.zeros((t_len, n, est_dim), np.float32)
        b_act = np.zeros((t_len, n, j_env), np.float32)
        b_mean = np.zeros((t_len, n, j_env), np.float32)
        b_logp, b_rew, b_done, b_val, b_timeout_val = (
            np.zeros((t_len, n), np.float32) for _ in range(5))
        for t in range(t_len):
            o = norm(obs)
            with torch.inference_mode():  # one batched forward for the n envs
                ot = torch.as_tensor(o)
                mean, _, val = net(ot, torch.as_tensor(priv))
                pres = parts.present(ot)
                act = mean + torch.exp(log_std) * torch.randn(mean.shape) * pres
                logp, _ = masked_log_prob(mean, log_std, act, pres)
            b_obs[t], b_priv[t], b_act[t], b_mean[t] = o, priv, act.numpy(), mean.numpy()
            b_logp[t], b_val[t] = logp.numpy(), val.numpy()
            obs, raw_rew, term, trunc, infos = envs.step(np.clip(b_act[t], -1, 1))
            # a finished sub-env was reset in the same step: its row of obs and infos is the
            # new episode's, the last step's are in final_obs / final_info
            done = term | trunc
            b_done[t] = done
            b_est[t] = infos["estimator_target"]
            if done.any():
                final = infos["final_info"]
                b_est[t, done] = final["estimator_target"][done]
                timeout = np.flatnonzero(trunc & ~term)  # bootstrap through time limits
                if len(timeout):
                    with torch.no_grad():
                        b_timeout_val[t, timeout] = net.value(
                            torch.as_tensor(norm(np.stack(infos["final_obs"][timeout]))),
                            torch.as_tensor(final["privileged"][timeout])).numpy()
            b_rew[t] = scaler.scale(raw_rew, b_done[t]) if scaler is not None else raw_rew
            priv = infos["privileged"]
            norm.update(obs)
        with torch.no_grad():
            last_val = net.value(torch.as_tensor(norm(obs)), torch.as_tensor(priv)).numpy()
        adv, ret = gae(b_rew, b_val, b_done, last_val, c.gamma, c.gae_lambda, b_timeout_val)
        f_obs, f_priv, f_est, f_act, f_mean, f_logp, f_val, f_adv, f_ret = (
            torch.as_tensor(x.reshape(t_len * n, *x.shape[2:]))
            for x in (b_obs, b_priv, b_est, b_act, b_mean, b_logp, b_val, adv, ret))
        old_log_std = log_std.detach().clone()  # the rollout's exploration noise
        size = t_len * n
        mb = max(size // c.minibatches, 1)
        for _ in range(c.epochs):
            perm = torch.randperm(size, generator=gen)
            kls = []
            for first in range(0, size, mb):
                idx = perm[first:first + mb]
                o = f_obs[idx]
                mean, est, value = net(o, f_priv[idx])
                pres = parts.present(o)
                logp, ent = masked_log_prob(mean, log_std, f_act[idx], pres)
                a = normalize(f_adv[idx]) if c.norm_adv else f_adv[idx]
                pg = clipped_surrogate(logp, f_logp[idx], a, c.clip)  # Schulman et al. 2017, eq. 7
                v_loss = clipped_value_loss(value, f_val[idx], f_ret[idx],
                                            c.clip if c.clip_vloss else None)
                loss = pg + c.vf_coef * v_loss - c.ent_coef * ent.mean()
                if c.desired_kl is not None:  # rsl_rl: adapt the step size before taking it
                    with torch.no_grad():
                        kl = diag_gaussian_kl(f_mean[idx], old_log_std, mean, log_std)
                        lr = adaptive_lr(lr, float((kl * pres).sum(-1).mean()), c.desired_kl)
                    set_lr(optim, lr)
                if est is not None:  # the state estimator regresses privileged v and h
                    loss = loss + c.estimator_coef * ((est - f_est[idx]) ** 2).mean()
                optim.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(params, c.max_grad_norm, foreach=True)
                optim.step()
                if c.target_kl is not None:  # approx. KL(old || new), CleanRL's early stop
                    kls.append(float(kl_k3(f_logp[idx], logp.detach()).mean()))
            if c.target_kl is not None and np.mean(kls) > c.target_kl:
                break
    envs.close()
    return GeneralistPolicy(net, norm, j_env, options, log_std.detach().clone())


def reset_seed(rng: np.random.Generator) -> int:
    """An episode seed from the training range (the problem keeps those above for scoring)."""
    return int(rng.integers(EVAL_SEED_OFFSET))
