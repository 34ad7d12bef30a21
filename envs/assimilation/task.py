"""The Tasks of the cycling envs: the view agents get (metered envs, the public model, the
training set, the shared window prior, cached tuning runs) and the problem-computed metrics."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from papergym import cache
from papergym.envs.assimilation.env import (
    SKIP,
    CyclingEnv,
    KolmogorovCyclingEnv,
    KolmogorovCyclingV1Env,
    Lorenz96CyclingEnv,
    make_training_set,
)
from papergym.envs.assimilation.models import Kolmogorov, Lorenz96
from papergym.envs.assimilation.prior import train_prior
from papergym.problem import Budget, EnvTask, EvalResult, MeteredEnv, MetricDeclaration
from papergym.tuning import TuningRecord, cached_score, canonical

PACKAGE = Path(__file__).parent
TUNING_SEEDS = (900_000, 900_001)  # training seeds shared by every trial's tuning runs
PRIOR_SEED = 7

_RMSE: MetricDeclaration = ("min", 0.0, None)
METRICS: dict[str, MetricDeclaration] = {
    "return": ("max", None, 0.0), "episode_length": ("max", 0.0, None),
    "rmse_never": _RMSE, "rmse_all": _RMSE, "rmse_observed": _RMSE, "rmse_other": _RMSE,
    "residual": ("min", 0.0, None), "residual_truth": ("min", 0.0, None), "slope": "min",
    "forecast_rmse_1": _RMSE, "forecast_rmse_5": _RMSE, "forecast_rmse_10": _RMSE,
    "forecast_never_1": _RMSE, "forecast_never_5": _RMSE, "forecast_never_10": _RMSE,
    "forecast_skill_1": ("max", None, 1.0), "forecast_skill_5": ("max", None, 1.0),
    "forecast_skill_10": ("max", None, 1.0),
    "rmse_free": _RMSE, "skill": ("max", None, 1.0), "crps": ("min", None, None),
    "spread": ("max", 0.0, None), "spread_skill": ("max", 0.0, None),
    "seconds_per_cycle": ("min", 0.0, None),
}


def distances(model: Lorenz96 | Kolmogorov) -> np.ndarray:
    """Site-to-site distances on the model's periodic grid (ring for L96, torus for KF)."""
    if isinstance(model, Lorenz96):
        i = np.arange(model.n)
        d = np.abs(i[:, None] - i[None, :])
        return np.minimum(d, model.n - d).astype(float)
    size = model.size
    r, c = np.divmod(np.arange(model.n), size)
    dr = np.abs(r[:, None] - r[None, :])
    dc = np.abs(c[:, None] - c[None, :])
    return np.hypot(np.minimum(dr, size - dr), np.minimum(dc, size - dc))


class CyclingView:
    """What an agent may use (``train_view``).

    - ``make_env()``: a training env (same kwargs; each ``step`` spends one ``env_steps``; resets
      take training seeds only). Its truth stays private.
    - ``model``: the public forecast model (a frozen record: ``forecast``, ``step``, ``tendency``);
      ``sigma_obs``, ``rho_obs``, ``horizon``, ``ensemble_size``, ``window``, ``n``, ``distances``
      (site-to-site distances on the periodic grid).
    - ``training_set()``: climatological truth trajectories (n_traj, length, n), one cycle apart,
      from seeds disjoint from every tuning and held-out seed: the only source for B matrices,
      priors and climatology.
    - ``prior(window)``: the shared EDM window prior (window 1 or W; ``prior.build`` rebuilds it),
      trained once per tier on ``training_set()``.
    - ``tuning_rmse(policy, config)``: runs ``policy`` (``reset()`` at each start) on the
      tuning seeds at ``tuning_rho`` for ``tuning_horizon`` cycles and returns its time-averaged
      RMSE over all sites; the score is cached under the trial agent's identity (set by the
      harness) and ``config`` (plain data fixing every setting of the policy; papergym.tuning),
      so the trials of every seed and density share one run per configuration. Each call
      spends one ``tuning_runs``; the problem keeps every (configuration, score) it returned
      (``tuning``) and records them, with the chosen one, in the trial row.
    """

    def __init__(self, make: Callable[..., CyclingEnv], budget: Budget, seed: int, setting: dict[str, Any],
                 entries: dict[str, cache.Entry], agent: str | None = None) -> None:
        self._make, self.budget, self.seed = make, budget, int(seed)
        self._setting, self._entries = setting, entries
        env = make()
        self.model = env.model
        self.n, self.sigma_obs, self.rho_obs = env.n, env.sigma_obs, env.rho_obs
        self.horizon, self.ensemble_size, self.window = env.horizon, env.ensemble_size, env.window
        self.tuning_rho, self.tuning_horizon = setting["tuning_rho"], setting["tuning_horizon"]
        self.distances = distances(env.model)
        self.tuning = TuningRecord(int(budget.remaining("tuning_runs")), direction="min")
        self._agent = agent  # the trial agent's identity (harness-set): keys its tuning runs

    def make_env(self) -> MeteredEnv:
        return MeteredEnv(self._make(), self.budget, training_seeds_only=True)

    def training_set(self) -> np.ndarray:
        return np.array(cache.get(self._entries["training"]))

    def prior(self, window: int) -> dict[str, Any]:
        if f"prior{window}" not in self._entries:
            raise ValueError(f"no shared prior of window {window!r}; this problem trains "
                             f"{sorted(int(k[5:]) for k in self._entries if k.startswith('prior'))}")
        record = cache.get(self._entries[f"prior{window}"])
        return {**record, "state": {k: v.clone() for k, v in record["state"].items()}}

    def tuning_rmse(self, policy: Any, config: Mapping[str, Any]) -> float:
        canonical(config)  # plain data, or a TypeError before any budget is spent
        self.budget.spend("tuning_runs", 1)
        setting = self._setting
        make = partial(self._make, rho_obs=setting["tuning_rho"], horizon=setting["tuning_horizon"])

        def run() -> float:
            scores = []
            for seed in TUNING_SEEDS[: setting["tuning_seeds"]]:
                env = make()
                if hasattr(policy, "reset"):
                    policy.reset()
                obs, _ = env.reset(seed=seed)
                done, errors = False, []
                while not done:
                    obs, reward, _, done, _ = env.step(policy(obs))
                    errors.append(-reward)
                start = SKIP if len(errors) > SKIP + 1 else 0
                scores.append(float(np.mean(errors[start:])))
            return float(np.mean(scores))

        problem = {"problem": setting["problem"]}
        score = cached_score("assimilation/tuning", problem, self._agent, config, run, (PACKAGE,))
        self.tuning.add(config, score)
        return score

    def tuning_info(self) -> dict[str, Any]:
        """The tuning runs this view scored (papergym.tuning.TuningRecord.summary)."""
        summary = self.tuning.summary()
        return {"tuning": summary} if summary else {}


class CyclingTask(EnvTask):
    """Shared scoring of the cycling envs (subclasses set the env and the docstring)."""

    family: ClassVar[str] = "assimilation"
    paper: ClassVar[str] = "peng2026lophyda"
    metrics: ClassVar[Mapping[str, MetricDeclaration]] = METRICS
    nondeterministic_metrics: ClassVar[frozenset[str]] = frozenset({"seconds_per_cycle"})
    task_kwargs: ClassVar[tuple[str, ...]] = (
        "train_steps", "eval_episodes", "tuning_runs", "tuning_rho", "tuning_horizon", "tuning_seeds",
        "train_trajectories", "train_length", "prior_steps", "prior_windows", "prior_hidden")
    env_class: ClassVar[type[CyclingEnv]] = CyclingEnv

    def __init__(self, tier: str = "smoke", train_steps: int = 200, eval_episodes: int = 1,
                 tuning_runs: int = 2, tuning_rho: float = 0.1, tuning_horizon: int = 15,
                 tuning_seeds: int = 1, train_trajectories: int = 16, train_length: int = 100,
                 prior_steps: int = 300, prior_windows: Sequence[int] | None = None, prior_hidden: int = 32,
                 **env_kwargs: Any) -> None:
        super().__init__(self.env_class, tier=tier, train_steps=train_steps, eval_episodes=eval_episodes,
                         **env_kwargs)
        checks = (("tuning_runs", tuning_runs, 0), ("tuning_horizon", tuning_horizon, 1),
                  ("tuning_seeds", tuning_seeds, 1), ("train_trajectories", train_trajectories, 1),
                  ("train_length", train_length, 2), ("prior_steps", prior_steps, 0),
                  ("prior_hidden", prior_hidden, 1))
        for name, value, low in checks:
            if not isinstance(value, int) or value < low:
                raise ValueError(f"{self.id}: {name} must be an integer >= {low}, got {value!r}")
        if tuning_seeds > len(TUNING_SEEDS):
            raise ValueError(f"{self.id}: tuning_seeds must be <= {len(TUNING_SEEDS)}")
        self.tuning_runs, self.tuning_rho = tuning_runs, float(tuning_rho)
        self.tuning_horizon, self.tuning_seeds = tuning_horizon, tuning_seeds
        self.train_trajectories, self.train_length = train_trajectories, train_length
        self._probe = self.env_class(**env_kwargs)  # validates the env kwargs now
        if prior_windows is None:  # DPS's single-state prior and the window prior of the env's W
            prior_windows = sorted({1, self._probe.window})
        self.prior_steps, self.prior_windows = prior_steps, tuple(int(w) for w in prior_windows)
        self.prior_hidden = prior_hidden
        if not all(1 <= w <= train_length for w in self.prior_windows):
            raise ValueError(f"{self.id}: prior_windows must be in [1, train_length], got {prior_windows!r}")

    # ------------------------------------------------------------------ cache entries

    def _model_config(self) -> dict[str, Any]:
        return {"id": self.id, "model": repr(self._probe.model)}

    def training_entry(self) -> cache.Entry:
        model, n_traj, length = self._probe.model, self.train_trajectories, self.train_length
        config = {**self._model_config(), "n_traj": n_traj, "length": length}
        return cache.Entry("assimilation/training", config, code=(PACKAGE,),
                           build=lambda: make_training_set(model, n_traj, length, 0))

    def prior_entry(self, window: int) -> cache.Entry:
        training, steps, grid = self.training_entry(), self.prior_steps, self._probe.model.grid
        net = {"hidden": self.prior_hidden}
        config = {**training.config, "window": window, "steps": steps, "seed": PRIOR_SEED, "net": net}
        return cache.Entry("assimilation/prior", config, code=(PACKAGE,),
                           build=lambda: train_prior(cache.get(training), window, steps, seed=PRIOR_SEED,
                                                     grid=grid, net=net))

    def _entries(self) -> dict[str, cache.Entry]:
        """The shared preparation, as entries whose builds hold no reference to the Task."""
        entries = {"training": self.training_entry()}
        for w in self.prior_windows:
            entries[f"prior{w}"] = self.prior_entry(w)
        return entries

    def cache_entries(self, seeds: Sequence[int]) -> list[cache.Entry]:
        return list(self._entries().values())

    # ------------------------------------------------------------------ view and scores

    @property
    def budget(self) -> Budget:
        return Budget(env_steps=self.train_steps, tuning_runs=self.tuning_runs)

    def setting(self) -> dict[str, Any]:
        problem = {**self._model_config(), **{k: v for k, v in sorted(self.env_kwargs.items())
                                              if k not in ("rho_obs", "horizon")},
                   "tuning_rho": self.tuning_rho, "tuning_horizon": self.tuning_horizon,
                   "tuning_seeds": self.tuning_seeds, "train": [self.train_trajectories, self.train_length],
                   "prior": [self.prior_steps, list(self.prior_windows), self.prior_hidden]}
        return {"problem": json.loads(json.dumps(problem, default=str)), "tuning_rho": self.tuning_rho,
                "tuning_horizon": self.tuning_horizon, "tuning_seeds": self.tuning_seeds}

    def train_view(self, seed: int, budget: Budget) -> CyclingView:
        self._view = CyclingView(partial(self.env_class, **self.env_kwargs), budget, seed, self.setting(),
                                 self._entries(), agent=self.shared_runs.agent)
        return self._view

    def episode_metrics(self, env: Any, episode_return: float, length: int) -> dict[str, float]:
        return {"return": episode_return, "episode_length": float(length), **env.unwrapped.episode_scores()}

    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        started = time.perf_counter()
        result = super().evaluate(artifact, seed)
        cycles = result.metrics["episode_length"] * self.eval_episodes
        result.metrics["seconds_per_cycle"] = (time.perf_counter() - started) / max(cycles, 1.0)
        view = getattr(self, "_view", None)
        if view is not None:
            result.info.update(view.tuning_info())
        return result


class Lorenz96CyclingTask(CyclingTask):
    """
    ## Description
    Scores a cycling-DA policy on ``Lorenz96Cycling-v0`` (see the env): one episode of
    ``horizon`` cycles per trial on a held-out seed (truth, block position, observation sites and
    noise are all drawn from it), the policy's analyses scored against the problem's truth.

    ## Data
    ``train_view(seed)`` is a :class:`CyclingView`: metered training envs, the public model,
    ``training_set()`` (``train_trajectories`` x ``train_length`` climatological states from
    seeds disjoint from tuning and held-out seeds), ``prior(window)`` (the shared EDM window
    prior for W in ``prior_windows``, ``prior_steps`` training steps, built once per tier in the
    prepare phase) and ``tuning_rmse`` (cached tuning runs on ``tuning_seeds`` seeds at
    ``tuning_rho`` for ``tuning_horizon`` cycles, ``tuning_runs`` of them per trial).

    ## Metrics
    Time averages over cycles 10..H (all cycles if H <= 11) of: ``rmse_never`` (the never-observed
    block; primary), ``rmse_all``, ``rmse_observed`` (sites observed that cycle), ``rmse_other``
    (other unobserved sites); ``residual`` (physical residual of consecutive analyses, relative to
    the climatological RMS tendency) and ``residual_truth`` (the truth's own, the floor); ``slope``
    (OLS slope of never-observed RMSE per cycle: error accumulation); ``forecast_rmse_{1,5,10}``
    (RMSE of forecasts from each analysis, run by the problem) and ``forecast_never_{1,5,10}``
    (the same on the never-observed block); ``rmse_free`` and ``skill`` = 1 - rmse_all /
    rmse_free (the free run of the first background ensemble); ``forecast_skill_{1,5,10}`` = 1 -
    forecast_rmse_k / the free run's RMSE at the same verifying times (cycles c + k: 0 = no
    better than not assimilating, 1 = perfect forecasts); ``crps``, ``spread``,
    ``spread_skill`` (ensemble); ``seconds_per_cycle`` (wall time, nondeterministic).

    ## Episode End
    One episode per trial (``eval_episodes``).

    ## Arguments
    The env's, plus ``train_steps`` (env steps the view grants), ``tuning_runs``, ``tuning_rho``,
    ``tuning_horizon``, ``tuning_seeds``, ``train_trajectories``, ``train_length``,
    ``prior_steps``, ``prior_windows``, ``eval_episodes``.

    ## Tiers
    smoke: 20 cycles, rho_obs 0.2, no tuning runs (defaults), prior 200 steps on 16 x 100
    states. standard: 100 cycles, rho_obs in {0.2, 0.1, 0.05}, 12 tuning runs of 40 cycles on 2
    seeds at 10%, prior 2,000 steps on 64 x 200 states. full: 200 cycles, prior 20,000 steps.

    ## Reference
    Peng, Chen, Zhou, Yuan, "LoPhyDA", ICML 2026 (abstract); metrics [recon] from the spec.

    ## Version History
    * v0: initial release.
    """

    id: ClassVar[str] = "papergym/Lorenz96Cycling-v0"
    env_class: ClassVar[type[CyclingEnv]] = Lorenz96CyclingEnv


class KolmogorovCyclingTask(CyclingTask):
    """
    ## Description
    Scores a cycling-DA policy on ``KolmogorovCycling-v0`` as ``Lorenz96Cycling-v0``'s Task does
    (one held-out episode per trial). The shared window prior here is the periodic 2-D UNet
    denoiser over (W, size, size) vorticity windows (``prior.WindowDenoiser`` on the torus),
    trained once per tier on ``training_set()`` in the prepare phase, as for Lorenz-96.

    ## Data
    As ``Lorenz96Cycling-v0``: ``prior(window)`` for W in ``prior_windows`` (default 1 and the
    env's window, 4), ``prior_hidden`` channels, ``prior_steps`` steps. Defaults (no tier): 4 x 20
    training states, a 100-step prior of 16 channels.

    ## Metrics
    As ``Lorenz96Cycling-v0`` (the patch is the never-observed region).

    ## Episode End
    One episode per trial.

    ## Arguments
    As ``Lorenz96Cycling-v0``; the env's ``size`` and ``spinup``.

    ## Tiers
    smoke: size 16, 6 cycles, priors of 40 steps and 8 channels on 4 x 20 states; standard: size
    16, 20 cycles, priors of 2,000 steps and 32 channels on 16 x 100 states; full: size 32, 100
    cycles, priors of 20,000 steps and 32 channels on 64 x 200 states (about 1.5 s per step on one
    CPU core, so about 8 CPU-hours per window: GPU work).

    ## Reference
    As the env.

    ## Version History
    * v0: initial release; superseded by v1 (see the env).
    """

    id: ClassVar[str] = "papergym/KolmogorovCycling-v0"
    env_class: ClassVar[type[CyclingEnv]] = KolmogorovCyclingEnv

    def __init__(self, tier: str = "smoke", **kwargs: Any) -> None:
        kwargs.setdefault("train_trajectories", 4)
        kwargs.setdefault("train_length", 20)
        kwargs.setdefault("prior_steps", 100)
        kwargs.setdefault("prior_hidden", 16)
        super().__init__(tier=tier, **kwargs)


class KolmogorovCyclingV1Task(KolmogorovCyclingTask):
    """
    ## Description
    Scores a cycling-DA policy on ``KolmogorovCycling-v1`` (the complete 2/3 rule: the model
    projects every field it steps onto the retained band) exactly as the v0 Task does: one
    held-out episode per trial, the periodic 2-D UNet window prior trained once per tier.

    ## Data
    As ``KolmogorovCycling-v0``'s Task.

    ## Metrics
    As ``Lorenz96Cycling-v0`` (the patch is the never-observed region).

    ## Episode End
    One episode per trial.

    ## Arguments
    As ``KolmogorovCycling-v0``'s Task.

    ## Tiers
    As ``KolmogorovCycling-v0``'s Task (full: size 32, 100 cycles; its priors are GPU work).

    ## Reference
    As the env.

    ## Version History
    * v0: initial release.
    * v1: the v1 env (state projected onto the 2/3-rule band before each step).
    """

    id: ClassVar[str] = "papergym/KolmogorovCycling-v1"
    env_class: ClassVar[type[CyclingEnv]] = KolmogorovCyclingV1Env
