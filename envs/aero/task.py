"""The Tasks of the aero family: the shared training set (built once in the prepare phase), the
FFD env's scores, and the surrogate problem ``DragSurrogate-v1`` (v0: the superseded versions
on the halfway bounce-back solver)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, ClassVar

import numpy as np
import torch

from papergym import cache
from papergym.envs.aero import shapes
from papergym.envs.aero.env import SOLVER_CODE, DragFFD2DEnv, DragFFD2DEnvV1
from papergym.envs.aero.flow import Grid, simulate
from papergym.envs.aero.surrogate import DragSurrogateNet, SurrogateEnsemble
from papergym.problem import (
    Budget,
    EnvTask,
    EvalResult,
    MeteredEnv,
    MetricDeclaration,
    Task,
    eval_salt,
    eval_seed_sequence,
)

CHUNK = 20            # shapes per cache entry: the prepare phase builds chunks in parallel
DATASET_STREAM = 31   # training shapes come from SeedSequence([31, i]) (public, < 10^6 by design)
TEST_STREAM = 32      # held-out surrogate shapes: a salted stream (eval_seed_sequence)


def labelled_shape(rng: np.random.Generator, deformed: bool, delta_max: float, grid: Grid,
                   body_type: int, own_height: bool = False) -> dict[str, Any]:
    """One shape (a base shape, or a random feasible FFD of one) with its LBM targets. C_d and the
    build-up are per unit of the shape's own frontal height (``own_height``, v1: a function of
    the shape alone) or of its base shape's (v0)."""
    base = shapes.make_shape(body_type, rng)
    basis = shapes.ffd_basis(base)
    z = np.zeros(shapes.N_Z)
    if deformed:
        target = rng.uniform(-delta_max, delta_max, shapes.N_Z)
        for fraction in 0.5 ** np.arange(13):  # the largest feasible halving of the draw
            if shapes.feasible(shapes.deform(base, basis, fraction * target), base):
                z = fraction * target
                break
    points = shapes.deform(base, basis, z)
    h_ref = float(shapes.frontal_height(points if own_height else base))
    out = simulate(points, h_ref, grid)
    return {"points": points.astype(np.float32), "base": base.astype(np.float32), "z": z.astype(np.float32),
            "body_type": body_type, "cd": out["cd"], "cp": out["cp"], "b": out["build_up"],
            "u": out["field"], "drift": out["drift"]}


def build_chunk(stream: int | np.random.SeedSequence, start: int, count: int, delta_max: float,
                grid: Grid, layout: str = "v0") -> dict[str, np.ndarray]:
    """Shapes ``start..start+count`` of a stream: body types cycle (balanced), odd ones deformed.
    ``layout`` "v1": shape 2k+1 is a random FFD of shape 2k and C_d is on each shape's own frontal
    height; "v0": each deformed shape has a base of its own, and C_d is on the base's height."""
    if layout not in ("v0", "v1"):
        raise ValueError(f"layout must be v0 or v1, got {layout!r}")
    paired = layout == "v1"
    rows = []
    for i in range(start, start + count):
        draw = i // 2 if paired else i
        seq = (np.random.SeedSequence([stream, draw]) if isinstance(stream, int)
               else np.random.SeedSequence(stream.entropy, spawn_key=(*stream.spawn_key, draw)))
        rows.append(labelled_shape(np.random.default_rng(seq), bool(i % 2), delta_max, grid,
                                   (i // 2) % len(shapes.BODY_TYPES), own_height=paired))
    return {k: np.stack([np.asarray(r[k]) for r in rows]) for k in rows[0]}


DATA_CODE = (*SOLVER_CODE, labelled_shape, build_chunk)
CD_HEIGHT = {"v0": "base", "v1": "own"}  # the frontal height the dataset's C_d is per unit of


def _stack(chunks: Sequence[Mapping[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {k: np.concatenate([np.asarray(c[k]) for c in chunks]) for k in chunks[0]}


def dataset_entries(n_shapes: int, delta_max: float, grid: Grid, layout: str) -> list[cache.Entry]:
    """The training set, in cache chunks (shared by both problems of the family)."""
    entries = []
    for start in range(0, n_shapes, CHUNK):
        count = min(CHUNK, n_shapes - start)
        config = {"stream": DATASET_STREAM, "start": start, "count": count, "delta_max": delta_max,
                  "grid": grid.as_dict(), "layout": layout}
        entries.append(cache.Entry("aero/dataset", config, code=DATA_CODE,
                                   build=partial(build_chunk, DATASET_STREAM, start, count, delta_max, grid,
                                                 layout)))
    return entries


class DatasetView:
    """What agents of both problems get (``train_view``).

    - ``dataset()``: the training shapes and their LBM targets at the evaluation resolution, a
      dict of arrays: ``points`` (N, 128, 2), ``base`` (N, 128, 2), ``z`` (N, 12), ``body_type``
      (N,), ``cd`` (N,), ``cp`` (N, 128) surface pressure coefficient, ``b`` (N, 32) drag build-up,
      ``u`` (N, 2, 32, 12) mean velocity / U, ``drift`` (N,) the C_d stationarity check. Even rows
      are base shapes, odd rows random feasible FFD deformations (in v1 of the base shape in the
      row before); seeds disjoint from every test shape. C_d and b are per unit of frontal
      height: in v1 the shape's own (C_d is then a function of the shape alone; the FFD env's
      C_d, on the base's height, is C_d h / h_0, a drag), in v0 the base shape's.
    - ``delta_max``, ``eval_length`` (cells per L of the evaluation solver), ``horizon``, ``budget``,
      ``cd_height`` ("own" in v1, "base" in v0: the height the dataset's C_d is per unit of).
    - ``make_env()`` (FFD problem only): training envs metered by ``env_steps``.
    """

    def __init__(self, entries: list[cache.Entry], budget: Budget, seed: int, settings: dict[str, Any],
                 make: Any = None) -> None:
        self._entries, self.budget, self.seed, self._make = entries, budget, int(seed), make
        for key, value in settings.items():
            setattr(self, key, value)

    def dataset(self) -> dict[str, np.ndarray]:
        return {k: v.copy() for k, v in _stack([cache.get(e) for e in self._entries]).items()}

    def make_env(self) -> MeteredEnv:
        if self._make is None:
            raise AttributeError("this problem has no training env")
        return MeteredEnv(self._make(), self.budget, training_seeds_only=True)


_PCT: MetricDeclaration = ("max", None, None)
FFD_METRICS: dict[str, MetricDeclaration] = {
    "return": "max", "episode_length": ("max", 0.0, None), "reduction": _PCT, "success": ("max", 0.0, 1.0),
    "eval_reduction": _PCT, "coarse_gap": ("min", None, None), "mean_displacement": ("min", 0.0, None),
    "max_displacement": ("min", 0.0, None), "lbm_calls": ("min", 0.0, None), "feasible": ("max", 0.0, 1.0),
    "cd0_verify": ("min", 0.0, None), "final_cd_verify": ("min", None, None),
    "predicted_reduction": _PCT, "exploitation_gap": ("min", None, None),
}


def surrogate_of(policy: Any) -> DragSurrogateNet | SurrogateEnsemble | None:
    """The surrogate a policy optimized on (its ``surrogate`` attribute), or None. A policy that
    names one must name a ``DragSurrogateNet`` or ``SurrogateEnsemble``, which the problem can
    run; anything else raises ``TypeError``."""
    model = getattr(policy, "surrogate", None)
    if model is not None and not isinstance(model, DragSurrogateNet | SurrogateEnsemble):
        raise TypeError(f"policy.surrogate must be a DragSurrogateNet or SurrogateEnsemble "
                        f"(papergym.envs.aero.surrogate), got {type(model).__name__}")
    return model


def predicted_reduction(model: DragSurrogateNet | SurrogateEnsemble, base: np.ndarray,
                        design: np.ndarray, body_type: int, own_height: bool) -> float:
    """The drag reduction of ``design`` over ``base`` (%) that ``model`` predicts, in the env's
    units: drag per unit of the base's frontal height h_0, i.e. the predicted C_d times h / h_0
    when the model learned C_d per unit of each shape's own height h (``own_height``, v1 data)."""
    points = np.stack([base, design]).astype(np.float64)
    with torch.no_grad():
        cd = model.predict(torch.tensor(points, dtype=torch.float32),
                           torch.full((2,), int(body_type), dtype=torch.long))["cd"]
    drag = cd.double().numpy()
    if own_height:
        drag = drag * np.array([shapes.frontal_height(p) for p in points]) / shapes.frontal_height(base)
    return float(100.0 * (drag[0] - drag[1]) / drag[0])


class DragFFD2DTask(EnvTask):
    """
    ## Description
    Scores a shape-optimization policy on ``DragFFD2D-v0``: ``eval_episodes`` held-out test
    shapes per trial; every final design is verified by the problem at the verification
    resolution.

    ## Data
    ``train_view(seed)`` is a :class:`DatasetView`: the shared training set (``n_train`` shapes
    with LBM targets at the evaluation resolution, built once in the prepare phase), the
    constraint box, horizon and budget, and metered training envs (``train_steps`` steps).

    ## Metrics
    Per episode (units) and their means: ``reduction`` (primary: verified drag reduction in %
    at the verification resolution, the return x 100), ``success`` (reduction > 0 with every
    constraint met), ``eval_reduction`` (the final design's reduction at the evaluation
    resolution, %), ``coarse_gap`` = eval_reduction - reduction (how much of the gain only the
    coarse solver sees), ``mean_displacement`` / ``max_displacement`` (% of L), ``lbm_calls``,
    ``feasible``, ``cd0_verify``, ``final_cd_verify``.

    ## Episode End
    As the env: truncation after ``horizon`` steps.

    ## Arguments
    The env's, plus ``n_train`` (training shapes), ``train_steps``, ``eval_episodes``.

    ## Tiers
    As the env; ``n_train`` 16 / 160 / 2,000 (smoke / standard / full), ``eval_episodes`` 1 / 2 / 4.

    ## Reference
    UniDrag (ICML 2026, abstract); metrics after the paper's (CFD-verified reduction, success,
    displacement) [recon].

    ## Version History
    * v0: initial release. Superseded by ``DragFFD2D-v1`` (:class:`DragFFD2DTaskV1`): the
      halfway bounce-back solver makes C_d a step function of the design.
    """

    id: ClassVar[str] = "papergym/DragFFD2D-v0"
    family: ClassVar[str] = "aero"
    paper: ClassVar[str] = "unidrag2026"
    metrics: ClassVar[Mapping[str, MetricDeclaration]] = FFD_METRICS
    task_kwargs: ClassVar[tuple[str, ...]] = ("train_steps", "eval_episodes", "n_train")
    env_class: ClassVar[type[DragFFD2DEnv]] = DragFFD2DEnv
    data_layout: ClassVar[str] = "v0"  # see build_chunk

    def __init__(self, tier: str = "smoke", train_steps: int = 0, eval_episodes: int = 1, n_train: int = 8,
                 **env_kwargs: Any) -> None:
        super().__init__(self.env_class, tier=tier, train_steps=train_steps, eval_episodes=eval_episodes,
                         **env_kwargs)
        if not isinstance(n_train, int) or n_train < 2:
            raise ValueError(f"{self.id}: n_train must be an integer >= 2, got {n_train!r}")
        self.n_train = n_train
        self._probe = self.env_class(**env_kwargs)

    def _entries(self) -> list[cache.Entry]:
        return dataset_entries(self.n_train, self._probe.delta_max, self._probe.eval_grid, self.data_layout)

    def cache_entries(self, seeds: Sequence[int]) -> list[cache.Entry]:
        return self._entries()

    def train_view(self, seed: int, budget: Budget) -> DatasetView:
        env = self._probe
        settings = {"delta_max": env.delta_max, "eval_length": env.eval_grid.length, "horizon": env.horizon,
                    "budget_per_episode": env.max_budget, "cd_height": CD_HEIGHT[self.data_layout]}
        make = partial(self.env_class, **self.env_kwargs)
        return DatasetView(self._entries(), budget, seed, settings, make=make)

    _surrogate: DragSurrogateNet | SurrogateEnsemble | None = None  # the policy's, while evaluating

    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        self._surrogate = surrogate_of(artifact)
        try:
            return super().evaluate(artifact, seed)
        finally:
            self._surrogate = None

    def episode_metrics(self, env: Any, episode_return: float, length: int) -> dict[str, float]:
        s = env.unwrapped.final_scores_cache
        reduction = 100.0 * s["final_reduction"]
        metrics = {"return": episode_return, "episode_length": float(length), "reduction": reduction,
                   "success": float(s["final_reduction"] > 0 and s["feasible"] == 1.0),
                   "eval_reduction": 100.0 * s["eval_reduction"],
                   "coarse_gap": 100.0 * s["eval_reduction"] - reduction,
                   "mean_displacement": s["mean_displacement"], "max_displacement": s["max_displacement"],
                   "lbm_calls": s["lbm_calls"], "feasible": s["feasible"], "cd0_verify": s["cd0_verify"],
                   "final_cd_verify": s["final_cd_verify"]}
        if self._surrogate is not None:
            e = env.unwrapped
            predicted = predicted_reduction(self._surrogate, e.base, e.points, e.body_type,
                                            own_height=CD_HEIGHT[self.data_layout] == "own")
            metrics["predicted_reduction"] = predicted
            metrics["exploitation_gap"] = predicted - reduction
        return metrics


class DragFFD2DTaskV1(DragFFD2DTask):
    """
    ## Description
    Scores a shape-optimization policy on ``DragFFD2D-v1`` (interpolated bounce-back on the
    body: :class:`papergym.envs.aero.env.DragFFD2DEnvV1`): ``eval_episodes`` held-out test shapes
    per trial; every final design is verified by the problem at the verification resolution.

    ## Data
    As v0: a :class:`DatasetView`, whose training set is labelled by the v1 solver and comes in
    pairs: shape 2k+1 is a random feasible FFD of the base shape 2k, so the effect of a
    deformation on one body is in the data. The dataset's C_d is on each shape's own frontal
    height h (the env's C_d, on the base's h_0, is that times h / h_0).

    ## Metrics
    As v0: ``reduction`` (primary, %), ``success``, ``eval_reduction``, ``coarse_gap``,
    ``mean_displacement``, ``max_displacement``, ``lbm_calls``, ``feasible``, ``cd0_verify``,
    ``final_cd_verify``; for a policy that carries its surrogate, ``predicted_reduction`` and
    ``exploitation_gap`` (predicted minus verified reduction, % points).

    ## Episode End
    As the env: truncation after ``horizon`` steps.

    ## Arguments
    As v0.

    ## Tiers
    As v0; ``n_train`` 16 / 160 / 2,000 (smoke / standard / full), ``eval_episodes`` 1 / 2 / 4.

    ## Reference
    As v0.

    ## Version History
    * v1: the env's solver uses interpolated bounce-back on the body; paired training data, C_d
      of the data on each shape's own frontal height. Later, with every earlier metric unchanged:
      ``predicted_reduction`` and ``exploitation_gap`` for policies that carry their surrogate.
    * v0: initial release (superseded).
    """

    id: ClassVar[str] = "papergym/DragFFD2D-v1"
    env_class: ClassVar[type[DragFFD2DEnv]] = DragFFD2DEnvV1
    data_layout: ClassVar[str] = "v1"


SURROGATE_METRICS: dict[str, MetricDeclaration] = {
    "cd_r2": ("max", None, 1.0), "cd_mae": ("min", 0.0, None), "cd_mape": ("min", 0.0, None),
    "cp_rel_l2": ("min", 0.0, None), "b_rel_l2": ("min", 0.0, None), "u_rel_l2": ("min", 0.0, None),
    "cd_abs_error": ("min", 0.0, None),
}


class DragSurrogateTask(Task):
    """
    ## Description
    Learn a multi-output drag surrogate: from a 2-D vehicle profile (128 boundary points) and its
    body type, predict the drag coefficient C_d, the surface pressure coefficient C_p (128), the
    streamwise drag build-up b (32 stations) and the mean velocity field (2 x 32 x 12), as the
    problem's D2Q9 LBM computes them at the evaluation resolution. Scored on held-out shapes.

    ## Data
    ``train_view(seed)`` is a :class:`DatasetView` (``dataset()``: ``n_train`` shapes, half base
    and half FFD-deformed, with every target; built once in the prepare phase and shared with
    ``DragFFD2D-v0``).

    ## Metrics
    On ``n_test`` held-out shapes (a salted stream, body types balanced, half deformed; labelled
    once per store and cached): ``cd_r2`` (primary), ``cd_mae``, ``cd_mape`` (%), relative L2 errors
    ``cp_rel_l2``, ``b_rel_l2``, ``u_rel_l2``; units: per-shape ``cd_abs_error``. The artifact must be
    a ``DragSurrogateNet`` or ``SurrogateEnsemble`` (``papergym.envs.aero.surrogate``) whose C_d is
    differentiable in the points (checked: a finite, nonzero gradient), else ``TypeError``.

    ## Episode End
    Not sequential: one evaluation per trial.

    ## Arguments
    ``n_train``, ``n_test``, ``eval_length``, ``eval_steps``, ``reynolds``, ``delta_max``, ``dtype``.

    ## Tiers
    defaults (API checks): 8 / 4 shapes at L = 8, 200 steps, Re 20. smoke: 16 training and 8 test
    shapes at L = 10, 400 steps, Re 40. standard (Re 100): 160 / 40 at L = 20, 1,700 steps. full:
    2,000 / 400 at L = 48 (the paper: 15,000 3-D vehicles).

    ## Reference
    UniDrag (ICML 2026, abstract): C_d R^2 = 0.937 on 15,000 vehicles; the 2-D stand-in is [recon].

    ## Version History
    * v0: initial release. Superseded by ``DragSurrogate-v1`` (:class:`DragSurrogateTaskV1`):
      its targets come from the halfway bounce-back solver, a deformed shape's C_d is on its base
      shape's height (not a function of the shape the surrogate sees), and it refuses a surrogate
      whose gradient is zero, so a constant predictor cannot be scored as the trivial baseline.
    """

    id: ClassVar[str] = "papergym/DragSurrogate-v0"
    family: ClassVar[str] = "aero"
    paper: ClassVar[str] = "unidrag2026"
    metrics: ClassVar[Mapping[str, MetricDeclaration]] = SURROGATE_METRICS
    boundary: ClassVar[str] = "halfway"
    nonzero_gradient: ClassVar[bool] = True  # v0 refuses a zero gradient; v1 only a detached one
    data_layout: ClassVar[str] = "v0"  # see build_chunk

    def __init__(self, tier: str = "smoke", n_train: int = 8, n_test: int = 4, eval_length: int = 8,
                 eval_steps: int = 200, reynolds: float = 20.0, delta_max: float = 0.06,
                 dtype: str = "float32") -> None:
        super().__init__(tier=tier)
        for name, value, low in (("n_train", n_train, 2), ("n_test", n_test, 2)):
            if not isinstance(value, int) or value < low:
                raise ValueError(f"{self.id}: {name} must be an integer >= {low}, got {value!r}")
        self.n_train, self.n_test, self.delta_max = n_train, n_test, float(delta_max)
        self.grid = Grid(length=eval_length, steps=eval_steps, reynolds=reynolds, dtype=dtype,
                         boundary=self.boundary)

    @property
    def budget(self) -> Budget:
        return Budget(lbm_calls=0)

    def _entries(self) -> list[cache.Entry]:
        return dataset_entries(self.n_train, self.delta_max, self.grid, self.data_layout)

    def test_entries(self) -> list[cache.Entry]:
        """The held-out set: a salted stream, so its shapes are no public function of a seed."""
        stream = eval_seed_sequence(TEST_STREAM)
        entries = []
        for start in range(0, self.n_test, CHUNK):
            count = min(CHUNK, self.n_test - start)
            # the key names the salted stream by a digest of its entropy, not the entropy itself
            digest = str(np.random.default_rng(stream).integers(2**63))
            config = {"stream": digest, "start": start, "count": count, "delta_max": self.delta_max,
                      "grid": self.grid.as_dict(), "layout": self.data_layout}
            entries.append(cache.Entry("aero/test", config, code=DATA_CODE,
                                       build=partial(build_chunk, stream, start, count, self.delta_max,
                                                     self.grid, self.data_layout)))
        return entries

    def cache_entries(self, seeds: Sequence[int]) -> list[cache.Entry]:
        # the held-out set is salted: the prepare phase (which holds no salt) would build the
        # public one that no sealed trial reads, so the first trial builds it (under the lock)
        return self._entries() + (self.test_entries() if eval_salt() is not None else [])

    def train_view(self, seed: int, budget: Budget) -> DatasetView:
        return DatasetView(self._entries(), budget, seed, {"delta_max": self.delta_max,
                                                          "eval_length": self.grid.length,
                                                          "cd_height": CD_HEIGHT[self.data_layout]})

    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        if not isinstance(artifact, DragSurrogateNet | SurrogateEnsemble):
            raise TypeError(f"{type(self).__name__} expects a DragSurrogateNet or SurrogateEnsemble "
                            f"(papergym.envs.aero.surrogate), got {type(artifact).__name__}")
        test = _stack([cache.get(e) for e in self.test_entries()])
        artifact.eval()
        points = torch.tensor(test["points"], dtype=torch.float32, requires_grad=True)
        body = torch.tensor(test["body_type"], dtype=torch.long)
        pred = artifact.predict(points, body)
        try:
            grad, = torch.autograd.grad(pred["cd"].sum(), points)
        except RuntimeError as err:  # C_d does not depend on the points through autograd
            raise TypeError(f"the surrogate's C_d must be differentiable in the points: {err}") from None
        if not torch.isfinite(grad).all() or (self.nonzero_gradient and float(grad.abs().max()) == 0.0):
            raise TypeError("the surrogate's C_d must be differentiable in the points (got a "
                            f"{'zero or ' if self.nonzero_gradient else ''}non-finite gradient)")
        pred = {k: v.detach().double().numpy() for k, v in pred.items()}
        cd, cd_hat = test["cd"].astype(np.float64), pred["cd"]
        err = np.abs(cd_hat - cd)

        def rel_l2(name: str) -> float:
            t = test[name].reshape(len(cd), -1).astype(np.float64)
            return float(np.linalg.norm(pred[name].reshape(len(cd), -1) - t) / np.linalg.norm(t))

        metrics = {"cd_r2": float(1.0 - np.sum((cd_hat - cd) ** 2) / np.sum((cd - cd.mean()) ** 2)),
                   "cd_mae": float(err.mean()), "cd_mape": float(100.0 * np.mean(err / np.abs(cd))),
                   "cp_rel_l2": rel_l2("cp"), "b_rel_l2": rel_l2("b"), "u_rel_l2": rel_l2("u"),
                   "cd_abs_error": float(err.mean())}
        units = [{"instance": i, "cd_abs_error": float(e)} for i, e in enumerate(err)]
        return EvalResult(metrics=metrics, units=units)


class DragSurrogateTaskV1(DragSurrogateTask):
    """
    ## Description
    As ``DragSurrogate-v0`` (learn C_d, surface C_p, drag build-up and the mean velocity field of
    a 2-D vehicle profile; scored on held-out shapes), with every target computed by the v1
    solver (interpolated bounce-back on the body, as ``DragFFD2D-v1``).

    ## Data
    As v0: a :class:`DatasetView` (``dataset()``: ``n_train`` shapes, every target from the v1
    solver; shared with ``DragFFD2D-v1``), in pairs: shape 2k+1 is a random feasible FFD of the
    base shape 2k. C_d and the build-up are per unit of each shape's own frontal height, so every
    target is a function of the shape alone (v0 used the base shape's height, which a deformed
    shape does not show). The held-out shapes are drawn the same way.

    ## Metrics
    As v0: ``cd_r2`` (primary), ``cd_mae``, ``cd_mape``, ``cp_rel_l2``, ``b_rel_l2``, ``u_rel_l2``;
    units: per-shape ``cd_abs_error``. The artifact must be a ``DragSurrogateNet`` or
    ``SurrogateEnsemble`` whose C_d depends on the points through autograd with a finite
    gradient (a constant predictor, whose gradient is zero, is accepted), else ``TypeError``.

    ## Episode End
    Not sequential: one evaluation per trial.

    ## Arguments
    As v0.

    ## Tiers
    As v0: smoke 16 / 8 shapes at L = 10; standard 160 / 40 at L = 20, 1,700 steps, Re 100;
    full 2,000 / 400 at L = 48.

    ## Reference
    As v0.

    ## Version History
    * v1: targets from the interpolated bounce-back solver; paired base / deformed shapes; C_d on
      each shape's own frontal height; a zero gradient is accepted.
    * v0: initial release (superseded).
    """

    id: ClassVar[str] = "papergym/DragSurrogate-v1"
    boundary: ClassVar[str] = "interpolated"
    nonzero_gradient: ClassVar[bool] = False
    data_layout: ClassVar[str] = "v1"
