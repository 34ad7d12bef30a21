"""Scoring of the cross-embodiment problems: zero-shot return, survival, tracking error and the
normalized score S on held-out bodies, all computed by the problem."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from papergym import cache
from papergym.problem import Budget, EnvTask, EnvView, EvalResult

from . import reference as ref
from .env import XEmbodiedEnv, XEmbodiedHumanoidEnv, XEmbodiedWalkerEnv

# Minimum denominator R_spec - R_zero: max(1, 10% of |R_zero|). A specialist that did not beat
# a = 0 by that much leaves S ill-defined; the floor keeps S finite and the table reports both
# references (zero_return, specialist_return) so the reader sees when this happened.
SCORE_FLOOR_ABS, SCORE_FLOOR_REL = 1.0, 0.1


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
    episodes runs a = 0. The specialist reference is trained by the problem (see
    ``reference.py``) once per body, in the runner's prepare phase (:mod:`papergym.cache`).

    ## Metrics
    ``score``: mean over held-out bodies of S_i = (R_i - R_zero,i) / max(R_spec,i - R_zero,i,
    1, 0.1 |R_zero,i|) (the floor only binds when the specialist failed to beat a = 0);
    ``ratio``: mean R_i / R_spec,i (the paper's 85% quantity); ``return``; ``survival`` (share of
    episodes reaching truncation); ``cmd_error`` (episode mean |v - v*|); ``zero_return``,
    ``specialist_return`` (the references) and ``reference_gap`` = R_spec - R_zero (S and the
    ratio are meaningful only where it is positive: a specialist that loses to a = 0 makes the
    ratio look good for free). The view never exposes held-out bodies to a generalist.
    Units: one row per held-out body.

    ## Tiers
    See the env docstrings and benchmarks/specs/humanoid.yaml.

    ## Reference
    XHugWBC (ICML 2026, arXiv 2602.05791).

    ## Version History
    * v0: initial release.
    """

    env_class: ClassVar[type[XEmbodiedEnv]] = XEmbodiedWalkerEnv
    metrics: ClassVar[Mapping[str, str]] = {
        "score": "max", "ratio": "max", "return": "max", "survival": "max", "cmd_error": "min",
        "episode_length": "max", "zero_return": "max", "specialist_return": "max",
        "reference_gap": "max",
    }
    task_kwargs: ClassVar[tuple[str, ...]] = (
        "train_steps", "eval_episodes", "heldout", "specialist_steps", "specialist",
        "reference_episodes")

    def __init__(self, tier: str = "smoke", train_steps: int = 4096, eval_episodes: int = 1,
                 heldout: list[str] | tuple[str, ...] = ("walker2d_v5",),
                 specialist_steps: int = 512, specialist: dict[str, Any] | None = None,
                 reference_episodes: int = 2, **env_kwargs: Any) -> None:
        env_kwargs = {**env_kwargs, "obs": "flat"}
        super().__init__(self._make_env, tier=tier, train_steps=train_steps,
                         eval_episodes=eval_episodes, **env_kwargs)
        self.heldout = [heldout] if isinstance(heldout, str) else list(heldout)
        self.specialist_steps = int(specialist_steps)
        self.specialist = dict(specialist or {})
        self.reference_episodes = int(reference_episodes)

    def _make_env(self, **kwargs: Any) -> XEmbodiedEnv:
        return self.env_class(**kwargs)

    @property
    def budget(self) -> Budget:
        return Budget(env_steps=self.train_steps)

    def train_view(self, seed: int, budget: Budget) -> EnvView:
        kwargs = {**self.env_kwargs, "pool_seed": int(seed)}
        return EnvView(partial(self.env_class, **kwargs), budget, seed)  # no Task reference

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

    def specialist_return(self, body: str) -> float:
        return float(cache.get(self.specialist_entry(body)))

    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        if not callable(artifact):
            raise TypeError(f"{type(self).__name__} expects a policy (observation -> action), "
                            f"got {type(artifact).__name__}")
        units = []
        seeds = self.eval_seeds(seed, self.eval_episodes)
        for body in self.heldout:
            env = self.env_class(**self._eval_kwargs(body))
            rows = [run_body_episode(env, artifact, s) for s in seeds]
            zero = [run_body_episode(env, zero_policy(env.n_slots), s)["return"] for s in seeds]
            env.close()
            r_agent = float(np.mean([r["return"] for r in rows]))
            r_zero = float(np.mean(zero))
            r_spec = self.specialist_return(body)
            units.append({
                "instance": body,
                "score": (r_agent - r_zero) / max(r_spec - r_zero, SCORE_FLOOR_ABS,
                                                  SCORE_FLOOR_REL * abs(r_zero)),
                "ratio": r_agent / r_spec if abs(r_spec) > 1e-9 else 0.0,
                "return": r_agent,
                "survival": float(np.mean([r["survival"] for r in rows])),
                "cmd_error": float(np.mean([r["cmd_error"] for r in rows])),
                "episode_length": float(np.mean([r["episode_length"] for r in rows])),
                "zero_return": r_zero, "specialist_return": r_spec,
                # > 0 iff the specialist beat a = 0 here; S and ratio mean something only then
                "reference_gap": r_spec - r_zero,
            })
        metrics = {k: float(np.mean([u[k] for u in units])) for k in self.metrics}
        return EvalResult(metrics=metrics, units=units)


class XEmbodiedWalkerTask(XEmbodiedTask):
    __doc__ = XEmbodiedTask.__doc__
    env_class = XEmbodiedWalkerEnv


class XEmbodiedHumanoidTask(XEmbodiedTask):
    __doc__ = XEmbodiedTask.__doc__
    env_class = XEmbodiedHumanoidEnv
