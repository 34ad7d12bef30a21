"""``papergym/TensorUQInertia-v0`` and ``papergym/TensorUQDielectric-v0``: predict a symmetric
rank-2 tensor with a full 6 x 6 covariance from a point set; the problem scores the returned
model on held-out, rotated and out-of-distribution sets that the agent never sees."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import torch

from papergym import cache
from papergym.datasets import MeteredBatches
from papergym.envs.tensoruq import calibration, crystals, geometry, shapes
from papergym.problem import (
    Budget,
    EvalResult,
    MetricDeclaration,
    Task,
    check_training_seed,
    eval_seed_sequence,
)

FAMILIES = ("gaussian", "laplace")
SPACES = ("km", "log_km")
N_SAMPLES = 100  # predictive draws per test item for the energy score
N_GROUP, N_EQUIV = 32, 64  # O(3) elements x test inputs for the equivariance error
COVERAGE_LEVELS = (0.5, 0.9, 0.95)
SPD_FLOOR = 1e-6  # a non-SPD Σ is scored with its eigenvalues clipped here [recon]
TRAIN_TAG, ORDER_TAG, TEST_TAG, OOD_TAG, EQUIV_TAG, SAMPLE_TAG, OUTLIER_TAG = range(21, 28)
MODELS_PER_TRIAL = 5  # the epoch budget allows this many models (a deep ensemble)
NOISE_DF = 3.0  # degrees of freedom of the Student-t target noise (``target_noise``) [recon]


@dataclass
class Split:
    """One split: ``inputs`` (a dict of arrays, see :func:`pack`) and ``targets`` [n, 6] (KM)."""

    inputs: dict[str, np.ndarray]
    targets: np.ndarray
    tags: np.ndarray | None = None  # OOD subset per row (evaluator only)

    def __len__(self) -> int:
        return len(self.targets)


def pack(point_sets: Sequence[np.ndarray], species: Sequence[np.ndarray] | None = None,
         volume: Sequence[float] | None = None) -> dict[str, np.ndarray]:
    """The input format: ``points`` [n, M, 3] float64 (zero-padded), ``mask`` [n, M] bool,
    ``species`` [n, M] int64 (bond species-pair index; zeros for clouds), ``volume`` [n]
    (cell volume in Å³; ones for clouds)."""
    n, m = len(point_sets), max(len(p) for p in point_sets)
    points = np.zeros((n, m, 3))
    mask = np.zeros((n, m), dtype=bool)
    spec = np.zeros((n, m), dtype=np.int64)
    for i, p in enumerate(point_sets):
        points[i, :len(p)] = p
        mask[i, :len(p)] = True
        if species is not None:
            spec[i, :len(p)] = species[i]
    vol = np.ones(n) if volume is None else np.asarray(volume, dtype=float)
    return {"points": points, "mask": mask, "species": spec, "volume": vol}


def subset(inputs: Mapping[str, np.ndarray], idx: np.ndarray) -> dict[str, np.ndarray]:
    return {k: np.asarray(v)[idx] for k, v in inputs.items()}


def rotate_inputs(inputs: Mapping[str, np.ndarray], R: np.ndarray) -> dict[str, np.ndarray]:
    out = dict(inputs)
    out["points"] = np.asarray(inputs["points"]) @ R.T
    return out


class TensorUQView:
    """What an agent may use: ``train`` and ``validation`` :class:`Split` s, ``batches``
    (metered epochs of (row indices, targets) minibatches of ``train``, in an order drawn from the
    seed: every agent of a seed sees the same), ``epochs`` (per model), ``init_seed``,
    ``kind`` (``inertia`` | ``dielectric``), ``spaces`` (the prediction spaces it may declare)."""

    def __init__(self, train: Split, validation: Split, epochs: int, batch_size: int, budget: Budget,
                 seed: int, kind: str, spaces: tuple[str, ...]) -> None:
        self.train, self.validation = train, validation
        self.epochs, self.batch_size, self.kind, self.spaces = int(epochs), int(batch_size), kind, spaces
        self.seed = int(seed)
        self.init_seed = int(np.random.default_rng([TRAIN_TAG, 1, seed]).integers(2**31))
        self.batches = MeteredBatches(np.arange(len(train)), train.targets, batch_size, budget,
                                      np.random.default_rng([ORDER_TAG, seed]))


def read_prediction(out: Any, n: int, where: str, spaces: tuple[str, ...]
                    ) -> tuple[torch.Tensor, torch.Tensor, str, str]:
    """Check ``predict``'s answer: (μ [n, 6], Σ [n, 6, 6] symmetric, family, space)."""
    if not isinstance(out, (tuple, list)) or len(out) != 4:
        raise TypeError(f"{where}: predict(inputs) must return (mu [B,6], Sigma [B,6,6], family, space), "
                        f"got {type(out).__name__}")
    mu, Sigma, family, space = out
    if family not in FAMILIES or space not in spaces:
        raise ValueError(f"{where}: family must be one of {FAMILIES} and space one of {spaces}, "
                         f"got {family!r}, {space!r}")
    mu = torch.as_tensor(np.asarray(mu, dtype=np.float64))
    Sigma = torch.as_tensor(np.asarray(Sigma, dtype=np.float64))
    if mu.shape != (n, 6) or Sigma.shape != (n, 6, 6):
        raise ValueError(f"{where}: expected mu ({n}, 6) and Sigma ({n}, 6, 6), got "
                         f"{tuple(mu.shape)} and {tuple(Sigma.shape)}")
    if not (torch.isfinite(mu).all() and torch.isfinite(Sigma).all()):
        raise FloatingPointError(f"{where}: predict returned non-finite values")
    return mu, 0.5 * (Sigma + Sigma.transpose(-1, -2)), str(family), str(space)


def project_spd(Sigma: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(Σ with eigenvalues clipped at SPD_FLOOR, whether each raw Σ was SPD)."""
    lam, V = torch.linalg.eigh(Sigma)
    valid = lam[:, 0] > 0
    return (V * lam.clamp_min(SPD_FLOOR)[:, None, :]) @ V.transpose(-1, -2), valid


LOG_CAP = 30.0  # log-space draws are mapped with eigenvalues capped at ±30 (finite scores)


def to_physical(v: torch.Tensor) -> torch.Tensor:
    """KM(expm(T(v))): log-space KM coordinates to physical KM coordinates (eigenvalues of the
    log tensor capped at ±LOG_CAP, so a wildly uncertain prediction scores badly, not inf)."""
    lam, V = torch.linalg.eigh(geometry.from_km(v))
    return geometry.km((V * torch.exp(lam.clamp(-LOG_CAP, LOG_CAP))[..., None, :]) @ V.transpose(-1, -2))


def to_log(v: torch.Tensor) -> torch.Tensor:
    """KM(logm(T(v))) with eigenvalues clipped at SPD_FLOOR."""
    lam, V = torch.linalg.eigh(geometry.from_km(v))
    return geometry.km((V * torch.log(lam.clamp_min(SPD_FLOOR))[..., None, :]) @ V.transpose(-1, -2))


def mahalanobis(mu: torch.Tensor, Sigma: torch.Tensor, y: torch.Tensor
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(q = (y − μ)ᵀ Σ⁻¹ (y − μ), log|Σ|, the eigenvalues of Σ, y − μ) per item, Σ SPD."""
    lam, V = torch.linalg.eigh(Sigma)
    r = y - mu
    z = torch.einsum("bij,bi->bj", V, r)
    return (z ** 2 / lam).sum(-1).clamp_min(1e-12), torch.log(lam).sum(-1), lam, r


def student_t_noise(rng: np.random.Generator, n: int, df: float = NOISE_DF) -> np.ndarray:
    """n draws [n, 6] of the isotropic multivariate Student-t with ``df`` degrees of freedom and
    unit scale, z·√(df/g), z ~ N(0, I₆), g ~ χ²_df: heavy-tailed, and equivariant (its law is
    invariant under every Q(R) ∈ O(6)); per-component variance df / (df − 2)."""
    z = rng.normal(size=(n, 6))
    return z * np.sqrt(df / rng.chisquare(df, size=(n, 1)))


def energy_score(samples: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Per item E||X − y|| − ½ E||X − X'|| from n draws [n, B, 6] (the second term over the
    n(n − 1) ordered pairs: unbiased)."""
    n = samples.shape[0]
    first = torch.linalg.norm(samples - y[None], dim=-1).mean(0)
    x = samples.transpose(0, 1)  # [B, n, 6]
    pair = torch.cdist(x, x).sum(dim=(1, 2)) / (n * (n - 1))
    return first - 0.5 * pair


def auroc(negative: np.ndarray, positive: np.ndarray) -> float:
    """P(score(OOD) > score(in-distribution)) with ties counted half (Mann-Whitney)."""
    from scipy.stats import rankdata

    ranks = rankdata(np.concatenate([negative, positive]))
    n0, n1 = len(negative), len(positive)
    return float((ranks[n0:].sum() - n1 * (n1 + 1) / 2) / (n0 * n1))


def aurc(errors: np.ndarray, uncertainty: np.ndarray) -> float:
    """Area under the risk-coverage curve: items accepted from the least uncertain; risk at
    coverage k/n = mean error of the k accepted; the area is the mean over k."""
    order = np.argsort(uncertainty, kind="stable")
    risk = np.cumsum(errors[order]) / np.arange(1, len(errors) + 1)
    return float(risk.mean())


def ence(sq_err: np.ndarray, variance: np.ndarray, bins: int = 10) -> float:
    """Expected normalized calibration error: 10 equal-count bins of the predicted RMV
    (sqrt of the mean variance per component), mean |RMV − RMSE| / RMV."""
    order = np.argsort(variance)
    total = 0.0
    for chunk in np.array_split(order, bins):
        rmv = math.sqrt(float(np.mean(variance[chunk])))
        rmse = math.sqrt(float(np.mean(sq_err[chunk])))
        total += abs(rmv - rmse) / rmv
    return total / bins


class TensorUQTask(Task):
    """Shared data handling and scoring; the two problems differ in their data."""

    family: ClassVar[str] = "tensoruq"
    paper: ClassVar[str] = "tensoruq2026"
    spaces: ClassVar[tuple[str, ...]] = ("km",)
    kind: ClassVar[str] = ""
    metrics: ClassVar[Mapping[str, MetricDeclaration]] = {
        "es": ("min", 0.0, None),
        "es_skill": ("max", None, 1.0),
        "mae": ("min", 0.0, None),
        "rmse": ("min", 0.0, None),
        "log_rmse": "min",
        "log_mae": "min",
        "eig_err": ("min", 0.0, None),
        "nll": "min",
        "gauss_nll": "min",
        "coverage_50": ("max", 0.0, 1.0),
        "coverage_90": ("max", 0.0, 1.0),
        "coverage_95": ("max", 0.0, 1.0),
        "coverage_error": ("min", 0.0, 1.0),
        "ence": ("min", 0.0, None),
        "equiv_mu_median": ("min", 0.0, None),
        "equiv_mu_max": ("min", 0.0, None),
        "equiv_sigma_median": ("min", 0.0, None),
        "equiv_sigma_max": ("min", 0.0, None),
        "ood_auroc_logdet": ("max", 0.0, 1.0),
        "ood_auroc_trace": ("max", 0.0, 1.0),
        "ood_auroc_lmax": ("max", 0.0, 1.0),
        "aurc_lmax": ("min", 0.0, None),
        "aurc_trace": ("min", 0.0, None),
        "spd_valid": ("max", 0.0, 1.0),
        "seconds_per_epoch": ("min", 0.0, None),
        # the same model with Σ -> sΣ, s fitted on the validation split (calibration.py)
        "cov_scale": ("min", 0.0, None),
        "es_cal": ("min", 0.0, None),
        "nll_cal": "min",
        "gauss_nll_cal": "min",
        "coverage_50_cal": ("max", 0.0, 1.0),
        "coverage_90_cal": ("max", 0.0, 1.0),
        "coverage_95_cal": ("max", 0.0, 1.0),
        "coverage_error_cal": ("min", 0.0, 1.0),
    }
    nondeterministic_metrics: ClassVar[frozenset[str]] = frozenset({"seconds_per_epoch"})

    def __init__(self, tier: str, n_train: int, n_val: int, n_test: int, n_ood: int, epochs: int,
                 batch_size: int, **kwargs: Any) -> None:
        super().__init__(tier=tier, n_train=n_train, n_val=n_val, n_test=n_test, n_ood=n_ood,
                         epochs=epochs, batch_size=batch_size, **kwargs)
        for name, value, low in (("n_train", n_train, 8), ("n_val", n_val, 4), ("n_test", n_test, 16),
                                 ("n_ood", n_ood, 0), ("epochs", epochs, 1), ("batch_size", batch_size, 1)):
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise ValueError(f"{self.id}: {name} must be an integer >= {low}, got {value!r}")
        self.n_train, self.n_val, self.n_test, self.n_ood = n_train, n_val, n_test, n_ood
        self.epochs, self.batch_size = epochs, batch_size
        self._batches: MeteredBatches | None = None
        self._train_targets: np.ndarray | None = None
        self._validation: Split | None = None

    # ---- data (subclasses)
    def draw(self, rng: np.random.Generator, n: int, ood: str | None = None) -> Split:
        raise NotImplementedError

    def ood_sets(self) -> tuple[str, ...]:
        raise NotImplementedError

    def problem_config(self) -> dict[str, Any]:
        return {"id": self.id, **{k: v for k, v in self.kwargs.items()}}

    def heldout_entry(self, seed: int) -> cache.Entry:
        """The test and OOD splits of ``seed`` (sealed: drawn from the salted eval stream)."""
        def build() -> dict[str, Split]:
            test = self.draw(np.random.default_rng(eval_seed_sequence(TEST_TAG, seed)), self.n_test)
            parts = []
            sets = self.ood_sets()
            sizes = [self.n_ood // len(sets) + (i < self.n_ood % len(sets)) for i in range(len(sets))]
            for i, (name, size) in enumerate(zip(sets, sizes)):
                if size:
                    rng = np.random.default_rng(eval_seed_sequence(OOD_TAG, seed, i))
                    split = self.draw(rng, size, ood=name)
                    split.tags = np.full(size, i)
                    parts.append(split)
            return {"test": test, "ood": parts}

        config = {"problem": self.problem_config(), "seed": int(seed)}
        code = (geometry.__file__, shapes.__file__, crystals.__file__, __file__)
        return cache.Entry(f"tensoruq/heldout/{self.kind}", config, build=build, code=code)

    def cache_entries(self, seeds: Sequence[int]) -> list[cache.Entry]:
        return [self.heldout_entry(s) for s in seeds]

    @property
    def budget(self) -> Budget:
        return Budget(epochs=self.epochs * MODELS_PER_TRIAL)

    def train_view(self, seed: int, budget: Budget) -> TensorUQView:
        check_training_seed(seed, self.id)
        data = self.draw(np.random.default_rng([TRAIN_TAG, seed]), self.n_train + self.n_val)
        idx = np.arange(len(data))
        train = Split(subset(data.inputs, idx[:self.n_train]), data.targets[:self.n_train])
        val = Split(subset(data.inputs, idx[self.n_train:]), data.targets[self.n_train:])
        view = TensorUQView(train, val, self.epochs, self.batch_size, budget, seed, self.kind, self.spaces)
        self._batches = view.batches
        self._train_targets = train.targets
        self._validation = val
        return view

    def validation_split(self, seed: int) -> Split:
        """The validation split the view of ``seed`` holds (drawn again when no view was made):
        what the covariance scale is fitted on; it shares no item with the test split."""
        if self._validation is None:
            data = self.draw(np.random.default_rng([TRAIN_TAG, seed]), self.n_train + self.n_val)
            idx = np.arange(self.n_train, len(data))
            self._validation = Split(subset(data.inputs, idx), data.targets[self.n_train:])
            if self._train_targets is None:
                self._train_targets = data.targets[:self.n_train]
        return self._validation

    def fitted_cov_scale(self, artifact: Any, seed: int) -> float:
        """The artifact's covariance scale s fitted on the validation split only
        (:func:`calibration.fit_cov_scale`, its own predictive family, its declared space)."""
        val = self.validation_split(seed)
        mu, Sigma, family, space = self._predict(artifact, val.inputs)
        Sigma, _ = project_spd(Sigma)
        y = torch.as_tensor(val.targets)
        y = to_log(y) if space == "log_km" else y
        q, logdet, _, _ = mahalanobis(mu, Sigma, y)
        return calibration.fit_cov_scale(q.numpy(), logdet.numpy(), family)

    # ---- scoring
    def _predict(self, artifact: Any, inputs: dict[str, np.ndarray]
                 ) -> tuple[torch.Tensor, torch.Tensor, str, str]:
        predict = getattr(artifact, "predict", None)
        if predict is None or not callable(predict):
            raise TypeError(f"{self.id} expects a model with predict(inputs) -> (mu, Sigma, family, space), "
                            f"got {type(artifact).__name__}")
        chunks = []
        n = len(inputs["volume"])
        for start in range(0, n, 512):
            part = subset(inputs, np.arange(start, min(n, start + 512)))
            chunks.append(read_prediction(predict(part), len(part["volume"]), self.id, self.spaces))
        family, space = chunks[0][2], chunks[0][3]
        if any(c[2] != family or c[3] != space for c in chunks):
            raise ValueError(f"{self.id}: predict changed its declared family or space between calls")
        return torch.cat([c[0] for c in chunks]), torch.cat([c[1] for c in chunks]), family, space

    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        started = self._batches.started if self._batches is not None else None
        elapsed = None if started is None else time.perf_counter() - started
        held = cache.get(self.heldout_entry(seed))
        test: Split = held["test"]
        y_phys = torch.as_tensor(test.targets)
        mu, Sigma_raw, family, space = self._predict(artifact, test.inputs)
        Sigma, valid = project_spd(Sigma_raw)
        y = to_log(y_phys) if space == "log_km" else y_phys  # the declared space

        # energy score (physical space: log-space draws are mapped through expm)
        gen = torch.Generator().manual_seed(int(eval_seed_sequence(SAMPLE_TAG, seed).generate_state(1)[0]))
        draws = geometry.sample(family, mu, Sigma, N_SAMPLES, gen)
        s = self.fitted_cov_scale(artifact, seed)
        draws_cal = mu[None] + math.sqrt(s) * (draws - mu[None])  # the same draws, Σ -> sΣ
        mu_phys = mu
        if space == "log_km":
            draws, draws_cal, mu_phys = to_physical(draws), to_physical(draws_cal), to_physical(mu)
        es = energy_score(draws, y_phys).numpy()
        es_cal = energy_score(draws_cal, y_phys).numpy()
        err = torch.linalg.norm(mu_phys - y_phys, dim=-1).numpy()
        eig = (torch.linalg.eigvalsh(geometry.from_km(mu_phys))
               - torch.linalg.eigvalsh(geometry.from_km(y_phys)))

        # likelihoods and coverage (declared space)
        q, logdet, lam, r = mahalanobis(mu, Sigma, y)
        logpdf = geometry.laplace_logpdf if family == "laplace" else geometry.gaussian_logpdf
        own = logpdf(q, logdet)
        coverage = {p: float((q <= geometry.mahalanobis_quantile(family, p)).double().mean())
                    for p in COVERAGE_LEVELS}
        q_cal, logdet_cal = q / s, logdet + 6 * math.log(s)
        coverage_cal = {p: float((q_cal <= geometry.mahalanobis_quantile(family, p)).double().mean())
                        for p in COVERAGE_LEVELS}

        # trivial reference for the skill: training mean and covariance (physical space)
        if self._train_targets is None:  # evaluated without a view of this Task: draw it again
            self._train_targets = self.draw(np.random.default_rng([TRAIN_TAG, seed]),
                                            self.n_train + self.n_val).targets[:self.n_train]
        ref = torch.as_tensor(self._train_targets)
        ref_cov = torch.cov(ref.T) + SPD_FLOOR * torch.eye(6, dtype=ref.dtype)
        ref_draws = geometry.sample("gaussian", ref.mean(0).expand_as(y_phys).contiguous(),
                                    ref_cov.expand(len(y_phys), 6, 6).contiguous(), N_SAMPLES, gen)
        es_trivial = float(energy_score(ref_draws, y_phys).mean())

        # risk-coverage and OOD detection (declared space: log|Σ| = tr S, tr Σ, λ_max Σ)
        scores_in = {"logdet": logdet.numpy(), "trace": Sigma.diagonal(dim1=-2, dim2=-1).sum(-1).numpy(),
                     "lmax": lam[:, -1].numpy()}
        sq = err ** 2
        metrics: dict[str, float] = {
            "es": float(es.mean()),
            "es_skill": 1.0 - float(es.mean()) / es_trivial,
            "mae": float(err.mean()),
            "rmse": float(math.sqrt(sq.mean())),
            "log_rmse": float(0.5 * math.log(max(float(sq.mean()), 1e-300))),
            "log_mae": float(math.log(max(float(err.mean()), 1e-300))),
            "eig_err": float(torch.linalg.norm(eig, dim=-1).mean()),
            "nll": float(-own.mean()),
            "gauss_nll": float(-geometry.gaussian_logpdf(q, logdet).mean()),
            **{f"coverage_{int(round(100 * p))}": c for p, c in coverage.items()},
            "coverage_error": float(np.mean([abs(c - p) for p, c in coverage.items()])),
            "ence": ence((r ** 2).mean(-1).numpy(), scores_in["trace"] / 6),
            "aurc_lmax": aurc(sq, scores_in["lmax"]),
            "aurc_trace": aurc(sq, scores_in["trace"]),
            "spd_valid": float(valid.double().mean()),
            "cov_scale": s,
            "es_cal": float(es_cal.mean()),
            "nll_cal": float(-logpdf(q_cal, logdet_cal).mean()),
            "gauss_nll_cal": float(-geometry.gaussian_logpdf(q_cal, logdet_cal).mean()),
            **{f"coverage_{int(round(100 * p))}_cal": c for p, c in coverage_cal.items()},
            "coverage_error_cal": float(np.mean([abs(c - p) for p, c in coverage_cal.items()])),
        }
        if held["ood"]:
            ood_scores: dict[str, list[float]] = {k: [] for k in scores_in}
            for part in held["ood"]:
                _, S_ood, _, _ = self._predict(artifact, part.inputs)
                S_ood, _ = project_spd(S_ood)
                lam_o = torch.linalg.eigvalsh(S_ood)
                got = {"logdet": torch.log(lam_o).sum(-1).numpy(), "lmax": lam_o[:, -1].numpy(),
                       "trace": S_ood.diagonal(dim1=-2, dim2=-1).sum(-1).numpy()}
                for k in scores_in:
                    ood_scores[k].append(auroc(scores_in[k], got[k]))
            for k, v in ood_scores.items():
                metrics[f"ood_auroc_{k}"] = float(np.mean(v))
        metrics.update(self.equivariance(artifact, test, seed))
        if self.kind == "dielectric":
            metrics["mae_phys"] = metrics["mae"]
            metrics["mae_log"] = float(torch.linalg.norm(to_log(mu_phys) - to_log(y_phys), dim=-1).mean())
        drawn = self._batches.epochs_drawn if self._batches is not None else 0
        if elapsed is not None and drawn:
            metrics["seconds_per_epoch"] = elapsed / drawn
        units = [{"instance": i, "es": float(es[i]), "es_cal": float(es_cal[i]), "sq_err": float(sq[i])}
                 for i in range(len(es))]
        return EvalResult(metrics=metrics, units=units)

    def equivariance(self, artifact: Any, test: Split, seed: int) -> dict[str, float]:
        """‖f(g·x) − Q(g) f(x) [Q(g)ᵀ]‖ / ‖f(x)‖ for μ and Σ over N_GROUP random elements of
        O(3) (every second one a reflection) x N_EQUIV test inputs: median and max."""
        rng = np.random.default_rng(eval_seed_sequence(EQUIV_TAG, seed))
        idx = np.sort(rng.choice(len(test), size=min(N_EQUIV, len(test)), replace=False))
        base = subset(test.inputs, idx)
        mu0, S0, _, _ = self._predict(artifact, base)
        rotations = []
        for g in range(N_GROUP):
            R = shapes.random_rotation(rng)
            rotations.append(-R if g % 2 else R)
        stacked = {k: np.concatenate([rotate_inputs(base, R)[k] for R in rotations]) for k in base}
        mu_g, S_g, _, _ = self._predict(artifact, stacked)
        Q = geometry.km_rotation(torch.as_tensor(np.stack(rotations)))  # [G, 6, 6]
        Q = Q.repeat_interleave(len(idx), dim=0)
        mu_ref = torch.einsum("nij,nj->ni", Q, mu0.repeat(N_GROUP, 1))
        S_ref = Q @ S0.repeat(N_GROUP, 1, 1) @ Q.transpose(-1, -2)
        e_mu = (torch.linalg.norm(mu_g - mu_ref, dim=-1)
                / torch.linalg.norm(mu0, dim=-1).repeat(N_GROUP).clamp_min(1e-30)).numpy()
        e_S = (torch.linalg.norm(S_g - S_ref, dim=(-2, -1))
               / torch.linalg.norm(S0, dim=(-2, -1)).repeat(N_GROUP).clamp_min(1e-30)).numpy()
        return {"equiv_mu_median": float(np.median(e_mu)), "equiv_mu_max": float(e_mu.max()),
                "equiv_sigma_median": float(np.median(e_S)), "equiv_sigma_max": float(e_S.max())}


class TensorUQInertiaTask(TensorUQTask):
    """
    ## Description
    Predict the inertia tensor of a solid body, with a full 6 x 6 covariance of its Kelvin-Mandel
    (KM) coordinates, from a noisy point cloud of its surface. The bodies are generated (9
    families: box, ellipsoid, cylinder, cone, torus, L-shape, chair, table, cross; aspect ratios
    0.2-1, longest extent 1, uniformly random rotation). The target is the inertia per unit mass
    about the centre of mass, I = tr(M) I₃ − M (M the second moment), of the *solid* body with a
    hidden point inclusion (mass fraction w = 0.05·Pareto(2), capped at 0.5, at a uniform interior
    point, present with probability 1/2): the surface-to-solid gap depends on the shape, and the
    inclusion adds heavy-tailed, anisotropic (rank-one) noise. With ``target_noise`` σ > 0 every
    target (train, validation, test and OOD alike) also gets additive isotropic Student-t noise,
    σ·z·√(3/g) in KM coordinates (z ~ N(0, I₆), g ~ χ²₃; equivariant in law): heavy-tailed
    residuals for the robustness claim. A rotation R acts on the target as v ↦ Q(R) v. The
    problem scores mean and covariance on held-out clouds, rotated copies and three OOD sets.

    ## Data
    ``train_view(seed)`` is a :class:`TensorUQView`: ``train`` (``n_train``) and ``validation``
    (``n_val``) splits of the 7 in-distribution families; inputs ``{"points": [n, M, 3],
    "mask", "species" (zeros), "volume" (ones)}``: ``n_points`` surface points (area-weighted) plus
    Gaussian jitter σ = 0.01, and with probability ``p_out`` 1-3 outlier points at distance 2-4
    from the centroid; the cloud is not centred (translation is the agent's to remove).
    ``batches.epoch()`` spends one of ``epochs x 5`` epochs (up to 5 models).

    ## Artifact
    A model with ``predict(inputs) -> (mu [B, 6], Sigma [B, 6, 6], family, space)``, family
    ``gaussian`` | ``laplace`` (the predictive law, Cov = Σ for both), space ``km``.

    ## Metrics
    ``es`` (primary: energy score E||X − y|| − ½E||X − X'|| from 100 draws of the declared law,
    drawn by the problem), ``es_skill`` (1 − ES / ES of the training mean and covariance),
    ``mae`` / ``rmse`` / ``log_mae`` / ``log_rmse`` of μ (KM Euclidean = Frobenius), ``eig_err`` (sorted
    eigenvalues), ``nll`` (own family), ``gauss_nll``, ``coverage_{50,90,95}`` of the Mahalanobis
    region (χ²₆ or W·χ²₆ quantiles) and their mean absolute error ``coverage_error``, ``ence``,
    ``equiv_{mu,sigma}_{median,max}`` (relative error under 32 random O(3) elements, half of them
    reflections, x 64 test inputs), ``ood_auroc_{logdet,trace,lmax}`` (test vs the OOD sets:
    families torus and cross, 2x scale, 3x jitter; mean over the sets), ``aurc_{lmax,trace}``
    (risk-coverage of the squared error), ``spd_valid`` (share of raw Σ that are SPD; others are
    scored with eigenvalues clipped at 1e-6), ``seconds_per_epoch`` (nondeterministic).
    Calibrated: ``cov_scale`` s, fitted by the problem on the validation split (the scale
    minimising the validation NLL of the model's own family, ``calibration.py``), and ``es_cal``,
    ``nll_cal``, ``gauss_nll_cal``, ``coverage_{50,90,95}_cal``, ``coverage_error_cal`` of the
    same predictions with Σ -> sΣ (the energy score on the same draws, rescaled about μ). Units
    per test item: ``es``, ``es_cal``, ``sq_err``.

    ## Episode End
    One artifact per trial.

    ## Arguments
    ``n_train``, ``n_val``, ``n_test``, ``n_ood`` (sizes), ``n_points`` (surface points per cloud),
    ``p_out`` (outlier probability), ``target_noise`` (scale σ of the Student-t target noise,
    default 0: none; its draws come from a stream of their own, so the clouds and clean targets
    of a seed are the same at every σ), ``epochs`` (per model), ``batch_size``.

    ## Tiers
    smoke: 256/64/64 clouds + 48 OOD, 32 points, 3 epochs of batch 32. standard: 1,000/200/250 +
    240 OOD, 32 points, 10 epochs of batch 64. full: 8k/1k/1k + 1k OOD, 64 points, 20 epochs of
    batch 32 (the paper's ModelNet40 is not shipped; the per-edge message-passing backbone is the
    full tier's).

    ## Reference
    E(3)-equivariant UQ for symmetric rank-2 tensors (ICML 2026): ModelNet40 inertia tensors. The
    generated solids, the surface-to-solid target, the inclusion noise and the OOD sets are
    reconstructed here (the authors use the point cloud's own inertia).

    ## Version History
    - v0: initial release. Later additions that change no existing metric or default: the
      calibrated metrics (``*_cal``, ``cov_scale``), ``log_mae`` and the ``target_noise`` argument.
    """

    id: ClassVar[str] = "papergym/TensorUQInertia-v0"
    kind: ClassVar[str] = "inertia"

    def __init__(self, tier: str = "smoke", n_train: int = 256, n_val: int = 64, n_test: int = 64,
                 n_ood: int = 48, n_points: int = 32, p_out: float = 0.05, epochs: int = 3,
                 batch_size: int = 32, target_noise: float = 0.0) -> None:
        if not isinstance(n_points, int) or n_points < 4:
            raise ValueError(f"{self.id}: n_points must be an integer >= 4, got {n_points!r}")
        if not isinstance(p_out, (int, float)) or not 0 <= p_out <= 1:
            raise ValueError(f"{self.id}: p_out must be in [0, 1], got {p_out!r}")
        if not isinstance(target_noise, (int, float)) or not 0 <= target_noise <= 1:
            raise ValueError(f"{self.id}: target_noise must be in [0, 1] (the Student-t scale per KM "
                             f"component), got {target_noise!r}")
        super().__init__(tier, n_train, n_val, n_test, n_ood, epochs, batch_size,
                         n_points=n_points, p_out=float(p_out), target_noise=float(target_noise))
        self.n_points, self.p_out, self.target_noise = n_points, float(p_out), float(target_noise)

    def ood_sets(self) -> tuple[str, ...]:
        return ("family", "scale", "jitter")

    def draw(self, rng: np.random.Generator, n: int, ood: str | None = None) -> Split:
        families = shapes.OOD_FAMILIES if ood == "family" else shapes.IN_FAMILIES
        scale = 2.0 if ood == "scale" else 1.0
        jitter = 0.03 if ood == "jitter" else 0.01
        # outliers from their own stream, so one seed's clouds are the same at every p_out
        out_rng = np.random.default_rng(rng.integers(2**63))
        clouds, targets = [], []
        for _ in range(n):
            solid = shapes.make_solid(families[rng.integers(len(families))], rng)
            R = shapes.random_rotation(rng)
            pts = solid.surface(rng, self.n_points)
            pts = pts + rng.normal(scale=jitter, size=pts.shape)
            weight = min(0.05 * rng.pareto(2.0), 0.5) if rng.uniform() < 0.5 else 0.0
            M = shapes.inclusion_moment(solid, weight, rng)
            offset = rng.normal(scale=0.5, size=3)
            if out_rng.uniform() < self.p_out:
                k = int(out_rng.integers(1, 4))
                d = out_rng.normal(size=(k, 3))
                d *= out_rng.uniform(2, 4, size=(k, 1)) / np.linalg.norm(d, axis=1, keepdims=True)
                pts = np.concatenate([pts, d + pts.mean(0)])
            clouds.append(scale * pts @ R.T + offset)
            inertia = np.trace(M) * np.eye(3) - M  # per unit mass, divided by s² (s = extent)
            targets.append(R @ inertia @ R.T)
        y = geometry.km(torch.as_tensor(np.stack(targets))).numpy()
        if self.target_noise:
            y = y + self.target_noise * student_t_noise(np.random.Generator(rng.bit_generator.jumped()), n)
        return Split(pack(clouds), y)


class TensorUQDielectricTask(TensorUQTask):
    """
    ## Description
    Predict the dielectric tensor ε of a toy crystal, with a full 6 x 6 covariance, from its
    periodic bonds (stand-in for Materials Project dielectric tensors, which cannot be shipped).
    A random Bravais lattice (cubic, tetragonal, orthorhombic, hexagonal, trigonal; lattice
    constants 3-6 Å) with a 1-4 atom basis of 4 toy species; bonds are the periodic neighbour
    pairs within 1.2 x the nearest-neighbour distance; ε = I + (4π/V) Σ_bonds (r₀/r)³[α_⊥ I +
    (α_∥ − α_⊥) b̂b̂ᵀ] (``crystals.py``). Observation noise is equivariant and log-normal,
    ε_obs = expm(logm ε + δ), δ = σ₀ z₀ I/√3 + σ₁ t A + σ₂ D (z₀ Gaussian, t Student-t with 3
    degrees of freedom, A the unit deviator of logm ε, D a Gaussian 2e deviator), with scales
    growing with the number of atoms and the anisotropy (heteroscedastic, heavy-tailed,
    structure-aligned). Target: KM(ε_obs).

    ## Data
    ``train_view(seed)``: ``train`` / ``validation`` splits; inputs ``{"points": bond vectors
    [n, M, 3] (Å), "mask", "species": species-pair index of each bond (0-9), "volume": cell
    volume (Å³)}``. ``batches.epoch()`` spends one of ``epochs x 5`` epochs.

    ## Artifact
    A model with ``predict(inputs) -> (mu, Sigma, family, space)``; space ``km`` (μ, Σ describe
    KM(ε)) or ``log_km`` (they describe KM(logm ε), as in the paper's log-Euclidean pipeline: the
    problem maps every draw and μ through v ↦ KM(expm(T(v))) before the energy score and the
    errors; coverage, NLL and OOD scores stay in the declared space).

    ## Metrics
    As ``TensorUQInertia-v0``, calibrated metrics included (OOD sets: the monoclinic lattice and
    5-6 atom bases; Σ -> sΣ in the declared space), plus ``mae_phys`` (= ``mae``, physical
    KM(ε)) and ``mae_log`` (KM(logm ε)).

    ## Episode End
    One artifact per trial.

    ## Arguments
    ``n_train``, ``n_val``, ``n_test``, ``n_ood``, ``noise`` (scale of δ), ``epochs``, ``batch_size``.

    ## Tiers
    smoke: 256/64/64 + 48 OOD, 3 epochs of batch 32. standard: 1,000/200/250 + 250 OOD, 10 epochs
    of batch 64. full: 4k/500/500 + 500 OOD, 20 epochs (the real Materials Project set is not
    shipped).

    ## Reference
    E(3)-equivariant UQ for symmetric rank-2 tensors (ICML 2026): Materials Project dielectric
    tensors. The toy crystals, the polarizability model and the noise are reconstructed here.

    ## Version History
    - v0: initial release. Later addition that changes no existing metric or default: the
      calibrated metrics (``*_cal``, ``cov_scale``) and ``log_mae``.
    """

    id: ClassVar[str] = "papergym/TensorUQDielectric-v0"
    kind: ClassVar[str] = "dielectric"
    metrics: ClassVar[Mapping[str, MetricDeclaration]] = {
        **TensorUQTask.metrics, "mae_phys": ("min", 0.0, None), "mae_log": ("min", 0.0, None)}
    spaces: ClassVar[tuple[str, ...]] = ("km", "log_km")

    def __init__(self, tier: str = "smoke", n_train: int = 256, n_val: int = 64, n_test: int = 64,
                 n_ood: int = 48, noise: float = 1.0, epochs: int = 3, batch_size: int = 32) -> None:
        if not isinstance(noise, (int, float)) or not 0 <= noise <= 10:
            raise ValueError(f"{self.id}: noise must be in [0, 10], got {noise!r}")
        super().__init__(tier, n_train, n_val, n_test, n_ood, epochs, batch_size, noise=float(noise))
        self.noise = float(noise)

    def ood_sets(self) -> tuple[str, ...]:
        return ("lattice", "basis")

    def draw(self, rng: np.random.Generator, n: int, ood: str | None = None) -> Split:
        lattices = tuple(k for k in crystals.LATTICES if k != crystals.OOD_LATTICE)
        if ood == "lattice":
            lattices = (crystals.OOD_LATTICE,)
        atoms = (5, 6) if ood == "basis" else (1, 4)
        bonds, pairs, volumes, targets = [], [], [], []
        for _ in range(n):
            c = crystals.make_crystal(rng, lattices, atoms)
            R = shapes.random_rotation(rng)
            eps = crystals.dielectric(c.bonds, c.pairs, c.volume)
            log_eps = geometry.logm_spd(torch.as_tensor(eps)).numpy()
            dev = log_eps - np.trace(log_eps) / 3 * np.eye(3)
            aniso = float(np.linalg.norm(dev))
            unit_dev = dev / aniso if aniso > 1e-9 else np.zeros((3, 3))
            s0 = 0.02 * self.noise * (1 + 0.25 * len(c.species))
            s1 = 0.05 * self.noise * (1 + 4 * aniso)
            s2 = 0.015 * self.noise * (1 + 0.25 * len(c.species))
            D = rng.normal(size=(3, 3))
            D = 0.5 * (D + D.T)
            D = (D - np.trace(D) / 3 * np.eye(3)) / math.sqrt(2.5)  # unit-variance 2e deviator
            delta = (s0 * rng.normal() * np.eye(3) / math.sqrt(3)
                     + s1 * rng.standard_t(3) / math.sqrt(3) * unit_dev + s2 * D)
            eps_obs = geometry.expm_sym(torch.as_tensor(log_eps + delta)).numpy()
            bonds.append(c.bonds @ R.T)
            pairs.append(c.pairs)
            volumes.append(c.volume)
            targets.append(R @ eps_obs @ R.T)
        y = geometry.km(torch.as_tensor(np.stack(targets))).numpy()
        return Split(pack(bonds, pairs, volumes), y)
