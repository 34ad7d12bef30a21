"""Seeded instance generators: garnets, lifted MDPs with a planted homomorphism (optionally with
value-equal "twins"), their delta-perturbations, and the rooms grid with distractor bits.

Every generator takes a ``numpy.random.Generator`` and returns an :class:`Instance`; the same
seed gives identical arrays. The constructions are the family spec's [recon]:

- ``garnet``: each (s, a) has b successors drawn without replacement with Dirichlet(1)
  probabilities, R ~ U[0, 1] (``reward_levels`` = L >= 2: uniform on {0, 1/(L-1), ..., 1}),
  unsafe w.p. ``label_rate``: no planted structure.
- ``lifted``: an abstract garnet M_bar, resampled until reduced (its coarsest bisimulation is
  the identity; checked after the twins are added). A twin s' of s copies R_bar(s, .) and
  P_bar(.|s, .) with the opposite label and receives half of every incoming transition mass of
  s, so Q*(s') = Q*(s) while s, s' are not bisimilar. Each abstract state gets U{1..c_max}
  copies (at least one state two), P(s'|s, a) = P_bar(h(s')|h(s), a) q_{s,a}(s') with
  q_{s,a} ~ Dirichlet(1) over the copies of h(s') (``spread`` > 0: over that many copies drawn
  at random), R = R_bar o h, L = L_bar o h. h is then an exact homomorphism and its kernel is
  the coarsest bisimulation. With ``reward_levels`` (StateAbstraction-v1: 3, rewards in
  {0, 0.5, 1}) abstract states share one-step signatures (L, R(s, .)) while their transitions
  differ, so the one-step partition is coarser than the coarsest bisimulation on most instances;
  with continuous rewards (v0) the two coincide.
- ``perturbed``: a lifted instance with R += U[-delta, delta] (clipped to [0, 1]) and every
  P(.|s, a) mixed (1 - delta) P + delta Dirichlet(1) on the same support: h is
  delta-approximate and the exact bisimulation is (generically) the identity.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from papergym.envs.abstraction.core import MDP
from papergym.envs.abstraction.oracles import coarsest_bisimulation

FAMILIES = ("garnet", "lifted", "perturbed", "grid")


@dataclass(frozen=True)
class Instance:
    """One generated MDP with what the problem knows about it (never shown to agents)."""

    mdp: MDP
    family: str
    planted: np.ndarray | None = None      # h: S -> S_bar (lifted, perturbed, grid)
    abstract: MDP | None = None            # M_bar (lifted, grid)
    twins: tuple[tuple[int, int], ...] = ()  # abstract (state, twin) pairs


def _size(value: int | tuple[int, int] | list[int], rng: np.random.Generator) -> int:
    if isinstance(value, (tuple, list)):
        lo, hi = int(value[0]), int(value[1])
        return int(rng.integers(lo, hi + 1))
    return int(value)


def garnet_arrays(n_states: int, n_actions: int, branching: int, rng: np.random.Generator,
                  reward_levels: int = 0) -> tuple[np.ndarray, np.ndarray]:
    if not 1 <= branching <= n_states:
        raise ValueError(f"branching must be in [1, n_states={n_states}], got {branching}")
    P = np.zeros((n_states, n_actions, n_states))
    for s in range(n_states):
        for a in range(n_actions):
            succ = rng.choice(n_states, size=branching, replace=False)
            P[s, a, succ] = rng.dirichlet(np.ones(branching))
    if reward_levels == 0:
        return rng.random((n_states, n_actions)), P
    if reward_levels < 2:
        raise ValueError(f"reward_levels must be 0 (R ~ U[0, 1]) or >= 2, got {reward_levels}")
    return rng.integers(0, reward_levels, size=(n_states, n_actions)) / (reward_levels - 1), P


def _labels(n: int, label_rate: float, rng: np.random.Generator) -> np.ndarray:
    return rng.random(n) < label_rate


def garnet(rng: np.random.Generator, n_states: int = 12, n_actions: int = 2, branching: int = 2,
           label_rate: float = 0.1, gamma: float = 0.9, reward_levels: int = 0) -> Instance:
    n = _size(n_states, rng)
    R, P = garnet_arrays(n, n_actions, branching, rng, reward_levels)
    return Instance(MDP(R, P, _labels(n, label_rate, rng), gamma, name="garnet"), "garnet")


def _abstract_with_twins(rng: np.random.Generator, n_abstract: int, n_actions: int,
                         branching: int, twin_frac: float, label_rate: float, gamma: float,
                         reward_levels: int = 0) -> tuple[MDP, tuple[tuple[int, int], ...]]:
    n_twins = int(round(twin_frac * n_abstract))
    for _ in range(1000):
        R, P = garnet_arrays(n_abstract, n_actions, branching, rng, reward_levels)
        unsafe = _labels(n_abstract, label_rate, rng)
        twins = []
        for s in rng.choice(n_abstract, size=n_twins, replace=False):
            t = R.shape[0]
            R = np.vstack([R, R[s]])
            P = np.concatenate([P, P[s][None]], axis=0)
            P = np.concatenate([P, np.zeros((t + 1, n_actions, 1))], axis=2)
            P[:, :, t] = 0.5 * P[:, :, s]      # half of every incoming mass of s moves to s'
            P[:, :, s] *= 0.5
            unsafe = np.append(unsafe, not unsafe[s])
            twins.append((int(s), t))
        mdp = MDP(R, P, unsafe, gamma, name="abstract")
        if coarsest_bisimulation(mdp).max() + 1 == mdp.n_states:
            return mdp, tuple(twins)
    raise RuntimeError("could not draw a reduced abstract MDP in 1000 tries")


def lift(abstract: MDP, rng: np.random.Generator, copies: tuple[int, int] = (1, 3),
         spread: int = 0) -> tuple[MDP, np.ndarray]:
    """The concrete MDP and h: copies of each abstract state, mass spread by Dirichlet(1)."""
    n_bar, A = abstract.n_states, abstract.n_actions
    lo, hi = int(copies[0]), int(copies[1])
    if hi < 2:
        raise ValueError("copies must allow at least two copies of some state (c_max >= 2)")
    for _ in range(1000):
        counts = rng.integers(lo, hi + 1, size=n_bar)
        if counts.max() >= 2:
            break
    h = rng.permutation(np.repeat(np.arange(n_bar), counts))
    members = [np.nonzero(h == b)[0] for b in range(n_bar)]
    S = h.size
    P = np.zeros((S, A, S))
    for s in range(S):
        for a in range(A):
            for target in np.nonzero(abstract.P[h[s], a])[0]:
                pool = members[target]
                if spread and pool.size > spread:
                    pool = rng.choice(pool, size=spread, replace=False)
                P[s, a, pool] = abstract.P[h[s], a, target] * rng.dirichlet(np.ones(pool.size))
    mdp = MDP(abstract.R[h].copy(), P, abstract.unsafe[h].copy(), abstract.gamma, name="lifted")
    return mdp, h


def lifted(rng: np.random.Generator, n_abstract: int | tuple[int, int] = 5,
           copies: tuple[int, int] = (1, 3), n_actions: int = 2, branching: int = 2,
           twin_frac: float = 0.0, label_rate: float = 0.1, gamma: float = 0.9,
           spread: int = 0, reward_levels: int = 0) -> Instance:
    n_bar = _size(n_abstract, rng)
    abstract, twins = _abstract_with_twins(rng, n_bar, n_actions, branching, twin_frac,
                                           label_rate, gamma, reward_levels)
    mdp, h = lift(abstract, rng, tuple(copies), spread)
    return Instance(mdp, "lifted", planted=h, abstract=abstract, twins=twins)


def perturbed(rng: np.random.Generator, delta: float = 0.05, **lifted_kwargs) -> Instance:
    base = lifted(rng, **lifted_kwargs)
    mdp = base.mdp
    R = np.clip(mdp.R + rng.uniform(-delta, delta, size=mdp.R.shape), 0.0, 1.0)
    P = mdp.P.copy()
    for s in range(mdp.n_states):
        for a in range(mdp.n_actions):
            support = np.nonzero(P[s, a])[0]
            P[s, a, support] = (1 - delta) * P[s, a, support] + delta * rng.dirichlet(
                np.ones(support.size))
    noisy = MDP(R, P, mdp.unsafe.copy(), mdp.gamma, name="perturbed")
    return Instance(noisy, "perturbed", planted=base.planted, abstract=None)


def make_instance(family: str, seed: int, stream: tuple[int, ...] = (), **kwargs) -> Instance:
    """The instance of ``family`` drawn from ``seed`` (kwargs: the generator's); ``stream``
    (extra words of the seed) gives each cell of a benchmark its own instances."""
    rng = np.random.default_rng([int(seed), 31, *stream])
    if family == "garnet":
        return garnet(rng, **kwargs)
    if family == "lifted":
        return lifted(rng, **kwargs)
    if family == "perturbed":
        return perturbed(rng, **kwargs)
    if family == "grid":
        from papergym.envs.abstraction.grid import grid_instance

        return grid_instance(**kwargs)
    raise ValueError(f"unknown instance family {family!r}; choose one of {', '.join(FAMILIES)}")
