"""AbstractedGrid-v0: four rooms with lava and distractor bits; dropping the bits is exact."""

from __future__ import annotations

from functools import cache, lru_cache
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from papergym.actions import check_action
from papergym.envs.abstraction.core import MDP

GAMMA = 0.95
STEP_REWARD, GOAL_REWARD, LAVA_REWARD = -0.01, 1.0, -1.0
MOVES = ((0, -1), (1, 0), (0, 1), (-1, 0))  # up, right, down, left as (dx, dy)
SIZES = (5, 9, 25)


@cache
def layout(size: int) -> dict[str, Any]:
    """Walls (a cross through the middle with two doorways per arm), start, goal and lava."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {SIZES}, got {size}")
    mid = size // 2
    wall = np.zeros((size, size), dtype=bool)              # indexed [y, x]
    wall[mid, :] = True
    wall[:, mid] = True
    for door in (mid // 2, mid + 1 + (size - mid - 1) // 2):
        wall[door, mid] = False
        wall[mid, door] = False
    lava = [(size - 1, 0), (0, size - 1), (mid + 1, size - 1)]  # far corners, next to the goal
    return {"wall": wall, "start": (0, 0), "goal": (size - 1, size - 1),
            "lava": tuple((x, y) for x, y in lava if not wall[y, x])}


def _move(size: int, wall: np.ndarray, x: int, y: int, direction: int) -> tuple[int, int]:
    dx, dy = MOVES[direction]
    nx, ny = x + dx, y + dy
    if not (0 <= nx < size and 0 <= ny < size) or wall[ny, nx]:
        return x, y
    return nx, ny


def position_outcomes(size: int, slip: float, x: int, y: int, action: int
                      ) -> list[tuple[float, int, int]]:
    """(probability, x', y') of one move: the intended direction w.p. 1 - slip, each
    perpendicular direction w.p. slip / 2."""
    wall = layout(size)["wall"]
    out = [(1.0 - slip, *_move(size, wall, x, y, action))]
    for side in ((action + 1) % 4, (action + 3) % 4):
        out.append((slip / 2, *_move(size, wall, x, y, side)))
    return [o for o in out if o[0] > 0]


@lru_cache(maxsize=8)
def grid_model(size: int, n_bits: int, slip: float) -> tuple[MDP, np.ndarray]:
    """The exact MDP (state = (y W + x) 2^m + bits) and h = drop the bits. Goal and lava cells
    are absorbing with reward 0 (the episode is over); bits are uniform after every step."""
    info = layout(size)
    wall, goal, lava = info["wall"], info["goal"], set(info["lava"])
    n_pos, n_b = size * size, 2**n_bits
    R_pos = np.zeros((n_pos, 4))
    P_pos = np.zeros((n_pos, 4, n_pos))
    for y in range(size):
        for x in range(size):
            p = y * size + x
            if wall[y, x] or (x, y) == goal or (x, y) in lava:
                P_pos[p, :, p] = 1.0
                continue
            for a in range(4):
                for prob, nx, ny in position_outcomes(size, slip, x, y, a):
                    P_pos[p, a, ny * size + nx] += prob
                    reward = (GOAL_REWARD if (nx, ny) == goal else
                              LAVA_REWARD if (nx, ny) in lava else STEP_REWARD)
                    R_pos[p, a] += prob * reward
    h = np.repeat(np.arange(n_pos), n_b)
    R = R_pos[h]
    P = np.repeat(P_pos[h][:, :, :, None] / n_b, n_b, axis=3).reshape(n_pos * n_b, 4, n_pos * n_b)
    unsafe_pos = np.zeros(n_pos, dtype=bool)
    for x, y in lava:
        unsafe_pos[y * size + x] = True
    xs, ys = h % size, h // size
    bits = (np.arange(h.size)[:, None] % n_b >> np.arange(n_bits)[None, :]) & 1
    features = np.column_stack([xs, ys, bits]).astype(float)
    start = (info["start"][1] * size + info["start"][0]) * n_b
    goal_pos = np.zeros(n_pos, dtype=bool)
    goal_pos[goal[1] * size + goal[0]] = True
    meta = {"goal": goal_pos[h], "terminal": (goal_pos | unsafe_pos)[h], "bit_values": n_b}
    mdp = MDP(R, P, unsafe_pos[h], GAMMA, features=features, start=start, name="grid", meta=meta)
    return mdp, h


def grid_instance(size: int = 5, n_bits: int = 1, slip: float = 0.1, gamma: float | None = None):
    from papergym.envs.abstraction.core import induced_model
    from papergym.envs.abstraction.instances import Instance

    mdp, h = grid_model(int(size), int(n_bits), float(slip))
    return Instance(mdp, "grid", planted=h, abstract=induced_model(mdp, h))


class AbstractedGridEnv(gym.Env):
    """Four rooms with lava cells and distractor bits that neither reward nor motion depends on.

    ## Description
    A W x W gridworld (W = ``size``) split into four rooms by a cross of walls with two
    doorways per arm. The agent starts in the top-left cell; the goal is the bottom-right cell;
    three lava cells are labelled unsafe. ``n_bits`` distractor bits are part of the state and
    each flips independently with probability 0.5 per step. Dropping the bits is an exact
    abstraction (a homomorphism onto the W x W grid), known in closed form.

    ## Action Space
    ``Discrete(4)``: up, right, down, left. With probability ``slip`` the move goes to one of the
    two perpendicular directions (each slip / 2). Moves into a wall or off the grid stay put.
    Anything that is not an integer in [0, 4) raises ``InvalidAction``.

    ## Observation Space
    ``obs="index"``: ``Discrete(W W 2^m)``, the state index (y W + x) 2^m + bits.
    ``obs="multi"``: ``MultiDiscrete([W, W, 2, ..., 2])`` (x, y, bits). With ``abstraction``
    (an integer array mapping state indices to blocks 0..k-1): ``Discrete(k)``, the block.

    ## Rewards
    +1 on reaching the goal, -1 on entering lava, -0.01 for every other step (expected rewards in
    ``model()`` average over the slip).

    ## Starting State
    The top-left cell; bits uniform from the reset seed.

    ## Episode End
    Terminated at the goal or in lava (``info["unsafe"] = True``); truncated after
    ``max_steps``.

    ## Arguments
    ``size`` (5 | 9 | 25), ``n_bits`` (1 | 3 | 6), ``slip`` (0.1), ``max_steps`` (100), ``obs``
    (``index`` | ``multi``), ``abstraction`` (None or an int array of length W W 2^m).
    ``env.unwrapped.model()`` returns the exact labelled MDP (R, P, unsafe, gamma = 0.95,
    start) and the drop-bits map.

    ## Tiers
    smoke: 5 x 5, 1 bit. standard: 9 x 9, 3 bits (648 states). full: 25 x 25, 6 bits.

    ## Reference
    The family's RL-facing case of Zhang, Luo, Baltieri, "Compositional Behavioral Semantics
    (and Metrics) for State Abstraction in RL" (ICML 2026, arXiv 2606.25357); the rooms
    layout, lava and bits are reconstructed (the paper has no experiments).

    ## Version History
    v0: initial release.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": []}
    problem_id: ClassVar[str] = "papergym/AbstractedGrid-v0"

    def __init__(self, size: int = 5, n_bits: int = 1, slip: float = 0.1, max_steps: int = 100,
                 obs: str = "index", abstraction: Any = None) -> None:
        if n_bits not in (1, 3, 6):
            raise ValueError(f"n_bits must be 1, 3 or 6, got {n_bits}")
        if not 0 <= slip < 1 or max_steps < 1:
            raise ValueError("need 0 <= slip < 1 and max_steps >= 1")
        if obs not in ("index", "multi"):
            raise ValueError(f"obs must be 'index' or 'multi', got {obs!r}")
        self.size, self.n_bits, self.slip = int(size), int(n_bits), float(slip)
        self.max_steps, self.obs_mode = int(max_steps), obs
        self.info = layout(self.size)
        self.n_states = self.size * self.size * 2**self.n_bits
        self.abstraction = None
        if abstraction is not None:
            phi = np.asarray(abstraction)
            if phi.shape != (self.n_states,) or phi.dtype.kind not in "iu" or phi.min() < 0:
                raise ValueError(f"abstraction must be a non-negative int array of length "
                                 f"{self.n_states}, got {phi.dtype} {phi.shape}")
            self.abstraction = phi.astype(np.int64)
            self.observation_space = spaces.Discrete(int(phi.max()) + 1)
        elif obs == "index":
            self.observation_space = spaces.Discrete(self.n_states)
        else:
            self.observation_space = spaces.MultiDiscrete([self.size, self.size] + [2] * self.n_bits)
        self.action_space = spaces.Discrete(4)
        self.x, self.y, self.bits, self.t = 0, 0, np.zeros(self.n_bits, dtype=np.int64), 0

    def model(self) -> tuple[MDP, np.ndarray]:
        return grid_model(self.size, self.n_bits, self.slip)

    def state_index(self) -> int:
        bits = int(np.sum(self.bits << np.arange(self.n_bits)))
        return (self.y * self.size + self.x) * 2**self.n_bits + bits

    def _observation(self) -> Any:
        if self.abstraction is not None:
            return int(self.abstraction[self.state_index()])
        if self.obs_mode == "index":
            return self.state_index()
        return np.array([self.x, self.y, *self.bits], dtype=np.int64)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.x, self.y = self.info["start"]
        self.bits = self.np_random.integers(0, 2, size=self.n_bits)
        self.t = 0
        return self._observation(), {"unsafe": False}

    def step(self, action: Any):
        a = int(check_action(self.action_space, action, self.problem_id))
        u = self.np_random.random()
        direction = a
        if u >= 1.0 - self.slip:   # slip to a perpendicular direction
            direction = (a + 1) % 4 if u < 1.0 - self.slip / 2 else (a + 3) % 4
        self.x, self.y = _move(self.size, self.info["wall"], self.x, self.y, direction)
        flips = self.np_random.random(self.n_bits) < 0.5
        self.bits = self.bits ^ flips.astype(np.int64)
        self.t += 1
        at_goal = (self.x, self.y) == self.info["goal"]
        in_lava = (self.x, self.y) in self.info["lava"]
        reward = GOAL_REWARD if at_goal else LAVA_REWARD if in_lava else STEP_REWARD
        terminated = at_goal or in_lava
        truncated = (not terminated) and self.t >= self.max_steps
        return self._observation(), reward, terminated, truncated, {"unsafe": in_lava}
