"""Random partitions with the reference number of blocks (lower references and controls).

Told k = k_ref by the problem (a privileged hint, so its rows are never ranked), it isolates
structure from the choice of k. ``within: none``: a uniform random partition into k non-empty
blocks. ``within: one_step``: the one-step partition (L(s), R(s, .)) split at random until it
has k blocks (k_ref >= its blocks on exact families): as many blocks as the coarsest
bisimulation, refining the local description, but not by composition (the control of the claim
that the fixed point recovers what one-step signatures miss).
"""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from papergym.agent import Agent, AgentConfig
from papergym.envs.abstraction.core import MDP
from papergym.envs.abstraction.oracles import one_step_partition


def random_blocks(n: int, k: int, rng: np.random.Generator) -> np.ndarray:
    """A uniform assignment of n items to k non-empty blocks (k <= n)."""
    return rng.permutation(np.concatenate([np.arange(k), rng.integers(0, k, size=n - k)]))


def random_refinement(base: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """``base`` split at random into k blocks: each extra block goes to a block of ``base``
    drawn in proportion to the splits it still allows (size - 1), then every block of ``base``
    is partitioned uniformly into its share. With k <= its blocks, ``base`` itself."""
    sizes = np.bincount(base)
    parts = np.ones(sizes.size, dtype=np.int64)
    room = sizes - 1
    for _ in range(max(0, min(k, base.size) - sizes.size)):
        b = int(rng.choice(sizes.size, p=room / room.sum()))
        parts[b] += 1
        room[b] -= 1
    out = np.empty(base.size, dtype=np.int64)
    offset = 0
    for b in range(sizes.size):
        members = np.nonzero(base == b)[0]
        out[members] = random_blocks(members.size, int(parts[b]), rng) + offset
        offset += int(parts[b])
    return out


class RandomRoutine:
    oracle_k = True

    def __init__(self, seed: int, within: str = "none") -> None:
        self.rng = np.random.default_rng([seed, 23])
        self.within = within

    def __call__(self, mdp: MDP) -> np.ndarray:
        n = mdp.n_states
        k = int(mdp.meta.get("k_hint") or max(1, n // 2))
        if self.within == "one_step":
            return random_refinement(one_step_partition(mdp), k, self.rng)
        return random_blocks(n, k, self.rng)


class RandomPartition(Agent):
    id = "random_partition"
    family = "abstraction"
    role = "reference"
    paper = "zhang2026behavioral"
    problems = ("papergym/StateAbstraction-v*",)

    class Config(AgentConfig):
        within: Literal["none", "one_step"] = "none"

    def solve(self, view: Any, budget: Any, seed: int) -> RandomRoutine:
        return RandomRoutine(seed, self.config.within)
