"""``papergym/PretextImpactDigits-v0`` and ``papergym/PretextImpactSynth-v0``: estimate, for
every pretext of a pool, the target accuracy semi-supervised training with it would reach,
without doing that training; the problem scores the estimates against its ground truth."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import torch

from papergym import cache
from papergym.envs.pretext import ground_truth, metrics
from papergym.envs.pretext.data import N_UNLABELLED, SYNTH_DATASETS
from papergym.envs.pretext.ground_truth import SUPERVISED, Setting
from papergym.envs.pretext.pretexts import Objective, TrainConfig, Transforms, accuracy
from papergym.envs.pretext.pretexts import train as train_model
from papergym.problem import Budget, EvalResult, MetricDeclaration, Privileges, Task

CAL_TAG, SUBSET_TAG, PARTNER_TAG, ORACLE_TAG = 81, 82, 83, 84
HELPS_MARGIN = 0.01  # a pretext "helps" when its actual accuracy beats supervised by > 1 point
HARM_MARGIN = 0.01  # and "hurts" when it falls below supervised by > 1 point (the mirror image)
CATASTROPHE_MARGIN = 0.2  # "catastrophic": more than 20 points below supervised (a broken target)


def calibration_ids(setting: Setting, seed: int) -> tuple[str, ...]:
    """The C calibration pretexts of a seed (the same for every agent)."""
    ids = [p.id for p in setting.pool_members()]
    rng = np.random.default_rng([CAL_TAG, int(seed)])
    return tuple(sorted(rng.choice(ids, size=setting.calibration, replace=False).tolist()))


def step_budget(setting: Setting, pretext_mode: str, n_unlabelled: int) -> int:
    """Optimizer steps an estimator may spend on one pretext: budget_fraction of that pretext's
    ground-truth run (pretext steps, plus the fine-tuning steps of a pretrain pretext)."""
    gt = setting.train.steps(n_unlabelled) + (
        setting.train.finetune_steps if pretext_mode == "pretrain" else 0
    )
    return max(1, int(setting.budget_fraction * gt))


class PretextView:
    """What an estimator sees: the labelled and unlabelled sets, the pool, the target model's
    spec, the budget and the ground truth of the calibration pretexts; never the test split,
    never another pretext's ground truth.

    Attributes: ``X_labelled``, ``y_labelled``, ``X_unlabelled`` (copies), ``classes``,
    ``image_side`` (8 for digits, 0 for vectors), ``pool`` (public specs: id, family, params,
    weight, mode, assumption, classification), ``model`` (hidden sizes, lr, batch size),
    ``steps_per_pretext`` ({id: steps}), ``subset_size`` (the metered runs' unlabelled subset),
    ``calibration`` ({id: actual accuracy} of the C calibration pretexts).

    ``run_pretext(pretext_id, steps, lr=None, seed=0)`` trains a fresh target model with that
    pretext's objective for ``steps`` optimizer steps on the labelled set plus the fixed
    unlabelled subset (no fine-tuning), charging ``steps`` to that pretext's budget, and returns
    plain data: ``pretext_loss_init`` / ``pretext_loss_final`` (the pretext loss on the whole
    subset before and after, same random draws), ``pretext_acc_init`` / ``_final`` (rotation,
    jigsaw, contrastive), ``pretext_loss_reference`` (joint pretexts: the pretext loss of the
    labels-only model trained with the same steps, lr and seed, metered once per such triple on
    ``steps_supervised``; pretrain pretexts: the loss at initialization), ``losses`` (per step),
    ``features`` (the h2 representation of the labelled set after the run), ``features_init``
    (at initialization).
    ``partners(pretext_id, draws=4, seed=0)``: the partner inputs the pretext pairs with each
    labelled point (a transformed copy, or an unlabelled point from its kNN graph, cluster or
    at random), shape (draws, n_labelled, d); free (no training).
    ``oracle_accuracy(pretext_id)`` (reference agents only): one full training run, scored on
    the unlabelled set's true labels.
    """

    def __init__(
        self,
        setting: Setting,
        seed: int,
        budget: Budget,
        calibration: Mapping[str, float],
        privileges: Privileges | None = None,
    ) -> None:
        full = setting.split(seed)
        split = dataclasses.replace(full, X_t=full.X_t[:0], y_t=full.y_t[:0])  # the view holds no test item
        self.seed, self.budget = int(seed), budget
        self.X_labelled, self.y_labelled = np.array(split.X_l), np.array(split.y_l)
        self.X_unlabelled = np.array(split.X_u)
        self.classes, self.image_side, self.dataset = split.classes, split.image_side, split.name
        self._members = {p.id: p for p in setting.pool_members()}
        self.pool = [p.public() for p in self._members.values()]
        self.model = {
            "hidden": list(setting.train.hidden),
            "lr": setting.train.lr,
            "batch_size": setting.train.batch_size,
            "gt_steps": setting.train.steps(len(split.X_u)),
            "finetune_steps": setting.train.finetune_steps,
        }
        self.steps_per_pretext = {
            pid: step_budget(setting, p.mode, len(split.X_u)) for pid, p in self._members.items()
        }
        rng = np.random.default_rng([SUBSET_TAG, int(seed)])
        self._subset = np.sort(
            rng.choice(
                len(split.X_u), size=max(1, int(setting.subset_fraction * len(split.X_u))), replace=False
            )
        )
        self.subset_size = len(self._subset)
        self.calibration = {k: float(v) for k, v in calibration.items()}
        self._split, self._setting = split, setting
        self._privileges = privileges or Privileges()
        self._transforms = Transforms(split)
        self._objectives: dict[str, Objective] = {}
        self._reference_models: dict[tuple, Any] = {}
        self.cpu_s = 0.0  # problem-side CPU of the metered runs

    def _pretext(self, pretext_id: str):
        if pretext_id not in self._members:
            raise KeyError(f"unknown pretext {pretext_id!r}; the pool has {sorted(self._members)}")
        return self._members[pretext_id]

    def _objective(self, pretext_id: str) -> Objective:
        if pretext_id not in self._objectives:
            self._objectives[pretext_id] = Objective(
                self._pretext(pretext_id), self._split, self._transforms, self.seed
            )
        return self._objectives[pretext_id]

    def run_pretext(
        self, pretext_id: str, steps: int, lr: float | None = None, seed: int = 0
    ) -> dict[str, Any]:
        p = self._pretext(pretext_id)
        if not isinstance(steps, int) or isinstance(steps, bool) or steps < 1:
            raise ValueError(f"steps must be a positive integer, got {steps!r}")
        if lr is not None and not (isinstance(lr, (int, float)) and 0 < float(lr) <= 1.0):
            raise ValueError(f"lr must be in (0, 1], got {lr!r}")
        self.budget.spend(f"steps_{pretext_id}", steps)
        started = time.process_time()
        objective = self._objective(pretext_id)
        run_seed = int(
            np.random.SeedSequence([SUBSET_TAG, self.seed, int(seed)]).generate_state(1)[0] % 2**31
        )
        model0, _ = train_model(
            self._split, p, objective, self._setting.train, run_seed, steps=0, finetune=False
        )
        init = self._probe(model0, objective)
        model, trace = train_model(
            self._split,
            p,
            objective,
            self._setting.train,
            run_seed,
            steps=steps,
            rows=self._subset,
            lr=lr,
            finetune=False,
        )
        final = self._probe(model, objective)
        if (
            p.mode == "joint"
        ):  # l_p of the labels-only model of the same run: what ignoring the pretext leaves
            reference = self._probe(self._supervised(steps, lr, run_seed), objective)["loss"]
        else:
            reference = init["loss"]
        self.cpu_s += time.process_time() - started
        return {
            "pretext_loss_init": init["loss"],
            "pretext_loss_final": final["loss"],
            "pretext_loss_reference": reference,
            "pretext_acc_init": init["acc"],
            "pretext_acc_final": final["acc"],
            "losses": [float(v) for v in trace["pretext_loss"]],
            "features": final["features"],
            "features_init": init["features"],
            "steps": steps,
        }

    def _supervised(self, steps: int, lr: float | None, run_seed: int):
        """The labels-only run of (steps, lr, seed), metered once on ``steps_supervised``."""
        key = (steps, lr, run_seed)
        if key not in self._reference_models:
            self.budget.spend("steps_supervised", steps)
            self._reference_models[key], _ = train_model(
                self._split, None, None, self._setting.train, run_seed, steps=steps, rows=self._subset, lr=lr
            )
        return self._reference_models[key]

    def _probe(self, model, objective: Objective) -> dict[str, Any]:
        gen = torch.Generator().manual_seed(self.seed)
        with torch.no_grad():
            loss, acc = objective.loss(model, torch.tensor(self._subset), gen)
            features = (
                model.body(torch.tensor(self.X_labelled, dtype=torch.float32)).numpy().astype(np.float64)
            )
        return {"loss": float(loss), "acc": acc, "features": features}

    def partners(self, pretext_id: str, draws: int = 4, seed: int = 0) -> np.ndarray:
        p = self._pretext(pretext_id)
        if not isinstance(draws, int) or not 1 <= draws <= 32:
            raise ValueError(f"draws must be an integer in [1, 32], got {draws!r}")
        if p.assumption not in ("invariance", "pair"):
            raise ValueError(f"pretext {pretext_id!r} makes a {p.assumption!r} assumption: no partners")
        rng = np.random.default_rng([PARTNER_TAG, self.seed, int(seed)])
        gen = torch.Generator().manual_seed(int(rng.integers(2**31)))
        x = torch.tensor(self.X_labelled, dtype=torch.float32)
        out = []
        for _ in range(draws):
            if p.assumption == "invariance":
                views = p.params["views"]
                name = views[int(rng.integers(len(views)))]
                out.append(self._transforms.apply(name, x, gen).numpy().astype(np.float64))
            else:
                idx = self._objective(pretext_id).structure.for_points(self.X_labelled, rng)
                out.append(self.X_unlabelled[idx])
        return np.stack(out)

    def oracle_accuracy(self, pretext_id: str) -> float:
        """Reference agents only: a full ground-truth-protocol run of ``pretext_id`` (or
        ``"supervised"``) with a training seed of its own, scored on the unlabelled set's true
        labels (the problem's; never the test split). Unmetered."""
        if not self._privileges.grant(True):
            raise PermissionError("oracle_accuracy (full training, true labels) is for reference agents")
        p = None if pretext_id == SUPERVISED else self._pretext(pretext_id)
        objective = self._objective(pretext_id) if p is not None else None
        run_seed = int(np.random.SeedSequence([ORACLE_TAG, self.seed]).generate_state(1)[0] % 2**31)
        model, _ = train_model(self._split, p, objective, self._setting.train, run_seed)
        return accuracy(model, self._split.X_u, self._split.y_u)

    def __repr__(self) -> str:
        return (
            f"PretextView({self.dataset}, pool={len(self.pool)}, n_l={len(self.y_labelled)}, "
            f"n_u={len(self.X_unlabelled)}, calibration={len(self.calibration)})"
        )


class PretextImpactTask(Task):
    """Shared machinery of the two problems (subclasses fix the data)."""

    family: ClassVar[str] = "pretext"
    paper: ClassVar[str] = "jia2026pretext"
    metrics: ClassVar[Mapping[str, MetricDeclaration]] = {
        "spearman": ("max", -1.0, 1.0),
        "spearman_plausible": ("max", -1.0, 1.0),
        "kendall": ("max", -1.0, 1.0),
        "pearson": ("max", -1.0, 1.0),
        "regret": ("min", 0.0, 1.0),
        "regret_norm": ("min", 0.0, None),
        "ndcg5": ("max", 0.0, 1.0),
        "auroc_helps": ("max", 0.0, 1.0),
        "unreliable_caught": ("max", 0.0, 1.0),
        "harm_balanced": ("max", 0.0, 1.0),
        "harm_caught": ("max", 0.0, 1.0),
        "spearman_no_catastrophic": ("max", -1.0, 1.0),
        "mae": ("min", 0.0, None),
        "compute_ratio": ("min", 0.0, None),
        "gt_agreement": ("max", -1.0, 1.0),
        "acc_supervised": ("max", 0.0, 1.0),
        "acc_all_labels": ("max", 0.0, 1.0),
        "best_gain": ("max", -1.0, 1.0),
    }
    datasets: ClassVar[tuple[str, ...]] = ()

    def __init__(
        self,
        tier: str = "smoke",
        dataset: str = "",
        pool: str = "smoke",
        calibration: int = 2,
        gt_seeds: int = 1,
        epochs: int = 10,
        batch_size: int = 128,
        hidden: Sequence[int] = (256, 128),
        finetune_steps: int = 100,
        budget_fraction: float = 0.05,
        subset_fraction: float = 0.2,
    ) -> None:
        dataset = dataset or self.datasets[0]
        super().__init__(
            tier=tier,
            dataset=dataset,
            pool=pool,
            calibration=calibration,
            gt_seeds=gt_seeds,
            epochs=epochs,
            batch_size=batch_size,
            hidden=list(hidden),
            finetune_steps=finetune_steps,
            budget_fraction=budget_fraction,
            subset_fraction=subset_fraction,
        )
        if dataset not in self.datasets:
            raise ValueError(f"{self.id}: dataset must be one of {self.datasets}, got {dataset!r}")
        for name, value, low in (
            ("calibration", calibration, 0),
            ("gt_seeds", gt_seeds, 1),
            ("epochs", epochs, 1),
            ("batch_size", batch_size, 1),
            ("finetune_steps", finetune_steps, 1),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or value < low:
                raise ValueError(f"{self.id}: {name} must be an integer >= {low}, got {value!r}")
        if len(hidden) != 2 or not all(isinstance(h, int) and h >= 2 for h in hidden):
            raise ValueError(f"{self.id}: hidden must be two integers >= 2, got {hidden!r}")
        for name, value in (("budget_fraction", budget_fraction), ("subset_fraction", subset_fraction)):
            if not 0 < float(value) <= 1:
                raise ValueError(f"{self.id}: {name} must be in (0, 1], got {value!r}")
        cfg = TrainConfig(
            hidden=(int(hidden[0]), int(hidden[1])),
            epochs=epochs,
            batch_size=batch_size,
            finetune_steps=finetune_steps,
        )
        self.setting = Setting(
            dataset, pool, calibration, gt_seeds, cfg, float(budget_fraction), float(subset_fraction)
        )
        members = self.setting.pool_members()
        if calibration > len(members) - 3:
            raise ValueError(
                f"{self.id}: calibration must leave >= 3 of the {len(members)} pretexts to score"
            )
        self._view: PretextView | None = None

    @property
    def budget(self) -> Budget:
        n_u = N_UNLABELLED
        limits = {
            f"steps_{p.id}": step_budget(self.setting, p.mode, n_u) for p in self.setting.pool_members()
        }
        # the labels-only reference runs of joint pretexts: one pretext's share per distinct (steps, lr, seed)
        limits["steps_supervised"] = 4 * step_budget(self.setting, "joint", n_u)
        return Budget(**limits)

    def cache_entries(self, seeds: Sequence[int]) -> list[cache.Entry]:
        return ground_truth.entries(self.setting, seeds)

    def train_view(self, seed: int, budget: Budget) -> PretextView:
        cal = calibration_ids(self.setting, seed)
        table = ground_truth.table(self.setting, seed)
        self._view = PretextView(
            self.setting, seed, budget, {pid: table[pid]["mean"] for pid in cal}, self.privileges
        )
        return self._view

    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        members = self.setting.pool_members()
        if not isinstance(artifact, Mapping):
            raise TypeError(
                f"{self.id} expects a dict {{pretext_id: estimate, 'supervised': estimate}}, "
                f"got {type(artifact).__name__}"
            )
        needed = {p.id for p in members} | {SUPERVISED}
        missing, extra = needed - set(artifact), set(artifact) - needed
        if missing or extra:
            raise ValueError(
                f"{self.id}: estimates missing for {sorted(missing)}; unknown keys {sorted(extra)}"
            )
        est = {}
        for key in needed:
            value = artifact[key]
            if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)):
                raise TypeError(
                    f"{self.id}: the estimate for {key!r} must be a number, got {type(value).__name__}"
                )
            if not np.isfinite(float(value)):
                raise ValueError(f"{self.id}: the estimate for {key!r} is not finite")
            est[key] = float(value)
        table = ground_truth.table(self.setting, seed)
        cal = set(calibration_ids(self.setting, seed))
        scored = [p for p in members if p.id not in cal]
        e = np.array([est[p.id] for p in scored])
        a = np.array([table[p.id]["mean"] for p in scored])
        sup = table[SUPERVISED]["mean"]
        plausible = np.array([p.design == "reliable" for p in scored])
        unreliable = np.array([p.design == "unreliable" for p in scored])
        r, r_norm = metrics.regret(e, a)
        harm_balanced, harm_caught = metrics.harm_detection(e, est[SUPERVISED], a, sup, HARM_MARGIN)
        ordinary = a >= sup - CATASTROPHE_MARGIN
        out = {
            "spearman": metrics.spearman(e, a),
            "spearman_plausible": metrics.spearman(e[plausible], a[plausible])
            if plausible.sum() >= 3
            else 0.0,
            "spearman_no_catastrophic": metrics.spearman(e[ordinary], a[ordinary])
            if ordinary.sum() >= 3
            else 0.0,
            "kendall": metrics.kendall(e, a),
            "pearson": metrics.pearson(e, a),
            "regret": r,
            "regret_norm": r_norm,
            "ndcg5": metrics.ndcg(e, np.maximum(0.0, a - sup), k=5),
            "auroc_helps": metrics.auroc(e - est[SUPERVISED], a > sup + HELPS_MARGIN),
            "harm_balanced": harm_balanced,
            "harm_caught": harm_caught,
            "mae": float(np.mean(np.abs(e - a))),
            "acc_supervised": sup,
            "acc_all_labels": table[ground_truth.ALL_LABELS]["mean"],
            "best_gain": float(a.max() - sup),
        }
        if unreliable.any():
            out["unreliable_caught"] = float(np.mean(e[unreliable] < est[SUPERVISED]))
        if self.setting.gt_seeds >= 2:
            per_seed = np.array([table[p.id]["acc"] for p in scored])
            out["gt_agreement"] = metrics.spearman(per_seed[:, 0], per_seed[:, 1])
        view = self._view
        if view is not None and view.seed == seed:
            gt_cpu = sum(table[p.id]["cpu_s"] for p in members)
            out["compute_ratio"] = float(view.cpu_s / gt_cpu) if gt_cpu > 0 else 0.0
        units = [
            {
                "instance": p.id,
                "design": p.design,
                "estimate": est[p.id],
                "actual": float(table[p.id]["mean"]),
            }
            for p in scored
        ]
        return EvalResult(metrics=out, units=units)


_DOC_TAIL = """
    ## Metrics
    Over the P - C scored pretexts (the calibration ones left out): ``spearman`` (primary)
    between estimates and actual accuracies, ``spearman_plausible`` (only pretexts designed
    reliable, so that a few terrible pretexts cannot inflate rho), ``spearman_no_catastrophic``
    (without the pretexts whose actual accuracy is more than 20 points below acc_sup: the rho
    the ordinary pretexts leave, from the ground truth, not the design tags), ``kendall`` (tau-b),
    ``pearson``, ``regret`` (max actual - actual of the top estimate) and ``regret_norm``
    (/ (max - mean)), ``ndcg5`` (gains max(0, actual - acc_sup)), ``auroc_helps`` (label: actual
    > acc_sup + 1 pt; score: estimate - the agent's ``supervised`` estimate),
    ``harm_balanced`` (the pretexts that actually hurt, actual < acc_sup - 1 pt, told from those
    at or above acc_sup by the estimate's sign: an estimate below the agent's ``supervised`` flags
    harm; balanced accuracy of those flags, 0.5 for any rule blind to the truth; the 1-point band
    below acc_sup is left out), ``harm_caught`` (the
    share of hurting pretexts flagged), ``unreliable_caught`` (share of the pretexts *tagged*
    unreliable by design estimated below the agent's ``supervised``; some of them help),
    ``mae`` (meaningful for accuracy-scale estimates), ``compute_ratio``
    (problem-side CPU of the metered runs / ground-truth CPU of one seed over the pool).
    Diagnostics shared by every agent of a seed: ``gt_agreement`` (Spearman between the first
    two ground-truth seeds: the target's own noise), ``acc_supervised``, ``acc_all_labels``,
    ``best_gain``. Units: one row per scored pretext (estimate, actual, design tag).

    ## Ground truth
    Per (split, pretext), built once in the prepare phase through the cache and averaged over
    ``gt_seeds`` training seeds [recon]: joint pretexts train CE(labelled, whole set per step)
    + lambda_p * l_p(unlabelled batch of 128) with Adam 1e-3 for ``epochs`` epochs of the
    unlabelled set; pretrain pretexts train l_p alone for as many steps, then fine-tune on the
    labelled set (``finetune_steps``). Reference rows: supervised (CE alone, same steps) and all
    labels (the unlabelled set's labels too).

    ## Episode End
    One set of estimates per trial.

    ## Arguments
    ``dataset``, ``pool`` (smoke | standard | full), ``calibration`` (C), ``gt_seeds``, ``epochs``,
    ``batch_size``, ``hidden`` (two widths), ``finetune_steps``, ``budget_fraction`` (steps per
    pretext / its ground-truth steps; default 0.05), ``subset_fraction`` (of the unlabelled set
    the metered runs see; default 0.2).

    ## Reference
    Jia, Han, Hu, Shao, Wei, Zhou, Guo, Li, "Quantitative Estimation of Target Task Performance
    from Unsupervised Pretext Task in Semi/Self-Supervised Learning", ICML 2026 (arXiv
    2508.07299). Only the abstract is read: the pool, the ground-truth protocol and every factor
    formula of the estimators are reconstructed here.

    ## Version History
    - v0: initial release. Later additions to the metrics (``harm_balanced``, ``harm_caught``,
      ``spearman_no_catastrophic``) leave the data, the pool, the ground truth and every earlier
      metric unchanged.
    """


class PretextImpactDigitsTask(PretextImpactTask):
    __doc__ = """
    ## Description
    A pool of P unsupervised pretext tasks on digits (consistency under shifts, rotations,
    flips, noise, dropout, blur and inversion; kNN-graph, k-means-cluster and random-partner
    consistency; pseudo-labelling; entropy minimisation; mixup; rotation prediction; quadrant
    jigsaw; denoising autoencoder; SimCLR-style contrastive), some deliberately unreliable
    (invariances that map 6 to 9 or 2 to 5, clusters or partners that merge classes) or
    incomplete (a near-vacuous invariance). The agent, an estimator, scores every pretext with
    an estimate of the test accuracy semi-supervised training with it would reach, spending at
    most ``budget_fraction`` of one ground-truth run's optimizer steps per pretext on the
    problem's metered short runs.

    ## Data
    ``load_digits`` / 16; per seed a split: 50 labelled (5 per class), 1,000 unlabelled, 747
    test. ``train_view(seed)`` is a :class:`PretextView` (labelled and unlabelled sets, the
    pool's public specs, the model spec, the step budgets, the calibration pretexts' actual
    accuracies, ``run_pretext`` and ``partners``). Target model: MLP 64-256-128-10, GELU.

    ## Artifact
    ``{pretext_id: estimate}`` for every pool member plus ``"supervised"``: the estimate for
    training without a pretext (the agent's acc_sup). Estimates on any scale; only
    ``mae`` and ``unreliable_caught`` read the scale.
    """ + _DOC_TAIL.replace(
        "## Episode End",
        """## Tiers
    smoke: 8 pretexts, C = 2, 1 ground-truth seed, 5 epochs. standard: 24 pretexts, C = 4, 2
    ground-truth seeds, 30 epochs. full: 100+ pretexts (the standard pool plus parameter
    sweeps of each family), C = 10, 5 ground-truth seeds, 50 epochs.

    ## Episode End""",
    )
    id: ClassVar[str] = "papergym/PretextImpactDigits-v0"
    datasets: ClassVar[tuple[str, ...]] = ("digits",)


class PretextImpactSynthTask(PretextImpactTask):
    __doc__ = """
    ## Description
    As ``PretextImpactDigits-v0`` on synthetic data whose labelling rule is known: two moons,
    concentric rings, or a 10-D Gaussian mixture of 8 clusters, two per class, arranged so that
    x -> -x sends every cluster to one of another class. The pool (vector pretexts only):
    noise and feature-dropout consistency, a label-swapping reflection (true reliability 0),
    kNN-graph and k-means consistency with the right and a wrong k, random partners,
    pseudo-labelling, entropy minimisation, mixup, a denoising autoencoder and a contrastive
    pretext.

    ## Data
    Per seed a fresh draw: 20 labelled (balanced), 1,000 unlabelled, 2,000 test. Target model:
    MLP d-128-128-K, GELU.

    ## Artifact
    As ``PretextImpactDigits-v0``.
    """ + _DOC_TAIL.replace(
        "## Episode End",
        """## Tiers
    smoke: moons, 8 pretexts, C = 2, 1 ground-truth seed, 5 epochs. standard: 16 pretexts,
    C = 4, 2 ground-truth seeds, 30 epochs (the benchmark runs moons and gmm as cells). full: as
    standard with 5 ground-truth seeds and 50 epochs.

    ## Episode End""",
    )
    id: ClassVar[str] = "papergym/PretextImpactSynth-v0"
    datasets: ClassVar[tuple[str, ...]] = SYNTH_DATASETS
