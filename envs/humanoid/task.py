"""Scoring of the cross-embodiment problems: zero-shot return, survival, tracking error and the
normalized score S on held-out bodies, all computed by the problem."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from papergym import cache
from papergym.problem import Budget, EnvTask, EnvView, EvalResult, adapted

from . import bodies as B
from . import reference as ref
from .env import (
    XEmbodiedEnv,
    XEmbodiedHumanoidEnv,
    XEmbodiedHumanoidEnvV1,
    XEmbodiedWalkerEnv,
    XEmbodiedWalkerEnvV1,
    XEmbodiedWalkerEnvV2,
)
from .vector import XEmbodiedVectorEnv

OBSERVATION_OPTIONS = ("morph_obs",)  # what a policy may choose of its evaluation env

# Minimum denominator R_spec - R_zero: max(1, 10% of |R_zero|). A specialist that did not beat
# a = 0 by that much leaves S ill-defined; the floor keeps S finite and the table reports both
# references (zero_return, specialist_return) so the reader sees when this happened.
SCORE_FLOOR_ABS, SCORE_FLOOR_REL = 1.0, 0.1


def normalized_score(r_agent: float, r_zero: float, r_reference: float) -> float:
    """S = (R - R_zero) / max(R_ref - R_zero, 1, 0.1 |R_zero|) (the floor: see above)."""
    return (r_agent - r_zero) / max(r_reference - r_zero, SCORE_FLOOR_ABS,
                                    SCORE_FLOOR_REL * abs(r_zero))


def zero_policy(n_slots: int):
    def act(observation: Any) -> np.ndarray:
        return np.zeros(n_slots, np.float32)
    return act


def run_body_episode(env: XEmbodiedEnv, policy: Any, seed: int) -> dict[str, float]:
    """One episode; survival = reaching truncation without the 60 deg termination."""
    if hasattr(policy, "reset"):
        policy.reset()
    obs, _ = env.reset(seed=seed)
    total, length, err, done, fell = 0.0, 0, 0.0, False, False
    while not done:
        obs, reward, terminated, truncated, _ = env.step(policy(obs))
        total += reward
        length += 1
        err += env.tracking_error()
        fell = terminated
        done = terminated or truncated
    return {"return": total, "survival": float(not fell), "cmd_error": err / max(length, 1),
            "episode_length": float(length)}


class XEmbodiedTask(EnvTask):
    """Zero-shot scoring of a policy on held-out bodies.

    ## Description
    ``train_view(seed)`` hands the agent metered environments over the *training* body set
    (the procedural pool of ``seed``, or named bodies for a specialist section). ``evaluate``
    runs the returned policy (``obs -> action``) on every body of ``heldout``, ``eval_episodes``
    episodes each on seeds from ``Task.eval_seeds`` (fixed command schedules), and on the same
    episodes runs a = 0. The view's ``make_vector_env(n)`` (and the fine-tuning view's) is an
    ``XEmbodiedVectorEnv`` (``vector.py``): one call steps all n envs, the physics of all of
    them at once on a thread pool. The specialist reference is trained by the problem (see
    ``reference.py``) once per body, in the runner's prepare phase (:mod:`papergym.cache`).

    ## Metrics
    ``score``: mean over held-out bodies of S_i = (R_i - R_zero,i) / max(R_spec,i - R_zero,i,
    1, 0.1 |R_zero,i|) (the floor only binds when the specialist failed to beat a = 0);
    ``ratio``: mean R_i / R_spec,i (the paper's 85% quantity); ``return``; ``survival`` (share of
    episodes reaching truncation); ``cmd_error`` (episode mean |v - v*|); ``zero_return``,
    ``specialist_return`` (the references) and ``reference_gap`` = R_spec - R_zero (S and the
    ratio are meaningful only where it is positive: a specialist that loses to a = 0 makes the
    ratio look good for free). The view never exposes held-out bodies to a generalist.
    ``finetune_used``: the fine-tuning steps a policy took on the body (below).
    Units: one row per held-out body.

    ## Fine-tuning
    With ``finetune_steps`` > 0 (the paper's Generalist-FT protocol), before a body is scored
    a policy with an ``adapt(view, budget, seed)`` method gets a metered view of that body
    alone (training seeds only; ``finetune_steps`` env steps) and returns the policy to score
    there (:func:`papergym.problem.adapted`); a policy without it is scored zero-shot.

    ## Tiers
    See the env docstrings and benchmarks/specs/humanoid.yaml.

    ## Reference
    XHugWBC (ICML 2026, arXiv 2602.05791).

    ## Version History
    * v0: initial release; superseded by v1 (:class:`XEmbodiedTaskV1`).
    """

    env_class: ClassVar[type[XEmbodiedEnv]] = XEmbodiedWalkerEnv
    metrics: ClassVar[Mapping[str, str]] = {
        "score": "max", "ratio": "max", "return": "max", "survival": "max", "cmd_error": "min",
        "episode_length": "max", "zero_return": "max", "specialist_return": "max",
        "reference_gap": "max", "finetune_used": "max",
    }
    task_kwargs: ClassVar[tuple[str, ...]] = (
        "train_steps", "eval_episodes", "heldout", "specialist_steps", "specialist",
        "reference_episodes", "finetune_steps")

    def __init__(self, tier: str = "smoke", train_steps: int = 4096, eval_episodes: int = 1,
                 heldout: list[str] | tuple[str, ...] = ("walker2d_v5",),
                 specialist_steps: int = 512, specialist: dict[str, Any] | None = None,
                 reference_episodes: int = 2, finetune_steps: int = 0,
                 **env_kwargs: Any) -> None:
        env_kwargs = {**env_kwargs, "obs": "flat"}
        super().__init__(self._make_env, tier=tier, train_steps=train_steps,
                         eval_episodes=eval_episodes, **env_kwargs)
        if isinstance(heldout, str):  # a named set ("heldout", "ood") or one body
            family = "planar" if self.env_class.family == "planar" else "humanoid"
            sets = B.named_sets(family, self.env_class.recipe_version)
            heldout = list(sets.get(heldout, (heldout,)))
        self.heldout = list(heldout)
        self.specialist_steps = int(specialist_steps)
        self.specialist = dict(specialist or {})
        self.reference_episodes = int(reference_episodes)
        self.finetune_steps = int(finetune_steps)

    def _make_env(self, **kwargs: Any) -> XEmbodiedEnv:
        return self.env_class(**kwargs)

    @property
    def budget(self) -> Budget:
        return Budget(env_steps=self.train_steps)

    def train_view(self, seed: int, budget: Budget) -> EnvView:
        kwargs = {**self.env_kwargs, "pool_seed": int(seed)}
        # an agent may pick the pool's randomization (the C3 ablation) and the observation
        # (morphology descriptors), nothing else
        return EnvView(partial(self.env_class, **kwargs), budget, seed,
                       options=("randomization", *OBSERVATION_OPTIONS),  # no Task reference
                       vectorize=XEmbodiedVectorEnv)  # make_vector_env: threaded physics

    def finetune_view(self, body: str, seed: int) -> EnvView:
        """Metered envs of one held-out body for ``finetune_steps`` steps; they reset only on
        training seeds (the scored episodes use held-out ones)."""
        return EnvView(partial(self.env_class, **self._eval_kwargs(body)),
                       Budget(env_steps=self.finetune_steps), seed, options=OBSERVATION_OPTIONS,
                       training_seeds_only=True, vectorize=XEmbodiedVectorEnv)

    def _eval_kwargs(self, body: str) -> dict[str, Any]:
        keep = {k: v for k, v in self.env_kwargs.items()
                if k not in ("bodies", "pool_size", "pool_seed", "randomization")}
        return {**keep, "bodies": [body]}

    def specialist_entry(self, body: str) -> cache.Entry:
        """The specialist reference of one held-out body: its mean return, built once."""
        kwargs = self._eval_kwargs(body)

        def compute() -> float:
            policy = ref.train_specialist(lambda: self.env_class(**kwargs),
                                          self.specialist_steps, ref.REFERENCE_SEED,
                                          self.specialist)
            env = self.env_class(**kwargs)
            # a fixed reference measured once for everyone: public seeds, never a trial's
            seeds = self.public_eval_seeds(ref.REFERENCE_EVAL_SEED, self.reference_episodes)
            return float(np.mean([run_body_episode(env, policy, s)["return"] for s in seeds]))

        return cache.Entry(
            "humanoid/specialist",
            config={"env": self.env_class.__name__, "kwargs": kwargs,
                    "steps": self.specialist_steps, "hyper": self.specialist,
                    "episodes": self.reference_episodes, "seed": ref.REFERENCE_SEED},
            build=compute, code=(Path(__file__).parent,))

    def cache_entries(self, seeds: Sequence[int]) -> list[cache.Entry]:
        return [self.specialist_entry(body) for body in self.heldout]  # seed-independent

    def reference(self, body: str) -> dict[str, float]:
        """The specialist reference of one body, read once from the cache: its return
        (``specialist_return``) and any per-unit facts about it (none in v0)."""
        return {"specialist_return": float(cache.get(self.specialist_entry(body)))}

    def specialist_return(self, body: str) -> float:
        return self.reference(body)["specialist_return"]

    @staticmethod
    def observation_options(artifact: Any) -> dict[str, Any]:
        """The observation a policy asks to be evaluated on (``env_options``: ``morph_obs``,
        for MetaMorph-style policies); everything else about the held-out env is the task's."""
        options = dict(getattr(artifact, "env_options", None) or {})
        refused = sorted(set(options) - set(OBSERVATION_OPTIONS))
        if refused:
            raise ValueError(f"a policy may choose only {list(OBSERVATION_OPTIONS)} of its "
                             f"evaluation env, not {refused}")
        return options

    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        if not callable(artifact):
            raise TypeError(f"{type(self).__name__} expects a policy (observation -> action), "
                            f"got {type(artifact).__name__}")
        units = []
        seeds = self.eval_seeds(seed, self.eval_episodes)
        for body in self.heldout:
            policy, used = artifact, 0.0
            if self.finetune_steps:  # Generalist-FT: adapt to this body, then score
                view = self.finetune_view(body, seed)
                policy = adapted(artifact, view, seed)
                used = float(view.budget.used["env_steps"])
            env = self.env_class(**self._eval_kwargs(body), **self.observation_options(policy))
            rows = [run_body_episode(env, policy, s) for s in seeds]
            zero = [run_body_episode(env, zero_policy(env.n_slots), s)["return"] for s in seeds]
            env.close()
            r_agent = float(np.mean([r["return"] for r in rows]))
            r_zero = float(np.mean(zero))
            reference = self.reference(body)
            r_spec = reference.pop("specialist_return")
            units.append(self.finish_unit({
                "instance": body,
                "score": normalized_score(r_agent, r_zero, r_spec),
                "ratio": r_agent / r_spec if abs(r_spec) > 1e-9 else 0.0,
                "return": r_agent,
                "survival": float(np.mean([r["survival"] for r in rows])),
                "cmd_error": float(np.mean([r["cmd_error"] for r in rows])),
                "episode_length": float(np.mean([r["episode_length"] for r in rows])),
                "zero_return": r_zero, "specialist_return": r_spec,
                # > 0 iff the specialist beat a = 0 here; S and ratio mean something only then
                "reference_gap": r_spec - r_zero,
                "finetune_used": used,
                **reference,
            }))
        metrics = {k: float(np.mean([u[k] for u in units])) for k in self.metrics}
        return EvalResult(metrics=metrics, units=units, curves=self.curves(seed))

    def finish_unit(self, unit: dict[str, Any]) -> dict[str, Any]:
        """A held-out body's row as scored; versions that derive more metrics add them here."""
        return unit

    def curves(self, seed: int) -> dict[str, list[tuple[float, float]]]:
        """Curves the problem recorded while serving the trial of ``seed`` (none in v0/v1)."""
        return {}


def _task_class(name: str, base: type[XEmbodiedTask], env_class: type[XEmbodiedEnv]) -> type:
    """One registered task class: ``base``'s scoring on ``env_class`` (same docstring)."""
    return type(name, (base,), {"__doc__": base.__doc__, "env_class": env_class,
                                "__module__": __name__, "__qualname__": name})


XEmbodiedWalkerTask = _task_class("XEmbodiedWalkerTask", XEmbodiedTask, XEmbodiedWalkerEnv)
XEmbodiedHumanoidTask = _task_class("XEmbodiedHumanoidTask", XEmbodiedTask, XEmbodiedHumanoidEnv)


def paired_interval(x: Sequence[float], y: Sequence[float], level: float = 0.95
                    ) -> tuple[float, float, float]:
    """Mean of x - y over paired episodes and its two-sided t interval at ``level``."""
    from scipy import stats

    d = np.asarray(x, float) - np.asarray(y, float)
    mean = float(d.mean())
    if len(d) < 2 or float(d.std(ddof=1)) == 0.0:
        return mean, mean, mean
    half = float(stats.t.ppf(0.5 + level / 2, len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d)))
    return mean, mean - half, mean + half


class XEmbodiedTaskV1(XEmbodiedTask):
    """Zero-shot scoring on held-out bodies against a converged per-body specialist (v1).

    ## Description
    As v0 (:class:`XEmbodiedTask`): ``train_view(seed)`` serves metered environments over the
    training pool of ``seed``; ``evaluate`` runs the returned policy (``obs -> action``) and
    a = 0 on the same held-out episodes of every body in ``heldout``. What v1 changes is the
    specialist reference: per held-out body, SB3 PPO (CleanRL's MuJoCo settings, exploration
    std 0.2) trains in chunks of ``specialist_chunk`` steps until a plateau (two chunks in a row
    without a 2% gain in validation return) or ``specialist_steps``; the best checkpoint on
    validation episodes is kept (``reference.train_to_plateau``). It is then measured, with
    a = 0, on ``reference_episodes`` other public episodes, which gives its return and a 95%
    interval of its gap over a = 0. This runs once per body, in the runner's prepare phase,
    through :mod:`papergym.cache` (off every trial's clock).

    ## Metrics
    As v0 (``score``, ``ratio``, ``return``, ``survival``, ``cmd_error``, ``episode_length``,
    ``zero_return``, ``specialist_return``, ``reference_gap``), plus ``reference_gap_low`` (the
    lower end of the 95% interval of the specialist's gap over a = 0 on the reference
    episodes: where it is not above zero the specialist did not beat doing nothing and S is
    not a normalized score) and ``specialist_steps`` (the steps the plateau rule trained).
    Units: one row per held-out body.

    ## Tiers
    See :class:`XEmbodiedWalkerEnvV1` and benchmarks/specs/humanoid.yaml.

    ## Reference
    XHugWBC (ICML 2026, arXiv 2602.05791).

    ## Version History
    * v0: a fixed-step SB3 specialist with RL-Zoo hyperparameters (it lost to a = 0).
    * v1: the specialist trained to a plateau and reported with its interval over a = 0.
    * v2 (``XEmbodiedWalker-v2``): the same scoring on the v2 bodies, on which a = 0 falls.
    """

    env_class: ClassVar[type[XEmbodiedEnv]] = XEmbodiedWalkerEnvV1
    metrics: ClassVar[Mapping[str, str]] = {
        **XEmbodiedTask.metrics, "reference_gap_low": "max", "specialist_steps": "max"}
    task_kwargs: ClassVar[tuple[str, ...]] = (
        *XEmbodiedTask.task_kwargs, "specialist_chunk", "validation_episodes")

    def __init__(self, tier: str = "smoke", specialist_chunk: int = 50_000,
                 validation_episodes: int = 3, **kwargs: Any) -> None:
        super().__init__(tier=tier, **kwargs)
        self.specialist_chunk = int(specialist_chunk)
        self.validation_episodes = int(validation_episodes)

    def specialist_entry(self, body: str) -> cache.Entry:
        """The converged specialist of one held-out body, measured next to a = 0."""
        kwargs = self._eval_kwargs(body)

        def compute() -> dict[str, Any]:
            env = self.env_class(**kwargs)
            valid = self.public_eval_seeds(ref.REFERENCE_VALID_SEED, self.validation_episodes)

            def validate(policy: Any) -> float:
                return float(np.mean([run_body_episode(env, policy, s)["return"] for s in valid]))

            run = ref.train_to_plateau(lambda: self.env_class(**kwargs), self.specialist_steps,
                                       ref.REFERENCE_SEED, validate, chunk=self.specialist_chunk,
                                       hyper=self.specialist)
            # a fixed reference measured once for everyone: public seeds, never a trial's
            seeds = self.public_eval_seeds(ref.REFERENCE_EVAL_SEED, self.reference_episodes)
            spec = [run_body_episode(env, run.policy, s)["return"] for s in seeds]
            zero = [run_body_episode(env, zero_policy(env.n_slots), s)["return"] for s in seeds]
            gap, low, high = paired_interval(spec, zero)
            return {"return": float(np.mean(spec)), "zero_return": float(np.mean(zero)),
                    "gap": gap, "gap_low": low, "gap_high": high, "steps": run.steps,
                    "selected_at": run.selected_at, "curve": run.curve}

        return cache.Entry(
            "humanoid/specialist_v1",
            config={"env": self.env_class.__name__, "kwargs": kwargs,
                    "max_steps": self.specialist_steps, "chunk": self.specialist_chunk,
                    "hyper": self.specialist, "episodes": self.reference_episodes,
                    "validation": self.validation_episodes, "seed": ref.REFERENCE_SEED},
            build=compute, code=(Path(__file__).parent,))

    def reference(self, body: str) -> dict[str, float]:
        """The converged specialist of one body, one cache read: its return, the lower end of
        its 95% interval over a = 0 and the steps the plateau rule trained."""
        run = cache.get(self.specialist_entry(body))
        return {"specialist_return": float(run["return"]),
                "reference_gap_low": float(run["gap_low"]),
                "specialist_steps": float(run["steps"])}


XEmbodiedWalkerTaskV1 = _task_class("XEmbodiedWalkerTaskV1", XEmbodiedTaskV1, XEmbodiedWalkerEnvV1)
XEmbodiedHumanoidTaskV1 = _task_class("XEmbodiedHumanoidTaskV1", XEmbodiedTaskV1,
                                      XEmbodiedHumanoidEnvV1)


class TrainingLog:
    """The training episodes a problem served one trial, as the problem saw them: the env steps
    charged so far and, per finished episode, (steps at its end, its undiscounted return)."""

    def __init__(self) -> None:
        self.steps = 0
        self.episodes: list[tuple[int, float]] = []
        self._running: np.ndarray | None = None

    def record(self, rewards: np.ndarray, done: np.ndarray) -> None:
        rewards = np.asarray(rewards, np.float64)
        if self._running is None:
            self._running = np.zeros_like(rewards)
        self._running += rewards
        self.steps += len(rewards)
        for k in np.flatnonzero(done):
            self.episodes.append((self.steps, float(self._running[k])))
            self._running[k] = 0.0

    def curve(self, total_steps: int, points: int = 20) -> list[tuple[float, float]]:
        """Mean return of the episodes that ended in each of ``points`` equal spans of the
        budget, at the span's end (spans where no episode ended are left out)."""
        if not self.episodes or total_steps <= 0:
            return []
        ends = np.array([e for e, _ in self.episodes], float)
        returns = np.array([r for _, r in self.episodes], float)
        edges = np.linspace(0.0, float(total_steps), points + 1)
        span = np.clip(np.searchsorted(edges, ends, side="left") - 1, 0, points - 1)
        return [(float(edges[k + 1]), float(returns[span == k].mean()))
                for k in range(points) if (span == k).any()]


class LoggedVectorEnv(XEmbodiedVectorEnv):
    """The training vector env, recording every finished episode's return in a
    :class:`TrainingLog` (problem side: the agent holds a proxy of it)."""

    def __init__(self, envs: Sequence[Any], log: TrainingLog, **kwargs: Any) -> None:
        super().__init__(envs, **kwargs)
        self._log = log

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        obs, reward, terminated, truncated, info = super().step(actions)
        self._log.record(reward, terminated | truncated)
        return obs, reward, terminated, truncated, info


class XEmbodiedTaskV2(XEmbodiedTaskV1):
    """Zero-shot scoring on held-out bodies against two specialists: one trained with the
    generalist's own step budget and one trained to a plateau (v2).

    ## Description
    As v1 (:class:`XEmbodiedTaskV1`): ``train_view(seed)`` serves metered environments over the
    training pool of ``seed``; ``evaluate`` runs the returned policy (``obs -> action``) and
    a = 0 on the same held-out episodes of every body in ``heldout``, and normalizes by a
    per-body SB3 PPO specialist trained by the problem (prepare phase, :mod:`papergym.cache`)
    in chunks of ``specialist_chunk`` steps to a plateau (reached no earlier than
    ``train_steps``: the plateaued specialist trains at least as long as the generalist) or
    ``specialist_steps``. The same specialist run also keeps its policy after exactly
    ``train_steps`` steps (the generalist's budget; ``train_steps`` must be a multiple of the
    chunk): the *matched* specialist, trained
    on the held-out body itself with as many env steps as the generalist had on its pool. A
    generalist that matches the plateaued specialist may only have converged where the
    specialist has; one that matches the matched specialist transfers at equal cost.
    The training vector env records the return of every training episode it serves, so the
    problem draws each trial's learning curve.

    ## Metrics
    As v1 (``score`` and ``ratio`` against the plateaued specialist, ``return``, ``survival``,
    ``cmd_error``, ``episode_length``, ``zero_return``, ``specialist_return``,
    ``reference_gap``, ``reference_gap_low``, ``specialist_steps``: the steps the plateau rule
    trained), plus, per held-out body: ``score_matched`` and ``ratio_matched`` (S and R/R_spec
    against the matched specialist), ``matched_specialist_return``,
    ``matched_specialist_steps``, ``matched_reference_gap_low`` (the lower end of the 95%
    interval of the matched specialist's gap over a = 0 on the reference episodes, as v1's
    ``reference_gap_low``), ``specialist_survival`` and ``matched_specialist_survival``
    (the specialists' survival on the reference episodes: whether survival is attainable on
    the body), ``survival_gap`` and ``survival_gap_matched`` (the policy's survival minus each
    specialist's). Curve ``train_return_vs_env_steps``: the mean return of the training
    episodes that ended in each twentieth of the budget (exploration noise on, training
    bodies). Units: one row per held-out body.

    ## Tiers
    See :class:`XEmbodiedWalkerEnvV2` and benchmarks/specs/humanoid.yaml.

    ## Reference
    XHugWBC (ICML 2026, arXiv 2602.05791).

    ## Version History
    * v0: a fixed-step SB3 specialist with RL-Zoo hyperparameters (it lost to a = 0).
    * v1: the specialist trained to a plateau and reported with its interval over a = 0.
    * v2: the v2 bodies (a = 0 falls); the matched specialist, the specialists' survival and
      the training curve added to the v1 scoring (``score``, ``ratio`` and every v1 metric
      keep their definitions).
    """

    env_class: ClassVar[type[XEmbodiedEnv]] = XEmbodiedWalkerEnvV2
    metrics: ClassVar[Mapping[str, str]] = {
        **XEmbodiedTaskV1.metrics, "score_matched": "max", "ratio_matched": "max",
        "matched_specialist_return": "max", "matched_specialist_steps": "max",
        "matched_reference_gap_low": "max",
        "specialist_survival": ("max", 0.0, 1.0), "matched_specialist_survival": ("max", 0.0, 1.0),
        "survival_gap": ("max", -1.0, 1.0), "survival_gap_matched": ("max", -1.0, 1.0)}

    def __init__(self, tier: str = "smoke", **kwargs: Any) -> None:
        super().__init__(tier=tier, **kwargs)
        self._logs: dict[int, TrainingLog] = {}

    def train_view(self, seed: int, budget: Budget) -> EnvView:
        kwargs = {**self.env_kwargs, "pool_seed": int(seed)}
        log = self._logs[int(seed)] = TrainingLog()
        return EnvView(partial(self.env_class, **kwargs), budget, seed,
                       options=("randomization", *OBSERVATION_OPTIONS),  # no Task reference
                       vectorize=partial(LoggedVectorEnv, log=log))

    def curves(self, seed: int) -> dict[str, list[tuple[float, float]]]:
        log = self._logs.get(int(seed))
        curve = log.curve(self.train_steps) if log is not None else []
        return {"train_return_vs_env_steps": curve} if curve else {}

    def specialist_entry(self, body: str) -> cache.Entry:
        """The specialist run of one held-out body (plateaued and matched policies), each
        measured next to a = 0 on the same public reference episodes."""
        if self.train_steps % self.specialist_chunk or self.train_steps > self.specialist_steps:
            raise ValueError(
                f"{type(self).__name__}: train_steps={self.train_steps} must be a multiple of "
                f"specialist_chunk={self.specialist_chunk} and at most specialist_steps="
                f"{self.specialist_steps} (the matched specialist is the specialist run after "
                f"exactly train_steps steps, taken at a chunk's end)")
        kwargs = self._eval_kwargs(body)

        def compute() -> dict[str, Any]:
            env = self.env_class(**kwargs)
            valid = self.public_eval_seeds(ref.REFERENCE_VALID_SEED, self.validation_episodes)

            def validate(policy: Any) -> float:
                return float(np.mean([run_body_episode(env, policy, s)["return"] for s in valid]))

            run = ref.train_to_plateau(lambda: self.env_class(**kwargs), self.specialist_steps,
                                       ref.REFERENCE_SEED, validate, chunk=self.specialist_chunk,
                                       hyper=self.specialist, matched_steps=self.train_steps,
                                       min_steps=self.train_steps)
            # fixed references measured once for everyone: public seeds, never a trial's
            seeds = self.public_eval_seeds(ref.REFERENCE_EVAL_SEED, self.reference_episodes)
            spec = [run_body_episode(env, run.policy, s) for s in seeds]
            matched = [run_body_episode(env, run.matched, s) for s in seeds]
            zero = [run_body_episode(env, zero_policy(env.n_slots), s)["return"] for s in seeds]
            gap, low, high = paired_interval([r["return"] for r in spec], zero)
            _, matched_low, _ = paired_interval([r["return"] for r in matched], zero)
            return {"return": float(np.mean([r["return"] for r in spec])),
                    "survival": float(np.mean([r["survival"] for r in spec])),
                    "matched_return": float(np.mean([r["return"] for r in matched])),
                    "matched_survival": float(np.mean([r["survival"] for r in matched])),
                    "matched_gap_low": matched_low,
                    "zero_return": float(np.mean(zero)),
                    "gap": gap, "gap_low": low, "gap_high": high, "steps": run.steps,
                    "matched_steps": run.matched_steps, "selected_at": run.selected_at,
                    "curve": run.curve}

        return cache.Entry(
            "humanoid/specialist_v2",
            config={"env": self.env_class.__name__, "kwargs": kwargs,
                    "max_steps": self.specialist_steps, "chunk": self.specialist_chunk,
                    "matched_steps": self.train_steps, "hyper": self.specialist,
                    "episodes": self.reference_episodes,
                    "validation": self.validation_episodes, "seed": ref.REFERENCE_SEED},
            build=compute, code=(Path(__file__).parent,))

    def reference(self, body: str) -> dict[str, float]:
        """Both specialists of one body, one cache read."""
        run = cache.get(self.specialist_entry(body))
        return {"specialist_return": float(run["return"]),
                "reference_gap_low": float(run["gap_low"]),
                "specialist_steps": float(run["steps"]),
                "matched_specialist_return": float(run["matched_return"]),
                "matched_specialist_steps": float(run["matched_steps"]),
                "matched_reference_gap_low": float(run["matched_gap_low"]),
                "specialist_survival": float(run["survival"]),
                "matched_specialist_survival": float(run["matched_survival"])}

    def finish_unit(self, unit: dict[str, Any]) -> dict[str, Any]:
        r_matched = unit["matched_specialist_return"]
        return {**unit,
                "score_matched": normalized_score(unit["return"], unit["zero_return"], r_matched),
                "ratio_matched": unit["return"] / r_matched if abs(r_matched) > 1e-9 else 0.0,
                "survival_gap": unit["survival"] - unit["specialist_survival"],
                "survival_gap_matched": unit["survival"] - unit["matched_specialist_survival"]}


XEmbodiedWalkerTaskV2 = _task_class("XEmbodiedWalkerTaskV2", XEmbodiedTaskV2, XEmbodiedWalkerEnvV2)
