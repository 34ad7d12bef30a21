"""PerformativeAffine-v0: deploy a model, the data shifts affinely in response."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from papergym.actions import check_action
from papergym.envs.performative import oracles
from papergym.envs.performative.instances import AffineInstance, make_instance
from papergym.problem import (
    Budget,
    EvalResult,
    MeteredEnv,
    MetricDeclaration,
    Privileges,
    Task,
    check_training_seed,
    instance_id,
)

PAPER = "anagnostides2026"
TASK_KEYS = ("n_eval_instances", "n_train_instances", "train_deployments")


class PerformativeAffineEnv(gym.Env):
    """Repeated deployment under an affine performative shift.

    ## Description
    The agent is the model deployer of Perdomo et al. (2020) in the hard class of
    Anagnostides et al. (2026): loss l(x; z) = 1/2 ||x - z||^2 and D(x) = N(g(x), sigma^2 I)
    with g(x) = M x + c, so the repeated-risk-minimization map is G(x) = Pi_X(g(x)) and
    rho = ||M||_2. Every step deploys a point x_t in X and reveals data drawn from D(x_t).
    A performatively stable (PS) point satisfies x* = G(x*). Four instance families
    (``envs/performative/instances.py``): ``contractive`` (rho < 1), ``nonexpansive`` (rho = 1),
    ``polymatrix`` (rho <= 1 + lam, PS = Nash equilibria of a polymatrix game) and
    ``bimatrix`` (X = Delta_m x Delta_n, PS = Nash equilibria of (R, C)).

    ## Action Space
    ``Box(0, 1, (D,), float64)`` with D = d (bimatrix: m + n): the next point to deploy.
    Points outside X are projected onto X (bimatrix: blockwise onto the simplices) and
    counted in ``info["n_projected"]``; a non-finite action raises ``ValueError``.

    ## Observation Space
    ``Dict(x=Box(0, 1, (D,)), zbar=Box(-inf, inf, (D,)), t=Box(0, T, (1,)))``, float64:
    the last deployed point, the mean of ``n_samples`` draws from D(x_t) (exactly g(x_t)
    when sigma = 0) and the deployment counter. ``obs="batch"`` adds
    ``z=Box(-inf, inf, (n_samples, D))``, the draws themselves.

    ## Rewards
    ``task="stability"``: -||x_t - Pi_X(zbar_t)|| (the exact fixed-point gap when sigma = 0).
    ``task="optimality"``: -mean_k 1/2 ||x_t - z_k||^2 (the empirical performative risk).
    Exact gaps are in ``info`` only with ``debug=True`` (they would leak the oracle).

    ## Starting State
    ``reset(seed=s)`` draws the instance from seed s (or from ``instance_seed`` when given)
    and deploys x_0 (``x0="random"``: drawn with the instance; ``"center"``: the center of X).

    ## Episode End
    Terminated when sigma = 0 and the exact gap <= ``eps``; truncated after ``T``
    deployments (the budget; x_0 is deployment 0).

    ## Arguments
    ``family``, ``d`` (bimatrix: ``m``, ``n``, ``game``), ``rho`` (contractive), ``lam``
    (polymatrix, bimatrix), ``map`` (nonexpansive: ``rotation`` | ``negation``), ``sigma`` (0),
    ``n_samples`` (100), ``T``, ``eps`` (1e-4), ``x0``, ``obs``, ``task``, ``debug``,
    ``oracle_access`` (puts the instance in the reset info; for reference agents only),
    ``instance_seed``. The Task's own arguments (``n_eval_instances``,
    ``n_train_instances``, ``train_deployments``) live in the same tier defaults and cells.

    ## Tiers
    smoke: contractive rho = 0.5 and nonexpansive, d in {2, 3}, T = 50. standard: contractive
    d in {2, 5, 10} x rho grid, nonexpansive, polymatrix, bimatrix, T = 2,000 (20,000 for
    contractive d = 5, rho >= 0.99). full: d up to 100, sigma in {0, 0.1, 1}, T = 1e5.

    ## Reference
    Anagnostides, Panageas, Yan, Chauhan, Sandholm, "On the Computational Complexity of
    Performative Prediction", ICML 2026 (arXiv 2601.20180); Perdomo, Zrnic,
    Mendler-Dunner, Hardt, "Performative Prediction", ICML 2020. The instance families other
    than the affine hard class itself are reconstructions (see instances.py).

    ## Version History
    v0: initial release. Superseded by v1: its nonexpansive instances are centred at
    x_s = 1/2 * 1, the center of X, which is where the ellipsoid method starts (it "solves"
    them at t = 1). Kept registered so that published v0 results stay reproducible.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": []}
    version: ClassVar[int] = 0
    problem_id: ClassVar[str] = "papergym/PerformativeAffine-v0"

    def __init__(
        self,
        family: str = "contractive",
        d: int = 2,
        rho: float = 0.5,
        lam: float = 0.2,
        m: int = 2,
        n: int = 2,
        game: str = "general",
        map: str = "rotation",
        sigma: float = 0.0,
        n_samples: int = 100,
        T: int = 50,
        eps: float = 1e-4,
        x0: str = "random",
        obs: str = "mean",
        task: str = "stability",
        debug: bool = False,
        oracle_access: bool = False,
        instance_seed: int | None = None,
    ) -> None:
        if obs not in ("mean", "batch"):
            raise ValueError(f"obs must be 'mean' or 'batch', got {obs!r}")
        if task not in ("stability", "optimality"):
            raise ValueError(f"task must be 'stability' or 'optimality', got {task!r}")
        if sigma < 0 or n_samples < 1 or T < 1 or eps <= 0:
            raise ValueError("need sigma >= 0, n_samples >= 1, T >= 1 and eps > 0")
        self.instance_kwargs = dict(family=family, d=d, rho=rho, lam=lam, m=m, n=n, game=game,
                                    map=map)
        self.family, self.sigma, self.n_samples = family, float(sigma), int(n_samples)
        self.T, self.eps, self.x0_mode, self.obs_mode = int(T), float(eps), x0, obs
        self.task, self.debug, self.oracle_access = task, debug, oracle_access
        self.instance_seed = instance_seed
        # the instance drawn at construction fixes the dimension and the spaces
        self.instance_kwargs["version"] = self.version
        self.instance: AffineInstance = make_instance(seed=instance_seed or 0, **self.instance_kwargs)
        dim = self.instance.dim
        self.dim = dim
        self.action_space = spaces.Box(0.0, 1.0, (dim,), dtype=np.float64)
        obs_spaces = {
            "x": spaces.Box(0.0, 1.0, (dim,), dtype=np.float64),
            "zbar": spaces.Box(-np.inf, np.inf, (dim,), dtype=np.float64),
            "t": spaces.Box(0.0, float(self.T), (1,), dtype=np.float64),
        }
        if obs == "batch":
            obs_spaces["z"] = spaces.Box(-np.inf, np.inf, (self.n_samples, dim), dtype=np.float64)
        self.observation_space = spaces.Dict(obs_spaces)
        self.x = self.instance.domain.center()
        self.t = 0
        self.n_projected = 0

    # --- the performative data ---------------------------------------------------------
    def _deploy(self, x: np.ndarray) -> tuple[dict[str, np.ndarray], float]:
        mean = self.instance.g(x)
        if self.sigma > 0:
            z = mean + self.sigma * self.np_random.standard_normal((self.n_samples, self.dim))
            zbar = z.mean(axis=0)
        else:
            z = np.broadcast_to(mean, (self.n_samples, self.dim)) if self.obs_mode == "batch" else None
            zbar = mean
        self.x, self._zbar = x, zbar
        r = x - self.instance.domain.project(zbar)
        self._empirical_gap = float(np.sqrt(r @ r))  # the exact gap when sigma = 0
        if self.task == "stability":
            reward = -self._empirical_gap
        elif z is None:
            reward = -0.5 * float(np.sum((x - mean) ** 2))
        else:
            reward = -0.5 * float(np.mean(np.sum((x - z) ** 2, axis=1)))
        observation = {"x": x.copy(), "zbar": np.array(zbar, dtype=np.float64),
                       "t": np.array([float(self.t)])}
        if self.obs_mode == "batch":
            observation["z"] = np.array(z, dtype=np.float64)
        return observation, reward

    def _info(self) -> dict[str, Any]:
        info: dict[str, Any] = {"t": self.t, "n_projected": self.n_projected, "rho": self.instance.rho}
        if self.debug:
            info["gap"] = self.instance.gap(self.x)
            info["vi_gap"] = self.instance.vi_gap(self.x)
        return info

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if self.instance_seed is not None:
            inst_seed = self.instance_seed
        elif seed is not None:
            inst_seed = seed
        else:
            inst_seed = int(self.np_random.integers(2**31 - 1))
        self.instance = make_instance(seed=inst_seed, **self.instance_kwargs)
        self.t, self.n_projected = 0, 0
        observation, _ = self._deploy(self.instance.x0(self.x0_mode))
        info = self._info()
        if self.oracle_access:
            info["instance"] = self.instance
        return observation, info

    def step(self, action):
        # finite, real, shape (d,); outside the domain it is projected and counted in info
        a = check_action(self.action_space, action, self.problem_id)
        x = self.instance.domain.project(a)
        if np.abs(x - a).max() > 1e-12:
            self.n_projected += 1
        self.t += 1
        observation, reward = self._deploy(x)
        terminated = self.sigma == 0 and self._empirical_gap <= self.eps
        truncated = (not terminated) and self.t >= self.T
        return observation, reward, terminated, truncated, self._info()


# ----------------------------------------------------------------------------------------
# The Task: score a deployment rule on held-out instances with the exact oracles.
# ----------------------------------------------------------------------------------------

ENV_KEYS = ("family", "d", "rho", "lam", "m", "n", "game", "map", "sigma", "n_samples", "T",
            "eps", "x0", "obs", "task")


class AffineView:
    """What a deployer agent sees: metered environments on training instances.

    ``make_env(instance_seed=None)`` builds an env whose ``step`` is charged to the
    ``deployments`` budget; instance seeds come from ``train_instance_seeds`` (all < 10^6,
    disjoint from evaluation). ``horizon``, ``eps``, ``sigma`` and ``domain`` describe the
    cell; ``oracle_access`` envs are only for reference agents (rows flagged, never ranked).
    """

    problem = "affine"

    def __init__(self, env_kwargs: dict[str, Any], budget: Budget, seed: int, n_train: int,
                 privileges: Privileges | None = None,
                 env_class: type[PerformativeAffineEnv] = PerformativeAffineEnv):
        self.env_kwargs, self.budget, self.seed = env_kwargs, budget, seed
        self._privileges = privileges or Privileges()
        self._env_class = env_class
        rng = np.random.default_rng([seed, 7])
        self.train_instance_seeds = [int(s) for s in rng.integers(0, 10**6 - 1, size=n_train)]
        probe = env_class(**env_kwargs)
        self.domain = probe.instance.domain
        self.horizon = probe.T
        self.eps = probe.eps
        self.sigma = probe.sigma
        self.family = probe.family

    def make_env(self, instance_seed: int | None = None, oracle_access: bool = False) -> gym.Env:
        """A metered env on a training instance; ``oracle_access`` is granted to reference
        agents only (for anyone else the env simply has no oracle)."""
        kwargs = dict(self.env_kwargs, oracle_access=self._privileges.grant(oracle_access))
        if instance_seed is not None:
            kwargs["instance_seed"] = check_training_seed(instance_seed, "AffineView.make_env")
        return MeteredEnv(self._env_class(**kwargs), self.budget, "deployments",
                          training_seeds_only=True)


def run_rule(env: PerformativeAffineEnv, rule: Any, seed: int) -> tuple[list[np.ndarray], int]:
    """Run a deployment rule for one episode; return the deployed points x_0..x_t."""
    observation, info = env.reset(seed=seed)
    reset = getattr(rule, "reset", None)
    if getattr(rule, "oracle_access", False):
        reset(info)
    elif reset is not None:
        reset()
    xs = [env.unwrapped.x.copy()]
    done = False
    while not done:
        observation, _, terminated, truncated, info = env.step(rule(observation))
        xs.append(env.unwrapped.x.copy())
        done = terminated or truncated
    return xs, int(info["n_projected"])


def trajectory_metrics(instance: AffineInstance, xs: list[np.ndarray], eps: float, T: int,
                       sigma: float) -> dict[str, float]:
    """Every reported number, from the deployed points and the exact oracles."""
    X = np.array(xs)
    gaps = instance.gaps(X)
    hit = np.nonzero(gaps <= eps)[0]
    tau = int(hit[0]) if hit.size else T + 1
    gap0, gapT = max(gaps[0], 1e-300), max(gaps[-1], 1e-300)
    if gap0 <= eps:
        reduction = 1.0
    else:
        reduction = float(np.clip((np.log(gap0) - np.log(gapT)) / (np.log(gap0) - np.log(eps)), 0, 1))
    x_T = X[-1]
    po = oracles.performative_optimum(instance)
    metrics = {
        "gap_reduction": reduction,
        "success": float(tau <= T),
        "hitting_time": float(tau),
        "gap_final": float(gaps[-1]),
        "log10_gap_final": float(np.log10(max(gapT, 1e-16))),
        "vi_gap_final": instance.vi_gap(x_T),
        "pr_subopt": instance.pr(x_T, sigma) - instance.pr(po, sigma),
        "dist_ps": oracles.distance_to_ps(instance, x_T),
        "deployments": float(len(xs) - 1),
        "residual_increases": float(np.sum(gaps[1:] > gaps[:-1] * (1 + 1e-9) + 1e-12)),
        "gap_spread": float(gaps.max() - gaps.min()),
        # from t = 1 on (after the first projection) RRM on M = -I 2-cycles exactly inside X
        "gap_spread_from_1": float(np.ptp(gaps[1:])) if len(gaps) > 1 else 0.0,
    }
    if instance.family in ("contractive", "nonexpansive"):
        # checks of the theorems on every step; x_s is a fixed point of the nonexpansive G
        x_s = instance.known_ps
        dist = np.linalg.norm(X - x_s, axis=1)
        t = np.arange(len(xs))
        rho = instance.params.get("rho", 1.0)
        contraction = rho**t * dist[0] * (1 + 1e-9) + 1e-12                      # Perdomo et al. Thm 3.5
        halpern = 2.0 * dist[0] / (t + 1) * (1 + 1e-9) + 1e-12                   # Lieder (2021)
        metrics["contraction_violations"] = float(np.sum(dist > contraction))
        metrics["halpern_violations"] = float(np.sum(gaps > halpern))
        metrics["steps_checked"] = float(len(xs))
    if instance.family == "contractive" and 0 < instance.params["rho"] < 1 and gap0 > eps:
        # RRM needs about log(gap_0 / eps) / (1 - rho) rounds: tau (1 - rho) / log(gap_0/eps) ~ 1
        metrics["rate_constant"] = tau * (1 - instance.params["rho"]) / np.log(gap0 / eps)
    return metrics


SUM_METRICS = ("contraction_violations", "halpern_violations", "residual_increases",
               "steps_checked")


class PerformativeAffineTask(Task):
    """Score a deployment rule on held-out instances of PerformativeAffine-v0.

    ## Data
    Training: ``view.make_env(instance_seed)`` on ``n_train_instances`` instance seeds below
    10^6, metered by the ``deployments`` budget (``train_deployments``). Evaluation:
    ``n_eval_instances`` instances from ``Task.eval_seeds`` (all >= 10^6).

    ## Artifact
    A deployment rule: a stateful callable observation -> next point, with an optional
    ``reset()`` called at every episode. A rule with ``oracle_access = True`` gets
    ``reset(info)`` with the instance in ``info["instance"]``; its rows carry
    ``oracle_access = 1`` (references only, never ranked).

    ## Metrics
    Per instance, from the deployed points and the exact oracles: ``gap_reduction`` (primary,
    max) = clip((log gap_0 - log gap_T) / (log gap_0 - log eps), 0, 1); ``success`` (tau <= T);
    ``hitting_time`` tau = first t with exact gap <= eps (censored at T + 1); ``gap_final``,
    ``log10_gap_final``, ``vi_gap_final``, ``pr_subopt`` = PR(x_T) - PR(PO), ``dist_ps``
    (to the nearest exact PS), ``deployments``; theorem checks on every step:
    ``contraction_violations`` (||x_t - x_s|| > rho^t ||x_0 - x_s||, contractive/nonexpansive),
    ``halpern_violations`` (gap_t > 2 ||x_0 - x_s|| / (t + 1)), ``residual_increases``
    (gap_{t+1} > gap_t), ``gap_spread`` (max - min gap), ``gap_spread_from_1`` (the same
    from t = 1 on), ``rate_constant`` (contractive:
    tau (1 - rho) / log(gap_0 / eps)). Trial metrics are means over instances, except the
    violation counts and ``steps_checked``, which are sums. ``units`` has one row per instance.

    ## Tiers, Reference, Version History
    As :class:`PerformativeAffineEnv`.
    """

    id: ClassVar[str] = "papergym/PerformativeAffine-v0"
    env_class: ClassVar[type[PerformativeAffineEnv]] = PerformativeAffineEnv
    family: ClassVar[str] = "performative"
    paper: ClassVar[str] = PAPER
    task_kwargs: ClassVar[tuple[str, ...]] = TASK_KEYS
    metrics: ClassVar[Mapping[str, MetricDeclaration]] = {
        "gap_reduction": ("max", 0.0, 1.0), "success": ("max", 0.0, 1.0), "hitting_time": "min",
        "gap_final": "min",
        "log10_gap_final": "min", "vi_gap_final": "min", "pr_subopt": "min", "dist_ps": "min",
        "deployments": "min", "residual_increases": "min", "gap_spread": "min",
        "gap_spread_from_1": "min",
        "contraction_violations": "min", "halpern_violations": "min", "steps_checked": "max",
        "rate_constant": "min", "oracle_access": "min", "n_projected": "min",
        "rho_realized": "min",
    }

    def __init__(self, tier: str = "smoke", n_eval_instances: int = 3, n_train_instances: int = 2,
                 train_deployments: int | None = None, **env_kwargs: Any) -> None:
        super().__init__(tier=tier, **env_kwargs)
        unknown = set(env_kwargs) - set(ENV_KEYS)
        if unknown:
            raise ValueError(f"{self.id}: unknown arguments {sorted(unknown)}; "
                             f"allowed: {', '.join(ENV_KEYS)}")
        self.env_kwargs = env_kwargs
        self.n_eval_instances = int(n_eval_instances)
        self.n_train_instances = int(n_train_instances)
        horizon = self.env_class(**env_kwargs).T
        self.train_deployments = int(train_deployments or 16 * n_train_instances * horizon)

    @property
    def budget(self) -> Budget:
        return Budget(deployments=self.train_deployments)

    def train_view(self, seed: int, budget: Budget) -> AffineView:
        return AffineView(self.env_kwargs, budget, seed, self.n_train_instances, self.privileges,
                          self.env_class)

    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        if not callable(artifact):
            raise TypeError(f"{self.id} expects a deployment rule (a callable "
                            f"observation -> next x), got {type(artifact).__name__}")
        oracle = self.grant_privilege(getattr(artifact, "oracle_access", False))  # references only
        env = self.env_class(**self.env_kwargs, oracle_access=oracle)
        units = []
        for i, eval_seed in enumerate(self.eval_seeds(seed, self.n_eval_instances)):
            xs, n_projected = run_rule(env, artifact, eval_seed)
            row = trajectory_metrics(env.instance, xs, env.eps, env.T, env.sigma)
            row["n_projected"] = float(n_projected)
            row["rho_realized"] = env.instance.rho
            units.append({"instance": i, "instance_id": instance_id(eval_seed), **row})
        names = [k for k in units[0] if k not in ("instance", "instance_id")]
        metrics = {k: float(np.sum([u[k] for u in units]) if k in SUM_METRICS
                            else np.mean([u[k] for u in units])) for k in names}
        metrics["oracle_access"] = float(oracle)
        curves = {"gap_final_by_instance": [(u["instance"], u["gap_final"]) for u in units]}
        return EvalResult(metrics=metrics, curves=curves, units=units)


class PerformativeAffineEnvV1(PerformativeAffineEnv):
    """Repeated deployment under an affine performative shift (version 1).

    ## Description
    As :class:`PerformativeAffineEnv`: the model deployer of Perdomo et al. (2020) in the
    hard class of Anagnostides et al. (2026), loss l(x; z) = 1/2 ||x - z||^2, D(x) =
    N(g(x), sigma^2 I), g(x) = M x + c, RRM map G(x) = Pi_X(g(x)), rho = ||M||_2. Every
    instance family has a stable point that no agent starts from: contractive and
    nonexpansive instances are centred at x_s ~ U[0.2, 0.8]^d (v0 put the nonexpansive x_s at
    the center of X, the ellipsoid's first deployment), polymatrix and bimatrix stable points
    are the Nash equilibria of a random game. ``game="savani"`` gives the bimatrix games of
    Savani and von Stengel (2006) on which every Lemke-Howson path is exponentially long.

    ## Action Space
    ``Box(0, 1, (D,), float64)``, D = d (bimatrix: m + n); projected onto X and counted in
    ``info["n_projected"]``; a non-finite action raises ``ValueError``.

    ## Observation Space
    ``Dict(x=Box(0, 1, (D,)), zbar=Box(-inf, inf, (D,)), t=Box(0, T, (1,)))`` (float64);
    ``obs="batch"`` adds ``z=Box(-inf, inf, (n_samples, D))``.

    ## Rewards
    ``task="stability"``: -||x_t - Pi_X(zbar_t)||; ``task="optimality"``: the negative
    empirical performative risk. Exact gaps only with ``debug=True``.

    ## Starting State
    The instance drawn from the reset seed (or ``instance_seed``); x_0 drawn with it
    (nonexpansive: uniform in the ball ||x - x_s|| <= 1/2 inside X) or the center of X.

    ## Episode End
    Terminated when sigma = 0 and the exact gap <= ``eps``; truncated after ``T``.

    ## Arguments
    As v0: ``family``, ``d`` (bimatrix: ``m``, ``n``, ``game`` in general | zerosum | cyclic |
    savani), ``rho``, ``lam``, ``map``, ``sigma``, ``n_samples``, ``T``, ``eps``, ``x0``,
    ``obs``, ``task``, ``debug``, ``oracle_access``, ``instance_seed``.

    ## Tiers
    smoke: contractive rho = 0.5 and nonexpansive, d in {2, 3}, T = 50. standard: contractive
    d in {5, 10} x rho grid, nonexpansive d in {2, 10}, polymatrix d in {5, 8, 12}, bimatrix
    including Savani-von Stengel d in {2, 4, 6}, T = 2,000 (20,000 near rho = 1). full: d up
    to 100, sigma in {0, 0.1, 1}, T = 1e5.

    ## Reference
    Anagnostides, Panageas, Yan, Chauhan, Sandholm, ICML 2026 (arXiv 2601.20180); Perdomo et
    al., ICML 2020; Savani and von Stengel, "Hard-to-solve bimatrix games", Econometrica 2006.

    ## Version History
    v1: stable points drawn at random for every family (nonexpansive x_s ~ U[0.2, 0.8]^d, x_0
    inside X); Savani-von Stengel games; exact stable points beyond the enumerator's reach
    (d > 10) from a complementarity MILP (HiGHS). Results are not comparable with v0 on the
    nonexpansive family; the other families draw the same instances as v0.
    v0: initial release (superseded).
    """

    version: ClassVar[int] = 1
    problem_id: ClassVar[str] = "papergym/PerformativeAffine-v1"


class PerformativeAffineTaskV1(PerformativeAffineTask):
    """Score a deployment rule on held-out instances of PerformativeAffine-v1.

    ## Data
    As :class:`PerformativeAffineTask`: training instances below 10^6 through the metered
    view, ``n_eval_instances`` held-out instances from ``Task.eval_seeds``.

    ## Artifact
    A deployment rule (observation -> next point, optional ``reset()``); oracle-access rules
    (references) get the instance in ``reset(info)``.

    ## Metrics
    As v0 (``gap_reduction`` primary, success, hitting time, gaps, theorem checks).

    ## Tiers, Reference, Version History
    As :class:`PerformativeAffineEnvV1`.
    """

    id: ClassVar[str] = "papergym/PerformativeAffine-v1"
    env_class: ClassVar[type[PerformativeAffineEnv]] = PerformativeAffineEnvV1
