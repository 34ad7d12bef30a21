"""The ground truth: for each pretext of a split, the test accuracy that full semi-supervised
training with it reaches, averaged over the ground-truth seeds, built once per (problem
setting, split seed, pretext) in the prepare phase through :mod:`papergym.cache`.

Entries are the evaluator's: a view never holds one, a path to one or a value from one beyond
the calibration pretexts' accuracies it is told."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from papergym import cache
from papergym.envs.pretext import data, pretexts
from papergym.envs.pretext.data import Split
from papergym.envs.pretext.pretexts import Objective, Pretext, TrainConfig, Transforms

GT_TAG = 71
SUPERVISED, ALL_LABELS = "supervised", "all_labels"  # the reference rows: lambda = 0, all labels


@dataclass(frozen=True)
class Setting:
    """What fixes a problem's data and ground truth (a record: views hold no Task)."""

    dataset: str  # digits | moons | rings | gmm
    pool: str  # smoke | standard | full
    calibration: int
    gt_seeds: int
    train: TrainConfig
    budget_fraction: float
    subset_fraction: float

    def split(self, seed: int) -> Split:
        if self.dataset == "digits":
            return data.digits_split(seed)
        classes = data.GMM_CLASSES if self.dataset == "gmm" else 2
        return data.synth_split(self.dataset, seed, n_per_class=20 // classes)

    def pool_members(self) -> tuple[Pretext, ...]:
        if self.dataset == "digits":
            return pretexts.digits_pool(self.pool)
        return pretexts.synth_pool(self.pool, self.dataset)

    def gt_config(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "gt_seeds": self.gt_seeds, "train": asdict(self.train)}


def gt_seed(seed: int, g: int) -> int:
    return int(np.random.SeedSequence([GT_TAG, int(seed), int(g)]).generate_state(1)[0] % 2**31)


def ground_truth_run(setting: Setting, seed: int, pretext: Pretext | None, all_labels: bool = False) -> dict:
    """Test accuracy per ground-truth seed (the training seeds differ; the split is the seed's)."""
    split = setting.split(seed)
    transforms = Transforms(split)
    objective = Objective(pretext, split, transforms, seed) if pretext is not None else None
    accs, started = [], time.process_time()
    for g in range(setting.gt_seeds):
        model, _ = pretexts.train(
            split, pretext, objective, setting.train, gt_seed(seed, g), labels_for_all=all_labels
        )
        accs.append(pretexts.accuracy(model, split.X_t, split.y_t))
    return {
        "acc": accs,
        "mean": float(np.mean(accs)),
        "cpu_s": (time.process_time() - started) / setting.gt_seeds,
    }


CODE = (Path(data.__file__), Path(pretexts.__file__), Path(__file__))


def entry(setting: Setting, seed: int, pretext: Pretext | str) -> cache.Entry:
    """One pretext's (or reference row's) ground truth on one split."""
    if isinstance(pretext, str):
        if pretext not in (SUPERVISED, ALL_LABELS):
            raise ValueError(f"unknown reference row {pretext!r}")
        name, build = pretext, (lambda: ground_truth_run(setting, seed, None, pretext == ALL_LABELS))
    else:
        name, build = (
            {"id": pretext.id, "family": pretext.family, "params": dict(pretext.params)},
            (lambda: ground_truth_run(setting, seed, pretext)),
        )
    return cache.Entry(
        "pretext/ground_truth",
        {**setting.gt_config(), "seed": int(seed), "pretext": name},
        build=build,
        code=CODE,
    )


def entries(setting: Setting, seeds) -> list[cache.Entry]:
    out = []
    for s in seeds:
        out += [entry(setting, s, SUPERVISED), entry(setting, s, ALL_LABELS)]
        out += [entry(setting, s, p) for p in setting.pool_members()]
    return out


def table(setting: Setting, seed: int) -> Mapping[str, dict]:
    """Every pool member's ground truth on this split, plus the two reference rows."""
    rows = {name: cache.get(entry(setting, seed, name)) for name in (SUPERVISED, ALL_LABELS)}
    rows.update({p.id: cache.get(entry(setting, seed, p)) for p in setting.pool_members()})
    return rows
