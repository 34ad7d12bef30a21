"""QAOA² with modularity partitions and one tuned fixed (γ*, β*) for every block [recon].

A tuned baseline that isolates learned angles from a strong fixed warm start: on the
training graphs, take the modularity partition's blocks, scale each by max|w| (as the
subsolver does), and pick (γ*, β*) on a 64×64 grid over γ ∈ [0, 2π), β ∈ [0, π/2) (⟨C⟩ has
period π/2 in β) maximizing the mean closed-form ⟨C⟩/Σ|w| over blocks.
"""

from __future__ import annotations

import numpy as np

from papergym.agent import Agent, AgentConfig
from papergym.agents.qaoa.common import PartitionPolicy
from papergym.envs.qaoa.partitions import modularity_partition
from papergym.envs.qaoa.subsolver import ClosedForm


class Config(AgentConfig):
    grid: int = 64
    max_train_graphs: int = 16
    max_blocks: int = 64


def tune_fixed_angles(blocks: list[np.ndarray], grid: int) -> tuple[float, float]:
    """argmax over the grid of the mean of ⟨C⟩/Σ|w| over (max|w|-scaled) blocks."""
    gammas = np.linspace(0, 2 * np.pi, grid, endpoint=False)
    betas = np.linspace(0, np.pi / 2, grid, endpoint=False)
    gamma_grid, beta_grid = (a.ravel() for a in np.meshgrid(gammas, betas, indexing="ij"))
    score = np.zeros(gamma_grid.size)
    for block in blocks:
        scaled = block / np.abs(block).max()
        closed_form = ClosedForm(scaled)
        total = np.abs(np.triu(scaled, 1)).sum()
        for start in range(0, gamma_grid.size, 512):  # chunks keep the (G, 4, E, n) arrays small
            part = slice(start, start + 512)
            score[part] += closed_form(gamma_grid[part], beta_grid[part])[0] / total
    best = int(np.argmax(score))
    return float(gamma_grid[best]), float(beta_grid[best])


class QAOA2FixedAngle(Agent):
    """Modularity partitions + one grid-tuned (γ*, β*) from the training graphs."""

    id = "qaoa2_fixed_angle"
    family = "qaoa"
    problems = ("papergym/QAOA2Partition-v*",)
    role = "baseline"
    paper = "zheng2026neuralqaoa2"
    Config = Config

    def solve(self, view, budget, seed):
        rng = np.random.default_rng(seed)
        n_max = view.n_max
        names = [view.instances[i] for i in rng.permutation(len(view.instances))]
        blocks = []
        for name in names[: self.config.max_train_graphs]:
            weights = view.weights(name)
            labels = modularity_partition(weights, n_max, rng)
            for label in range(int(labels.max()) + 1):
                nodes = np.flatnonzero(labels == label)
                block = weights[np.ix_(nodes, nodes)]
                if nodes.size > 1 and np.any(block):
                    blocks.append(block)
        order = rng.permutation(len(blocks))[: self.config.max_blocks]
        gamma, beta = tune_fixed_angles([blocks[i] for i in order], self.config.grid)
        self.tuned_angles = (gamma, beta)
        return PartitionPolicy(
            lambda w, r: modularity_partition(w, n_max, r),
            lambda w, labels, r: np.tile([gamma, beta], (int(labels.max()) + 1, 1)),
            n_max, view.N_max, seed)
