"""PerformativeGame-v0: the polymatrix and bimatrix instances seen as games (PettingZoo)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from papergym.actions import check_actions
from papergym.envs.performative.core import project_simplex
from papergym.envs.performative.instances import AffineInstance, make_instance
from papergym.problem import Budget, EvalResult, Task, check_training_seed


class PerformativeGameEnv(ParallelEnv):
    """Learning dynamics on the games behind the performative instances.

    ## Description
    Each block of the performative decision vector is a player: ``bimatrix`` has ``row``
    (Delta_m) and ``col`` (Delta_n) with payoffs x^T R y and x^T C y; ``polymatrix`` has
    ``player_0..player_{d-1}``, each choosing the probability of action 1. Simultaneous
    projected gradient play with step ``lam`` is exactly RRM on PerformativeAffine-v0 for the
    same instance seed [derived; tested to 1e-12], so learning dynamics and the performative
    view compare one to one. [recon: the multi-agent view is this project's addition.]

    ## Action Space
    bimatrix: ``row`` Box(0, 1, (m,)), ``col`` Box(0, 1, (n,)), projected onto the simplex
    (distance in ``info[agent]["projection"]``); polymatrix: Box(0, 1, (1,)), clipped.
    A non-finite action raises ``ValueError``.

    ## Observation Space
    Box(-inf, inf, (k,), float64) per agent: its own last strategy, the other players' last
    strategies, and its own payoff gradient (row: R y; col: C^T x; polymatrix:
    sum_j A_ij x_j + b_i), the quantity a performative sample reveals.

    ## Rewards
    Each player's expected payoff at the profile just played.

    ## Starting State
    The instance's x_0 (``x0="random"``, drawn with the instance) or the center.

    ## Episode End
    Truncation after ``T`` rounds. ``info[agent]`` carries ``exploitability`` (largest
    unilateral gain) and ``gap`` (fixed-point gap of the joint profile).

    ## Arguments
    ``kind`` (bimatrix | polymatrix), ``m``, ``n`` | ``d``, ``lam``, ``T``, ``game``
    (general | zerosum | cyclic | savani: the Savani-von Stengel hard games, m = n even),
    ``x0``, ``instance_seed``.

    ## Tiers
    smoke 2x2 games, T = 100; standard m = n in {2, 3, 5}, polymatrix d in {5, 8}, T = 2,000;
    full m = n <= 10, d <= 20, T = 1e5.

    ## Reference
    Anagnostides et al., ICML 2026 (PS of the affine class = Nash equilibria);
    Daskalakis et al. 2018 / Wei et al. 2021 (optimistic gradient, last-iterate convergence).

    ## Version History
    v0: initial release; later ``game="savani"`` was added (a new option: every existing
    configuration draws the same games as before, so the id stays v0).
    """

    metadata: ClassVar[dict[str, Any]] = {"name": "performative_game_v0", "render_modes": []}

    def __init__(self, kind: str = "bimatrix", m: int = 2, n: int = 2, d: int = 5,
                 lam: float = 0.2, T: int = 100, game: str = "general", x0: str = "random",
                 instance_seed: int | None = None) -> None:
        if kind not in ("bimatrix", "polymatrix"):
            raise ValueError(f"kind must be 'bimatrix' or 'polymatrix', got {kind!r}")
        self.kind, self.T, self.x0_mode, self.instance_seed = kind, int(T), x0, instance_seed
        self.instance_kwargs = dict(family=kind, m=m, n=n, d=d, lam=lam, game=game)
        self.instance: AffineInstance = make_instance(seed=instance_seed or 0, **self.instance_kwargs)
        if kind == "bimatrix":
            self.possible_agents = ["row", "col"]
            self.blocks = {"row": slice(0, m), "col": slice(m, m + n)}
        else:
            self.possible_agents = [f"player_{i}" for i in range(d)]
            self.blocks = {f"player_{i}": slice(i, i + 1) for i in range(d)}
        self.dim = self.instance.dim
        everyone = np.arange(self.dim)
        self.others = {a: np.delete(everyone, np.arange(b.start, b.stop))
                       for a, b in self.blocks.items()}
        self.agents: list[str] = []
        self.x = self.instance.domain.center()
        self.rng = np.random.default_rng()

    @functools.cache  # noqa: B019  (PettingZoo's documented idiom)
    def observation_space(self, agent: str) -> spaces.Box:
        size = self.blocks[agent].stop - self.blocks[agent].start
        return spaces.Box(-np.inf, np.inf, (self.dim + size,), dtype=np.float64)

    @functools.cache  # noqa: B019
    def action_space(self, agent: str) -> spaces.Box:
        size = self.blocks[agent].stop - self.blocks[agent].start
        return spaces.Box(0.0, 1.0, (size,), dtype=np.float64)

    def _observations(self) -> dict[str, np.ndarray]:
        grad = self.instance.payoff_gradients(self.x)
        out = {}
        for agent in self.agents:
            block = self.blocks[agent]
            out[agent] = np.concatenate([self.x[block], self.x[self.others[agent]], grad[block]])
        return out

    def _infos(self, projection: dict[str, float]) -> dict[str, dict[str, float]]:
        expl = self.instance.exploitability(self.x)
        gap = self.instance.gap(self.x)
        return {a: {"exploitability": expl, "gap": gap, "projection": projection.get(a, 0.0),
                    "round": self.round} for a in self.agents}

    def reset(self, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        if self.instance_seed is not None:
            inst_seed = self.instance_seed
        elif seed is not None:
            inst_seed = seed
        else:
            inst_seed = int(self.rng.integers(2**31 - 1))
        self.instance = make_instance(seed=inst_seed, **self.instance_kwargs)
        self.agents = list(self.possible_agents)
        self.x = self.instance.x0(self.x0_mode)
        self.round = 0
        return self._observations(), self._infos({})

    def step(self, actions: dict[str, Any]):
        # every live player acts with a finite real vector of its block's shape; outside
        # the simplex (bimatrix) or [0, 1] (polymatrix) it is projected, the distance in info
        checked = check_actions(actions, self.agents, self.action_space,
                                "papergym/PerformativeGame-v0")
        x_new = self.x.copy()
        projection = {}
        for agent in self.agents:
            a, block = checked[agent], self.blocks[agent]
            if self.kind == "polymatrix":
                p = np.clip(a, 0.0, 1.0)
            elif a.min() >= 0.0 and abs(a.sum() - 1.0) <= 1e-12:
                p = a  # already a mixed strategy (saves a sort per player and round)
            else:
                p = project_simplex(a)
            projection[agent] = float(np.linalg.norm(p - a))
            x_new[block] = p
        self.x = x_new
        self.round += 1
        payoffs = self.instance.player_payoffs(self.x)
        if self.kind == "bimatrix":
            rewards = {"row": float(payoffs[0]), "col": float(payoffs[1])}
        else:
            rewards = {a: float(payoffs[i]) for i, a in enumerate(self.agents)}
        observations, infos = self._observations(), self._infos(projection)
        done = self.round >= self.T
        terminations = {a: False for a in self.agents}
        truncations = {a: done for a in self.agents}
        if done:
            self.agents = []
        return observations, rewards, terminations, truncations, infos


def parallel_env(**kwargs: Any) -> PerformativeGameEnv:
    """PettingZoo factory: ``parallel_env(kind="bimatrix", m=3, n=3, lam=0.2, T=2000)``."""
    return PerformativeGameEnv(**kwargs)


ENV_KEYS = ("kind", "m", "n", "d", "lam", "T", "game", "x0")
TASK_KEYS = ("n_eval_games", "n_train_games", "train_rounds")
SUCCESS_EXPLOITABILITY = 1e-4


class GameView:
    """Metered training games (``rounds`` budget) from seeds < 10^6."""

    problem = "game"

    def __init__(self, env_kwargs: dict[str, Any], budget: Budget, seed: int, n_train: int):
        self.env_kwargs, self.budget, self.seed = env_kwargs, budget, seed
        rng = np.random.default_rng([seed, 13])
        self.train_instance_seeds = [int(s) for s in rng.integers(0, 10**6 - 1, size=n_train)]
        probe = PerformativeGameEnv(**env_kwargs)
        self.horizon, self.lam, self.kind = probe.T, probe.instance.params["lam"], probe.kind
        self.possible_agents = list(probe.possible_agents)
        self.block_sizes = {a: probe.action_space(a).shape[0] for a in probe.possible_agents}

    def play(self, policy: Any, instance_seed: int) -> float:
        """Run ``policy`` on one training game (charging every round); final exploitability."""
        instance_seed = check_training_seed(instance_seed, "GameView.play")
        env = PerformativeGameEnv(**self.env_kwargs, instance_seed=instance_seed)
        observations, infos = env.reset(seed=instance_seed)
        if hasattr(policy, "reset"):
            policy.reset()
        while env.agents:
            self.budget.spend("rounds", 1)
            observations, _, _, _, infos = env.step(policy(observations))
        return float(next(iter(infos.values()))["exploitability"])


def run_game(env: PerformativeGameEnv, policy: Any, seed: int) -> list[np.ndarray]:
    observations, _ = env.reset(seed=seed)
    if hasattr(policy, "reset"):
        policy.reset()
    profiles = [env.x.copy()]
    while env.agents:
        observations, _, _, _, _ = env.step(policy(observations))
        profiles.append(env.x.copy())
    return profiles


class PerformativeGameTask(Task):
    """Score a joint learning rule (dict of observations -> dict of actions) on held-out games.

    ## Data
    Training games from seeds < 10^6 through ``view.play(policy, seed)`` (``rounds`` budget);
    ``n_eval_games`` held-out games from ``Task.eval_seeds``.

    ## Metrics
    ``exploitability`` (primary, min) of the final profile; ``success`` = exploitability <= 1e-4;
    ``log10_exploitability``; ``gap_final`` (fixed-point gap of the final profile); ``rounds``.
    One unit per game.

    ## Tiers, Reference, Version History
    As :class:`PerformativeGameEnv`.
    """

    id: ClassVar[str] = "papergym/PerformativeGame-v0"
    family: ClassVar[str] = "performative"
    paper: ClassVar[str] = "anagnostides2026"
    task_kwargs: ClassVar[tuple[str, ...]] = TASK_KEYS
    metrics: ClassVar[Mapping[str, str]] = {
        "exploitability": "min", "log10_exploitability": "min", "success": "max",
        "gap_final": "min", "rounds": "min",
    }

    def __init__(self, tier: str = "smoke", n_eval_games: int = 5, n_train_games: int = 2,
                 train_rounds: int | None = None, **env_kwargs: Any) -> None:
        super().__init__(tier=tier, **env_kwargs)
        unknown = set(env_kwargs) - set(ENV_KEYS)
        if unknown:
            raise ValueError(f"PerformativeGame-v0: unknown arguments {sorted(unknown)}")
        self.env_kwargs = env_kwargs
        self.n_eval_games, self.n_train_games = int(n_eval_games), int(n_train_games)
        horizon = PerformativeGameEnv(**env_kwargs).T
        self.train_rounds = int(train_rounds or 12 * n_train_games * horizon)

    @property
    def budget(self) -> Budget:
        return Budget(rounds=self.train_rounds)

    def train_view(self, seed: int, budget: Budget) -> GameView:
        return GameView(self.env_kwargs, budget, seed, self.n_train_games)

    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        if not callable(artifact):
            raise TypeError("PerformativeGame-v0 expects a joint policy (dict of observations "
                            f"-> dict of actions), got {type(artifact).__name__}")
        env = PerformativeGameEnv(**self.env_kwargs)
        units = []
        for k, eval_seed in enumerate(self.eval_seeds(seed, self.n_eval_games)):
            profiles = run_game(env, artifact, eval_seed)
            expl = env.instance.exploitability(profiles[-1])
            units.append({"instance": k, "exploitability": expl,
                          "log10_exploitability": float(np.log10(max(expl, 1e-16))),
                          "success": float(expl <= SUCCESS_EXPLOITABILITY),
                          "gap_final": env.instance.gap(profiles[-1]),
                          "rounds": float(len(profiles) - 1)})
        metrics = {k: float(np.mean([u[k] for u in units])) for k in units[0] if k != "instance"}
        return EvalResult(metrics=metrics, units=units)
