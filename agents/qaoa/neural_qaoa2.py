"""Neural QAOA² (Zheng, Wu & Liu, ICML 2026): a generative evaluative network (GEN).

A learned evaluator (three graph encoders → r ∈ [0.5, 1]) is fitted to the problem's logged
QAOA² runs on the training graphs; a partition generator (GAT + orthogonal-complement cluster
queries) and an angle generator (GCN on the intra-block graph) are then trained through the
frozen evaluator with straight-through hard partitions; at inference, test-time adaptation
(TTA) fine-tunes the generators on each graph and keeps the best-scoring partition and angles.

Implemented [code], scaled down [recon] (dense-adjacency torch layers, one attention head):
- Evaluator: GAT on the full graph (edge feature w), GCN on the intra-block graph, GAT on
  the intra-block graph with node inputs [sin γ, sin β, cos γ, cos β] of the node's block;
  mean-pool each, concatenate, Linear–ReLU–Dropout(0.3)–Linear, output 0.5 + 0.5·σ(·).
  Target: the run's final r; MSE; AdamW(lr 1e-3, wd 5e-4), batch 32; 80/20 split, gradient
  norm clipped at 1, ReduceLROnPlateau(0.5, patience 3) on the validation MSE, the best
  validation epoch kept (the official ``train_critic.py``).
- Evaluator data: the view's logged runs (``view.logged_runs()``: on every training graph,
  heuristic, perturbed-heuristic and random partitions with random angles, each labelled with
  the run's final r), the analogue of the official repository's logs.
- ``evaluator="closed_form"`` (ablation, [recon]): no learned surrogate. The score is the exact
  p = 1 expectation of the first level: Σ_blocks ⟨C_block⟩(γ_c, β_c) (Wang et al. 2018 closed
  form on the max|w|-scaled block, as the subsolver sees it, times the scale) plus half the
  cross-block weight (blocks oriented independently), as a ratio (E − SumNeg)/(Σw⁺ − SumNeg).
  Masks are straight-through soft memberships, so partitions still get gradients.
- Partition generator: GAT → H; rows normalized; g = normalized mean row; QR of
  [g, a_1..a_k] (a_i fixed random vectors) gives k queries q_c ⟂ g;
  S = softmax_c(cos(H_u, q_c)/τ), τ = 0.05, k = ⌈N/n_max⌉.
- Greedy capacity discretization (no gradient) and straight-through
  S_ste = S_hard + (S − stopgrad S); intra-block weight Σ_c S_ste[u,c] S_ste[v,c].
- Angle generator: GCN on the detached intra-block graph → mean-pool per block → MLP → per
  angle a 2-vector, L2-normalized, angle = atan2 mod 2π.
- Generator training: loss = −Evaluator(graph, S_ste, angles), evaluator frozen; AdamW
  (lr 4e-3, wd 5e-4), ReduceLROnPlateau(0.8, patience 100), batch 16.
- Inference: at every level TTA (AdamW lr 1e-3, wd 5e-4) on a copy of the generators,
  keeping the best evaluator score; the first-level result is computed once per instance
  and reused by the R runs, deeper levels adapt per run [recon].
- The artifact also exposes ``score(weights, labels, params)`` (the evaluator's prediction),
  which the problem checks on held-out labelled runs (within-graph Spearman, MSE vs floor).
- Ablations (flags): ``tta_steps=0``; ``angles="random"``; ``partition="random"``;
  ``generator_steps=0`` with ``tta_steps=0`` (an untrained GEN); ``evaluator="closed_form"``.
- ``evaluator="oracle"`` (ablation, [recon]): the exact per-block-plus-merge objective
  (``envs/qaoa/oracle.py``: the cut QAOA² reaches from a partition with every block and the
  merge solved exactly) in the learned evaluator's place; not differentiable, so the partition
  generator learns by the score-function gradient over sampled partitions (training and TTA).
  GEN vs GEN-oracle measures the evaluator's error, GEN-oracle vs the heuristics the
  generator's limits.
- ``gate=True`` [recon]: the learned evaluator is fitted on 80% of the logged graphs and used
  only if, on the other 20% (unseen graphs), its within-graph Spearman correlation with the
  oracle beats modularity's; otherwise the policy is the modularity baseline (``gate`` on the
  artifact records the decision and both correlations).
- ``features="spectral"`` [recon; the official code has the five structural features only]:
  Laplacian eigenvector encodings appended to the node features (``features.py``).
Scaled defaults (standard tier): hidden 32 (evaluator) / 64 (generators), 2 layers,
4,000 logged runs, 8 epochs (the spec: 20), 300 generator steps, TTA 16 steps.
"""

from __future__ import annotations

import copy
import hashlib
import math
from typing import Literal

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from papergym.agent import Agent, AgentConfig
from papergym.agents.qaoa.common import graph_from_obs, make_action
from papergym.agents.qaoa.features import laplacian_encoding
from papergym.envs.qaoa.instances import node_features
from papergym.envs.qaoa.logs import modularity
from papergym.envs.qaoa.oracle import exact_objective, objective_ratio
from papergym.envs.qaoa.partitions import modularity_partition, random_angles, random_partition


class Config(AgentConfig):
    evaluator: Literal["learned", "closed_form", "oracle"] = "learned"
    oracle_samples: int = 4  # sampled partitions per graph and step (evaluator="oracle")
    gate: bool = False  # use the learned evaluator only where it ranks better than modularity
    features: Literal["structural", "spectral"] = "structural"
    spectral_dim: int = 8  # Laplacian eigenvectors appended (features="spectral")
    evaluator_samples: int = 4000  # logged runs used (at most the view's)
    evaluator_hidden: int = 32
    evaluator_layers: int = 2
    evaluator_epochs: int = 20
    evaluator_lr: float = 1e-3
    evaluator_batch: int = 32
    validation_share: float = 0.2
    dropout: float = 0.3
    generator_hidden: int = 64
    generator_layers: int = 2
    generator_steps: int = 300
    generator_lr: float = 4e-3
    generator_batch: int = 16
    temperature: float = 0.05
    weight_decay: float = 5e-4
    tta_steps: int = 16
    tta_lr: float = 1e-3
    max_train_graphs: int = 200  # generator training graphs (the view's, at most this many)
    angles: Literal["generated", "random"] = "generated"
    partition: Literal["generated", "random"] = "generated"


def feature_dim(config: Config) -> int:
    return 5 + (config.spectral_dim if config.features == "spectral" else 0)


def input_features(weights: np.ndarray, structural: np.ndarray, config: Config) -> np.ndarray:
    """The problem's five structural features, with Laplacian encodings appended for
    ``features="spectral"`` (agents/qaoa/features.py)."""
    if config.features == "spectral":
        return np.hstack([structural, laplacian_encoding(weights, config.spectral_dim)])
    return structural


# --------------------------------------------------------------------------- layers
class DenseGAT(nn.Module):
    """One-head GAT layer on a dense graph: e_ij = LeakyReLU(a_s·h_i + a_d·h_j + a_e·w_ij),
    α_ij ∝ support_ij · exp(e_ij) (a soft support keeps the intra-block mask differentiable)."""

    def __init__(self, d_in: int, d_out: int) -> None:
        super().__init__()
        self.lin = nn.Linear(d_in, d_out, bias=False)
        self.att_src = nn.Parameter(torch.randn(d_out) / math.sqrt(d_out))
        self.att_dst = nn.Parameter(torch.randn(d_out) / math.sqrt(d_out))
        self.att_edge = nn.Parameter(torch.zeros(()))
        self.bias = nn.Parameter(torch.zeros(d_out))

    def forward(self, x: torch.Tensor, edge: torch.Tensor, support: torch.Tensor) -> torch.Tensor:
        h = self.lin(x)
        logits = (h @ self.att_src)[:, :, None] + (h @ self.att_dst)[:, None, :]
        logits = F.leaky_relu(logits + self.att_edge * edge, 0.2)
        top = logits.masked_fill(support <= 0, -1e9).max(dim=-1, keepdim=True).values.detach()
        attention = support * torch.exp(torch.clamp(logits - top, max=0.0))
        attention = attention / attention.sum(dim=-1, keepdim=True).clamp_min(1e-12)
        return attention @ h + self.bias


class DenseGCN(nn.Module):
    """GCN layer: D^{-1/2}(A + I)D^{-1/2} X Θ on a dense non-negative A."""

    def __init__(self, d_in: int, d_out: int) -> None:
        super().__init__()
        self.lin = nn.Linear(d_in, d_out)

    def forward(self, x: torch.Tensor, adjacency: torch.Tensor, node_mask: torch.Tensor):
        a = adjacency + torch.diag_embed(node_mask)
        inv_sqrt = a.sum(dim=-1).clamp_min(1e-12).rsqrt() * node_mask
        return (inv_sqrt[:, :, None] * a * inv_sqrt[:, None, :]) @ self.lin(x)


class Stack(nn.Module):
    def __init__(self, layer, d_in: int, hidden: int, layers: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList([layer(d_in if i == 0 else hidden, hidden)
                                     for i in range(layers)])

    def forward(self, x, *graph):
        for i, layer in enumerate(self.layers):
            x = layer(x, *graph)
            if i < len(self.layers) - 1:
                x = F.relu(x)
        return x


def masked_mean(h: torch.Tensor, node_mask: torch.Tensor) -> torch.Tensor:
    return (h * node_mask[:, :, None]).sum(1) / node_mask.sum(1, keepdim=True).clamp_min(1)


# --------------------------------------------------------------------------- batches
class GraphBatch:
    """Padded dense tensors for graphs of different sizes; weights scaled by max|w|."""

    def __init__(self, graphs: list[tuple[np.ndarray, np.ndarray]]) -> None:
        size = max(w.shape[0] for w, _ in graphs)
        count = len(graphs)
        weights = np.zeros((count, size, size), np.float32)
        features = np.zeros((count, size, graphs[0][1].shape[1]), np.float32)
        mask = np.zeros((count, size), np.float32)
        for i, (w, x) in enumerate(graphs):
            n = w.shape[0]
            weights[i, :n, :n] = w / max(float(np.abs(w).max()), 1e-12)
            features[i, :n] = x
            mask[i, :n] = 1
        self._set([w.shape[0] for w, _ in graphs], torch.from_numpy(weights),
                  torch.from_numpy(features), torch.from_numpy(mask))

    def _set(self, sizes, weights, features, node_mask) -> None:
        self.sizes, self.weights, self.features, self.node_mask = sizes, weights, features, node_mask
        eye = torch.diag_embed(node_mask)
        self.edges = (weights != 0).float()
        self.full_support = self.edges + eye + torch.diag_embed(1 - node_mask)

    def subset(self, indices) -> GraphBatch:
        """The graphs at ``indices`` (tensor indexing: no re-padding from numpy)."""
        batch = GraphBatch.__new__(GraphBatch)
        index = torch.as_tensor(np.asarray(indices), dtype=torch.long)
        batch._set([self.sizes[i] for i in np.asarray(indices)], self.weights[index],
                   self.features[index], self.node_mask[index])
        return batch


# --------------------------------------------------------------------------- networks
class Evaluator(nn.Module):
    """Surrogate of the final r from (graph, partition S, per-block angles)."""

    def __init__(self, hidden: int, layers: int, dropout: float, d_in: int = 5) -> None:
        super().__init__()
        self.full = Stack(DenseGAT, d_in, hidden, layers)
        self.intra_gcn = Stack(DenseGCN, d_in, hidden, layers)
        self.intra_angles = Stack(DenseGAT, 4, hidden, layers)
        self.head = nn.Sequential(nn.Linear(3 * hidden, hidden), nn.ReLU(), nn.Dropout(dropout),
                                  nn.Linear(hidden, 1))

    def forward(self, batch: GraphBatch, assignment: torch.Tensor, angles: torch.Tensor):
        same_block = assignment @ assignment.transpose(1, 2)  # Σ_c S[u,c] S[v,c]
        intra_weights = batch.weights * same_block
        eye = torch.diag_embed(torch.ones_like(batch.node_mask))
        intra_support = batch.edges * same_block + eye
        node_angles = assignment @ angles  # (B, N, 2): the angles of each node's block
        angle_features = torch.cat([torch.sin(node_angles), torch.cos(node_angles)], dim=-1)
        angle_features = angle_features * batch.node_mask[:, :, None]  # [sinγ, sinβ, cosγ, cosβ]
        mask = batch.node_mask
        pooled = torch.cat([
            masked_mean(self.full(batch.features, batch.weights, batch.full_support), mask),
            masked_mean(self.intra_gcn(batch.features, intra_weights.abs(), mask), mask),
            masked_mean(self.intra_angles(angle_features, intra_weights, intra_support), mask),
        ], dim=-1)
        return 0.5 + 0.5 * torch.sigmoid(self.head(pooled)).squeeze(-1)


class PartitionGenerator(nn.Module):
    """GAT embeddings and orthogonal-complement cluster queries → soft assignment S."""

    def __init__(self, hidden: int, layers: int, temperature: float, seed: int,
                 d_in: int = 5) -> None:
        super().__init__()
        self.encoder = Stack(DenseGAT, d_in, hidden, layers)
        self.temperature = temperature
        generator = torch.Generator().manual_seed(seed)
        # fixed random vectors a_1..a_{d−1}, drawn at init (a buffer, not trained)
        self.register_buffer("anchors", torch.randn(hidden, hidden - 1, generator=generator))

    def queries(self, normalized: torch.Tensor, node_mask: torch.Tensor, k: int) -> torch.Tensor:
        """(B, d, k) orthonormal queries orthogonal to the normalized mean embedding g."""
        g = F.normalize(masked_mean(normalized, node_mask), dim=-1)
        stacked = torch.cat([g[:, :, None], self.anchors[None, :, :k].expand(g.shape[0], -1, -1)],
                            dim=2)
        basis, _ = torch.linalg.qr(stacked)
        return basis[:, :, 1:]

    def forward(self, batch: GraphBatch, ks: list[int]) -> torch.Tensor:
        h = self.encoder(batch.features, batch.weights, batch.full_support)
        normalized = F.normalize(h, dim=-1)
        k_max = max(ks)
        cosine = normalized @ self.queries(normalized, batch.node_mask, k_max)
        valid = torch.arange(k_max)[None, :] < torch.tensor(ks)[:, None]
        logits = (cosine / self.temperature).masked_fill(~valid[:, None, :], -1e9)
        return torch.softmax(logits, dim=-1) * batch.node_mask[:, :, None]


class AngleGenerator(nn.Module):
    """GCN on the intra-block graph → per-block pooled embedding → (γ, β) via atan2."""

    def __init__(self, hidden: int, layers: int, d_in: int = 5) -> None:
        super().__init__()
        self.encoder = Stack(DenseGCN, d_in, hidden, layers)
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 4))

    def forward(self, batch: GraphBatch, hard: torch.Tensor) -> torch.Tensor:
        same_block = hard @ hard.transpose(1, 2)
        h = self.encoder(batch.features, (batch.weights.abs() * same_block).detach(),
                         batch.node_mask)
        counts = hard.sum(1).clamp_min(1)[:, :, None]
        block = hard.transpose(1, 2) @ h / counts  # (B, K, d)
        vectors = F.normalize(self.head(block).view(*block.shape[:2], 2, 2), dim=-1)
        return torch.remainder(torch.atan2(vectors[..., 1], vectors[..., 0]), 2 * math.pi)


# --------------------------------------------------------------------------- discretization
def greedy_capacity_assignment(scores: np.ndarray, capacity: int) -> np.ndarray:
    """Rank by rank, every unassigned node proposes to its r-th preferred cluster; a cluster
    accepts its highest-scoring proposers up to its remaining capacity. Assigns every node
    whenever k·capacity ≥ N (a node rejected k times would mean all k clusters are full)."""
    n, k = scores.shape
    preference = np.argsort(-scores, axis=1, kind="stable")
    labels = np.full(n, -1, dtype=np.int64)
    room = np.full(k, capacity, dtype=np.int64)
    for rank in range(k):
        for cluster in range(k):
            proposers = np.flatnonzero((labels < 0) & (preference[:, rank] == cluster))
            if proposers.size == 0 or room[cluster] == 0:
                continue
            order = proposers[np.argsort(-scores[proposers, cluster], kind="stable")]
            accepted = order[: room[cluster]]
            labels[accepted] = cluster
            room[cluster] -= accepted.size
    return labels


def hard_assignment(soft: torch.Tensor, sizes: list[int], ks: list[int], capacity: int):
    hard = torch.zeros_like(soft)
    labels = []
    for i, (n, k) in enumerate(zip(sizes, ks)):
        lab = greedy_capacity_assignment(soft[i, :n, :k].detach().numpy(), capacity)
        hard[i, torch.arange(n), torch.from_numpy(lab)] = 1.0
        labels.append(lab)
    return hard, labels


def blocks_needed(n: int, n_max: int) -> int:
    return math.ceil(n / n_max) if n > n_max else 1


# --------------------------------------------------------------------------- the method
class GEN(nn.Module):
    def __init__(self, config: Config, seed: int) -> None:
        super().__init__()
        d_in = feature_dim(config)
        self.partition = PartitionGenerator(config.generator_hidden, config.generator_layers,
                                            config.temperature, seed, d_in)
        self.angles = AngleGenerator(config.generator_hidden, config.generator_layers, d_in)

    def forward(self, batch: GraphBatch, ks: list[int], n_max: int, fixed_labels=None):
        soft = self.partition(batch, ks)
        if fixed_labels is None:
            hard, labels = hard_assignment(soft, batch.sizes, ks, n_max)
        else:
            hard, labels = _one_hot(fixed_labels, soft.shape), fixed_labels
        straight_through = hard + soft - soft.detach()  # S_ste
        return straight_through, hard, self.angles(batch, hard), labels


def _one_hot(labels: list[np.ndarray], shape) -> torch.Tensor:
    hard = torch.zeros(shape)
    for i, lab in enumerate(labels):
        hard[i, torch.arange(lab.size), torch.from_numpy(lab)] = 1.0
    return hard


class ClosedFormEvaluator(nn.Module):
    """Exact p = 1 expectation of the first level as a score (the ``closed_form`` ablation).

    For each hard block c (≤ n_max nodes) the block's weights, masked by the straight-through
    memberships S_ste[u,c]·S_ste[v,c] and scaled by the block's max|w| (as the subsolver scales
    them), go through the weighted closed form of Wang et al. (2018) at the block's (γ_c, β_c):
    ⟨C_uv⟩ = A_uv[½ + ¼ sin4β sin(γA_uv)(Π_m cos γA_um + Π_m cos γA_vm)
             − ¼ sin²2β (Π_m cos γ(A_um − A_vm) − Π_m cos γ(A_um + A_vm))], m ∉ {u, v}.
    Cross-block edges count half (independent orientations). Score = (E − SumNeg)/(Σw⁺ − SumNeg).
    """

    def forward(self, batch: GraphBatch, assignment: torch.Tensor, angles: torch.Tensor,
                hard: torch.Tensor | None = None) -> torch.Tensor:
        hard = assignment.detach().round() if hard is None else hard
        scores = []
        for b, n in enumerate(batch.sizes):
            weights = batch.weights[b][:n, :n]  # max|w|-scaled: the score is scale-free
            members = [torch.nonzero(hard[b, :n, c] > 0.5).flatten()
                       for c in range(hard.shape[2])]
            members = [m for m in members if m.numel() > 1]
            same = assignment[b, :n] @ assignment[b, :n].T
            cross = 0.5 * (torch.triu(weights * (1 - same), 1)).sum()
            expected = cross
            if members:
                size = max(m.numel() for m in members)
                index = torch.full((len(members), size), n, dtype=torch.long)
                for row, m in enumerate(members):
                    index[row, : m.numel()] = m
                blocks = torch.tensor([int(hard[b, m[0]].argmax()) for m in members])
                padded_w = F.pad(weights, (0, 1, 0, 1))
                padded_s = F.pad(assignment[b, :n], (0, 0, 0, 1))
                a = padded_w[index[:, :, None], index[:, None, :]]
                s_block = padded_s[index, blocks[:, None]]
                scale = a.abs().amax(dim=(1, 2)).clamp_min(1e-12).detach()
                a = a * s_block[:, :, None] * s_block[:, None, :] / scale[:, None, None]
                gamma, beta = (angles[b, blocks, i][:, None, None] for i in (0, 1))
                expected = expected + (scale * _closed_form_blocks(a, gamma, beta)).sum()
            negative = weights.clamp(max=0).triu(1).sum()
            positive = weights.clamp(min=0).triu(1).sum()
            scores.append((expected - negative) / (positive - negative).clamp_min(1e-12))
        return torch.stack(scores)


def _closed_form_blocks(a: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor) -> torch.Tensor:
    """Σ_{u<v} ⟨C_uv⟩ per block of (M, k, k) symmetric weights a (zero diagonal, zero padding)."""
    k = a.shape[1]
    eye = torch.eye(k, dtype=a.dtype)
    not_v = 1 - eye[None, None, :, :]  # [u, v, m]: m ≠ v
    args_u = a[:, :, None, :] * not_v  # A_um, m ∉ {u, v} (A_uu = 0)
    args_v = a[:, None, :, :] * (1 - eye[None, :, None, :])  # A_vm, m ≠ u
    g = gamma[..., None]
    prod_u, prod_v = torch.cos(g * args_u).prod(-1), torch.cos(g * args_v).prod(-1)
    diff, summ = torch.cos(g * (args_u - args_v)).prod(-1), torch.cos(g * (args_u + args_v)).prod(-1)
    per_edge = a * (0.5 + 0.25 * torch.sin(4 * beta) * torch.sin(gamma * a) * (prod_u + prod_v)
                    - 0.25 * torch.sin(2 * beta) ** 2 * (diff - summ))
    return torch.triu(per_edge, 1).sum(dim=(1, 2))


class OracleEvaluator(nn.Module):
    """The exact per-block-plus-merge objective as the evaluator (the ``oracle`` ablation).

    Every block solved exactly, then the coarse graph's MaxCut (``envs/qaoa/oracle.py``): the
    cut QAOA² reaches from a partition with an exact subsolver, as (cut − SumNeg)/(Σw⁺ − SumNeg).
    It is not differentiable and ignores angles, so the partition generator learns from it by
    the score-function gradient (REINFORCE, a per-graph mean baseline) over partitions sampled
    with Gumbel noise on log S and discretized to capacity; the angle generator gets no signal.
    """

    def __init__(self, n_max: int) -> None:
        super().__init__()
        self.n_max = n_max

    def value(self, weights: np.ndarray, labels: np.ndarray) -> float:
        return objective_ratio(weights, exact_objective(weights, labels, self.n_max)[0])

    def forward(self, batch: GraphBatch, assignment: torch.Tensor, angles: torch.Tensor,
                hard: torch.Tensor | None = None) -> torch.Tensor:
        hard = assignment.detach() if hard is None else hard
        return torch.tensor([self.value(batch.weights[b, :n, :n].double().numpy(),
                                        hard[b, :n].argmax(-1).numpy())
                             for b, n in enumerate(batch.sizes)])

    def reinforce_loss(self, soft: torch.Tensor, batch: GraphBatch, ks: list[int],
                       samples: int, rng: np.random.Generator):
        """−Σ advantage·log p(labels) over ``samples`` sampled partitions per graph, and the
        best (value, labels) found per graph."""
        losses, best = [], []
        for b, (n, k) in enumerate(zip(batch.sizes, ks)):
            weights = batch.weights[b, :n, :n].double().numpy()
            log_soft = torch.log(soft[b, :n, :k].clamp_min(1e-12))
            drawn = [greedy_capacity_assignment(
                log_soft.detach().numpy() + rng.gumbel(size=(n, k)), self.n_max)
                for _ in range(samples)]
            values = np.array([self.value(weights, labels) for labels in drawn])
            advantage = torch.as_tensor(values - values.mean(), dtype=torch.float32)
            log_p = torch.stack([log_soft[torch.arange(n), torch.from_numpy(labels)].sum()
                                 for labels in drawn])
            losses.append(-(advantage * log_p).mean())
            top = int(np.argmax(values))
            best.append((float(values[top]), drawn[top]))
        return torch.stack(losses).mean(), best


def _score(evaluator: nn.Module, batch: GraphBatch, straight_through, hard, angles):
    if isinstance(evaluator, ClosedFormEvaluator | OracleEvaluator):
        return evaluator(batch, straight_through, angles, hard)
    return evaluator(batch, straight_through, angles)


class GENPolicy:
    """The artifact: at each level, generate (and test-time adapt) partition and angles;
    ``score`` exposes the evaluator's prediction for a given first-level partition.

    With ``gate`` (a dict from :func:`evaluator_gate`) closed, the policy is the modularity
    baseline (greedy modularity partitions, random angles); ``gate["open"]`` says which.
    """

    def __init__(self, gen: GEN, evaluator: nn.Module, config: Config, n_max: int, N_max: int,
                 seed: int, gate: dict[str, float] | None = None) -> None:
        self.gen, self.evaluator, self.config = gen, evaluator, config
        self.n_max, self.N_max = n_max, N_max
        self.rng = np.random.default_rng(seed)
        self.first_level_cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.gate = gate
        # the oracle scores partitions on its own scale (a ratio to Σw⁺), not as r
        self.score_is_proxy = isinstance(evaluator, OracleEvaluator)

    def __call__(self, observation: dict) -> dict[str, np.ndarray]:
        weights, features = graph_from_obs(observation)
        features = input_features(weights, features, self.config)
        level = int(observation["level"])
        key = hashlib.sha1(weights.tobytes()).hexdigest()
        if level == 0 and key in self.first_level_cache:  # reused by the R runs [recon]
            labels, params = self.first_level_cache[key]
        else:
            labels, params = self._adapt(weights, features)
            if level == 0:
                self.first_level_cache[key] = (labels, params)
        if self.config.angles == "random":
            params = random_angles(len(params), self.rng)
        return make_action(labels, params, self.N_max)

    def score(self, weights: np.ndarray, labels: np.ndarray, params: np.ndarray) -> float:
        """The evaluator's predicted r for a first-level partition and its block angles."""
        weights = np.asarray(weights, dtype=np.float64)
        labels = np.asarray(labels, dtype=np.int64)
        if isinstance(self.evaluator, OracleEvaluator):
            return self.evaluator.value(weights, labels)
        batch = GraphBatch([(weights, input_features(weights, node_features(weights),
                                                     self.config))])
        hard = _one_hot([labels], (1, weights.shape[0], int(labels.max()) + 1))
        angles = torch.as_tensor(np.asarray(params, dtype=np.float32))[None]
        with torch.no_grad():
            return float(_score(self.evaluator, batch, hard, hard, angles)[0])

    def _adapt(self, weights: np.ndarray, features: np.ndarray):
        n = weights.shape[0]
        k = blocks_needed(n, self.n_max)
        batch = GraphBatch([(weights, features)])
        fixed = None
        if self.config.partition == "random" and n > self.n_max:
            fixed = [random_partition(weights, self.n_max, self.rng)]
        elif n <= self.n_max:
            fixed = [np.zeros(n, dtype=np.int64)]
        if self.gate is not None and not self.gate["open"]:
            # the gate stayed closed: the modularity baseline (its partitions, random angles)
            labels = (modularity_partition(weights, self.n_max, self.rng) if n > self.n_max
                      else np.zeros(n, dtype=np.int64))
            return labels, random_angles(int(labels.max()) + 1, self.rng)
        gen = copy.deepcopy(self.gen)
        optimizer = torch.optim.AdamW(gen.parameters(), lr=self.config.tta_lr,
                                      weight_decay=self.config.weight_decay)
        if isinstance(self.evaluator, OracleEvaluator) and fixed is None:
            return self._adapt_oracle(gen, optimizer, batch, k)
        best = (-np.inf, None, None)
        steps = self.config.tta_steps
        for step in range(steps + 1):  # TTA: maximize the evaluator score
            straight_through, hard, angles, labels = gen(batch, [k], self.n_max, fixed)
            if isinstance(self.evaluator, OracleEvaluator):  # one block: nothing to choose
                score = torch.zeros(1)
            else:
                score = _score(self.evaluator, batch, straight_through, hard, angles)[0]
            if float(score.detach()) > best[0]:
                best = (float(score.detach()), labels[0].copy(), angles[0].detach().numpy().copy())
            if step < steps and score.requires_grad:
                optimizer.zero_grad()
                (-score).backward()
                optimizer.step()
        return best[1], best[2][: int(best[1].max()) + 1].astype(np.float64)

    def _adapt_oracle(self, gen: GEN, optimizer, batch: GraphBatch, k: int):
        """TTA under the oracle: the argmax partition and ``oracle_samples`` sampled ones per
        step, scored exactly; REINFORCE steps on the partition generator; the best is kept."""
        weights = batch.weights[0, : batch.sizes[0], : batch.sizes[0]].double().numpy()
        best = (-np.inf, None)
        for step in range(self.config.tta_steps + 1):
            soft = gen.partition(batch, [k])
            _, labels = hard_assignment(soft, batch.sizes, [k], self.n_max)
            value = self.evaluator.value(weights, labels[0])
            if value > best[0]:
                best = (value, labels[0].copy())
            if step < self.config.tta_steps:
                loss, sampled = self.evaluator.reinforce_loss(
                    soft, batch, [k], self.config.oracle_samples, self.rng)
                if sampled[0][0] > best[0]:
                    best = sampled[0]
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        labels = best[1]
        with torch.no_grad():
            angles = gen.angles(batch, _one_hot([labels], (1, labels.size, k)))[0].numpy()
        return labels, angles[: int(labels.max()) + 1].astype(np.float64)


def evaluator_gate(evaluator: nn.Module, validation: list[dict], view, config: Config,
                   n_max: int) -> dict[str, float]:
    """Does the learned evaluator rank partitions of unseen graphs better than modularity?

    On the validation graphs' logged partitions, the within-graph Spearman correlation of the
    evaluator's prediction and of the partition's modularity with the oracle objective (the
    cut the partition reaches with exact blocks and merge), each averaged over graphs whose
    oracle value varies; the gate opens when the evaluator's mean is the higher."""
    from scipy import stats

    oracle = OracleEvaluator(n_max)
    by_graph: dict[str, list[dict]] = {}
    for run in validation:
        by_graph.setdefault(run["instance"], []).append(run)
    learned, proxy = [], []
    evaluator.eval()
    for name, runs in by_graph.items():
        weights = view.weights(name)
        truth = np.array([oracle.value(weights, run["labels"]) for run in runs])
        if len(runs) < 3 or np.ptp(truth) < 1e-12:
            continue
        batch = GraphBatch([(weights, input_features(weights, view.features(weights), config))]
                           * len(runs))
        k = max(int(run["labels"].max()) + 1 for run in runs)
        hard = _one_hot([np.asarray(run["labels"]) for run in runs], (len(runs), weights.shape[0], k))
        angles = torch.zeros(len(runs), k, 2)
        for i, run in enumerate(runs):
            angles[i, : len(run["params"])] = torch.as_tensor(np.asarray(run["params"])).float()
        with torch.no_grad():
            predicted = evaluator(batch, hard, angles).numpy()
        modular = np.array([modularity(weights, run["labels"]) for run in runs])
        for values, out in ((predicted, learned), (modular, proxy)):
            out.append(0.0 if np.ptp(values) == 0 else
                       float(stats.spearmanr(values, truth).statistic))
    learned_mean = float(np.mean(learned)) if learned else float("nan")
    proxy_mean = float(np.mean(proxy)) if proxy else float("nan")
    return {"open": bool(learned and learned_mean > proxy_mean), "graphs": float(len(learned)),
            "learned_spearman": learned_mean, "modularity_spearman": proxy_mean}


class NeuralQAOA2(Agent):
    """Neural QAOA²: learned evaluator, partition and angle generators, TTA."""

    id = "neural_qaoa2"
    family = "qaoa"
    problems = ("papergym/QAOA2Partition-v*",)
    role = "method"
    paper = "zheng2026neuralqaoa2"
    Config = Config

    def solve(self, view, budget, seed):
        # torch draws (initializations, dropout) from a seeded generator scoped to this call
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return self._train(view, seed)

    def _train(self, view, seed):
        config = self.config
        rng = np.random.default_rng(seed)
        n_max = view.n_max
        names = [view.instances[i] for i in rng.permutation(len(view.instances))]
        names = names[: config.max_train_graphs]

        def graphs(chosen: list[str]) -> GraphBatch:
            return GraphBatch([(view.weights(x), input_features(
                view.weights(x), view.features(view.weights(x)), config)) for x in chosen])

        # 1. the evaluator: fitted to logged runs, the exact closed form or the oracle
        gate = None
        if config.evaluator == "closed_form":
            evaluator: nn.Module = ClosedFormEvaluator()
        elif config.evaluator == "oracle":
            evaluator = OracleEvaluator(n_max)
        else:
            evaluator = Evaluator(config.evaluator_hidden, config.evaluator_layers, config.dropout,
                                  feature_dim(config))
            if config.evaluator_epochs > 0:
                samples = self._logged(view, rng)
                names = list(dict.fromkeys([*names, *(x["instance"] for x in samples)]))
                held_out = set()
                if config.gate:  # validation on unseen graphs: the gate's question
                    logged = list(dict.fromkeys(x["instance"] for x in samples))
                    count = max(1, int(round(config.validation_share * len(logged))))
                    held_out = {logged[i] for i in rng.permutation(len(logged))[:count]}
                self.evaluator_validation = self._fit_evaluator(
                    evaluator, names, graphs(names), samples, rng, held_out)
                if config.gate:
                    gate = evaluator_gate(evaluator, [x for x in samples
                                                      if x["instance"] in held_out],
                                          view, config, n_max)
            elif config.gate:
                gate = {"open": False, "graphs": 0.0, "learned_spearman": float("nan"),
                        "modularity_spearman": float("nan")}
        evaluator.eval()
        for parameter in evaluator.parameters():
            parameter.requires_grad_(False)

        # 2. generators through the frozen evaluator: loss = −Evaluator(G, S_ste, angles)
        #    (the oracle: the score-function gradient of its exact value)
        gen = GEN(config, seed)
        if config.generator_steps > 0 and (gate is None or gate["open"]):
            names = names[: config.max_train_graphs]
            all_graphs = graphs(names)
            optimizer = torch.optim.AdamW(gen.parameters(), lr=config.generator_lr,
                                          weight_decay=config.weight_decay)
            scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.8,
                                                                   patience=100)
            for _ in range(config.generator_steps):
                chosen = rng.choice(len(names), size=min(config.generator_batch, len(names)),
                                    replace=False)
                batch = all_graphs.subset(chosen)
                ks = [blocks_needed(n, n_max) for n in batch.sizes]
                if isinstance(evaluator, OracleEvaluator):
                    soft = gen.partition(batch, ks)
                    loss, sampled = evaluator.reinforce_loss(soft, batch, ks,
                                                             config.oracle_samples, rng)
                    tracked = -float(np.mean([value for value, _ in sampled]))
                else:
                    straight_through, hard, angles, _ = gen(batch, ks, n_max)
                    loss = -_score(evaluator, batch, straight_through, hard, angles).mean()
                    tracked = float(loss.detach())
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                scheduler.step(tracked)
        return GENPolicy(gen, evaluator, config, n_max, view.N_max, seed, gate)

    def _logged(self, view, rng) -> list[dict]:
        runs = list(view.logged_runs())
        order = rng.permutation(len(runs))[: self.config.evaluator_samples]
        return [runs[i] for i in order]

    def _fit_evaluator(self, evaluator, names, all_graphs, samples, rng,
                       held_out: set[str] = frozenset()) -> dict[str, float]:
        """MSE to the runs' final r [code: train_critic.py]; returns validation statistics.
        Runs on ``held_out`` graphs are the validation split (else a random share of runs)."""
        config = self.config
        position = {name: i for i, name in enumerate(names)}
        size = all_graphs.weights.shape[1]
        k_max = max(int(x["labels"].max()) + 1 for x in samples)
        graph_index = np.array([position[x["instance"]] for x in samples])
        assignment = torch.zeros(len(samples), size, k_max)
        angles = torch.zeros(len(samples), k_max, 2)
        for i, x in enumerate(samples):
            labels = np.asarray(x["labels"])
            assignment[i, torch.arange(labels.size), torch.from_numpy(labels)] = 1.0
            angles[i, : len(x["params"])] = torch.as_tensor(np.asarray(x["params"])).float()
        target = torch.tensor([float(x["r"]) for x in samples], dtype=torch.float32)
        order = rng.permutation(len(samples))
        if held_out:
            unseen = np.array([samples[i]["instance"] in held_out for i in order])
            train, validation = order[~unseen], order[unseen]
        else:
            cut = max(1, int(round((1 - config.validation_share) * len(samples))))
            train, validation = order[:cut], order[cut:]
        optimizer = torch.optim.AdamW(evaluator.parameters(), lr=config.evaluator_lr,
                                      weight_decay=config.weight_decay)
        scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=3)

        def predict(indices):
            return evaluator(all_graphs.subset(graph_index[indices]), assignment[indices],
                             angles[indices])

        def validation_mse() -> float:
            evaluator.eval()
            with torch.no_grad():
                return float(F.mse_loss(predict(validation), target[validation]))

        best = (np.inf, copy.deepcopy(evaluator.state_dict()))
        for _ in range(config.evaluator_epochs):
            evaluator.train()
            shuffled = rng.permutation(train)
            for start in range(0, len(shuffled), config.evaluator_batch):
                chunk = shuffled[start : start + config.evaluator_batch]
                loss = F.mse_loss(predict(chunk), target[chunk])
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(evaluator.parameters(), max_norm=1.0)
                optimizer.step()
            if len(validation):
                mse = validation_mse()
                scheduler.step(mse)
                if mse < best[0]:  # keep the best validation epoch [code]
                    best = (mse, copy.deepcopy(evaluator.state_dict()))
        evaluator.load_state_dict(best[1])
        return {"validation_mse": float(best[0]), "samples": float(len(samples))}
