"""The pretext pool: declarative specs, their executable transforms and losses, the target
model, and the one training loop that both the ground truth and the estimators' metered short
runs use.

Every pretext is a :class:`Pretext` (id, family, parameters, weight lambda_p, mode):
- ``joint`` pretexts train CE(labelled) + lambda_p * l_p(unlabelled batch) (consistency under a
  transform, consistency with a partner drawn from a kNN graph, a k-means cluster or at random,
  pseudo-labelling, entropy minimisation, mixup);
- ``pretrain`` pretexts (rotation prediction, quadrant jigsaw, denoising autoencoder,
  SimCLR-style contrastive) train l_p alone on the unlabelled set, then fine-tune the whole
  network on the labelled set.
The pool, the weights and the losses' exact forms are ours [recon]; the paper's benchmark of
over a hundred pretexts is not public.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from papergym.envs.pretext.data import Split

JOINT_FAMILIES = ("consistency", "partner", "pseudo_label", "entropy_min", "mixup")
PRETRAIN_FAMILIES = ("rotation", "jigsaw", "denoising", "contrastive")
FAMILIES = JOINT_FAMILIES + PRETRAIN_FAMILIES
WEIGHTS = {
    "consistency": 3.0,
    "partner": 3.0,
    "pseudo_label": 1.0,
    "entropy_min": 1.0,
    "mixup": 3.0,
    "rotation": 1.0,
    "jigsaw": 1.0,
    "denoising": 1.0,
    "contrastive": 1.0,
}  # lambda_p, fixed per family


@dataclass(frozen=True)
class Pretext:
    """One pool member. ``params``: for consistency/contrastive the transform(s) (``views``);
    partner: ``structure`` in {knn, cluster, random} and ``k``; pseudo_label: ``threshold``;
    entropy_min: ``scale`` (multiplies lambda); mixup: ``alpha``; denoising: ``sigma``.
    ``design`` is the evaluator's tag (reliable | unreliable | incomplete); views omit it."""

    id: str
    family: str
    params: Mapping[str, Any] = field(default_factory=dict)
    design: str = "reliable"

    @property
    def mode(self) -> str:
        return "pretrain" if self.family in PRETRAIN_FAMILIES else "joint"

    @property
    def weight(self) -> float:
        return WEIGHTS[self.family] * float(self.params.get("scale", 1.0))

    @property
    def classification(self) -> bool:
        return self.family in ("rotation", "jigsaw")

    @property
    def assumption(self) -> str:
        """What label assumption the pretext makes: invariance (a transform keeps the label),
        pair (a partner shares the label), confidence (confident predictions are right), none."""
        if self.family in ("consistency", "contrastive"):
            return "invariance"
        if self.family == "partner":
            return "pair"
        if self.family in ("pseudo_label", "entropy_min", "mixup"):
            return "confidence"
        return "none"

    def public(self) -> dict[str, Any]:
        """What an agent sees: everything but the design tag."""
        return {
            "id": self.id,
            "family": self.family,
            "params": dict(self.params),
            "weight": self.weight,
            "mode": self.mode,
            "assumption": self.assumption,
            "classification": self.classification,
        }


def _c(family: str, pid: str, design: str = "reliable", **params: Any) -> Pretext:
    return Pretext(pid, family, params, design)


# ----------------------------------------------------------------------------- pools


def digits_pool(size: str) -> tuple[Pretext, ...]:
    """smoke 8, standard 24, full >= 100 (the standard pool plus parameter sweeps)."""
    core = (
        _c("consistency", "cons_shift1", views=("shift1",)),
        _c("consistency", "cons_rot15", views=("rot15",)),
        _c("consistency", "cons_rot180", "unreliable", views=("rot180",)),
        _c("consistency", "cons_noise20", views=("noise0.2",)),
        _c("partner", "knn_k5", structure="knn", k=5),
        _c("partner", "cluster_k2", "unreliable", structure="cluster", k=2),
        _c("pseudo_label", "pseudo_095", threshold=0.95),
        _c("denoising", "dae_030", sigma=0.3),
    )
    if size == "smoke":
        return core
    standard = core + (
        _c("consistency", "cons_shift2", views=("shift2",)),
        _c("consistency", "cons_rot30", views=("rot30",)),
        _c("consistency", "cons_hflip", "unreliable", views=("hflip",)),
        _c("consistency", "cons_dropout30", views=("dropout0.3",)),
        _c("consistency", "cons_blur", views=("blur",)),
        _c("consistency", "cons_noise01", "incomplete", views=("noise0.01",)),
        _c("consistency", "cons_invert", "unreliable", views=("invert",)),
        _c("partner", "knn_k20", structure="knn", k=20),
        _c("partner", "cluster_k30", structure="cluster", k=30),
        _c("partner", "random_pair", "unreliable", structure="random", k=0),
        _c("pseudo_label", "pseudo_070", threshold=0.7),
        _c("entropy_min", "entmin_10", scale=1.0),
        _c("mixup", "mixup_10", alpha=1.0),
        _c("rotation", "rotation4"),
        _c("jigsaw", "jigsaw4"),
        _c("contrastive", "simclr_shift_noise", views=("shift1", "noise0.2")),
    )
    if size == "standard":
        return standard
    if size != "full":
        raise ValueError(f"pool size must be smoke, standard or full, got {size!r}")
    sweep: list[Pretext] = []
    for d in (1, 2, 3):
        sweep.append(_c("consistency", f"cons_shift{d}_s", views=(f"shift{d}",)))
    for angle in (5, 10, 20, 45, 60, 90, 120, 150):
        sweep.append(
            _c(
                "consistency",
                f"cons_rot{angle}_s",
                "unreliable" if angle >= 90 else "reliable",
                views=(f"rot{angle}",),
            )
        )
    for s in (0.02, 0.05, 0.1, 0.3, 0.4, 0.6):
        sweep.append(_c("consistency", f"cons_noise{s}_s", views=(f"noise{s}",)))
    for p in (0.1, 0.2, 0.4, 0.5, 0.6):
        sweep.append(_c("consistency", f"cons_dropout{p}_s", views=(f"dropout{p}",)))
    sweep += [
        _c("consistency", "cons_vflip_s", "unreliable", views=("vflip",)),
        _c("consistency", "cons_transpose_s", "unreliable", views=("transpose",)),
    ]
    for k in (2, 3, 8, 10, 15, 30, 50):
        sweep.append(_c("partner", f"knn_k{k}_s", structure="knn", k=k))
    for k in (3, 5, 10, 15, 20, 50, 80):
        sweep.append(
            _c("partner", f"cluster_k{k}_s", "unreliable" if k < 10 else "reliable", structure="cluster", k=k)
        )
    for t in (0.5, 0.6, 0.8, 0.85, 0.9, 0.99):
        sweep.append(_c("pseudo_label", f"pseudo_{t}_s", threshold=t))
    for s in (0.03, 0.1, 0.3, 0.5, 2.0, 3.0):
        sweep.append(_c("entropy_min", f"entmin_{s}_s", scale=s))
    for a in (0.1, 0.2, 0.4, 2.0, 4.0):
        sweep.append(_c("mixup", f"mixup_{a}_s", alpha=a))
    for s in (0.05, 0.1, 0.2, 0.4, 0.5, 0.7):
        sweep.append(_c("denoising", f"dae_{s}_s", sigma=s))
    for views in (
        ("shift1", "dropout0.3"),
        ("rot15", "noise0.2"),
        ("hflip", "hflip"),
        ("shift2", "blur"),
        ("noise0.1", "noise0.1"),
        ("dropout0.2", "rot10"),
        ("shift1", "shift1"),
        ("rot30", "blur"),
    ):
        sweep.append(_c("contrastive", "simclr_" + "_".join(views) + "_s", views=views))
    for s in (0.3, 3.0):
        sweep.append(_c("partner", f"random_pair_{s}_s", "unreliable", structure="random", k=0, scale=s))
    sweep.append(_c("consistency", "cons_noise0.005_s", "incomplete", views=("noise0.005",)))
    for t in (0.7, 0.9, 0.95):
        sweep.append(_c("pseudo_label", f"pseudo_{t}_x0.3_s", threshold=t, scale=0.3))
    for views in (
        ("shift1",),
        ("rot15",),
        ("dropout0.3",),
        ("noise0.2",),
        ("blur",),
        ("shift2",),
        ("invert",),
    ):
        sweep.append(
            _c(
                "consistency",
                f"cons_{views[0]}_x0.3_s",
                "unreliable" if views[0] == "invert" else "reliable",
                views=views,
                scale=0.3,
            )
        )
    return standard + tuple(sweep)


def synth_pool(size: str, dataset: str) -> tuple[Pretext, ...]:
    """smoke 8, standard 16 (vector data: no image pretexts)."""
    right_k = {"moons": 20, "rings": 24, "gmm": 8}[dataset]
    core = (
        _c("consistency", "cons_noise05", views=("gauss0.05",)),
        _c("consistency", "cons_noise30", views=("gauss0.3",)),
        _c("consistency", "cons_reflect", "unreliable", views=("reflect",)),
        _c("partner", "knn_k5", structure="knn", k=5),
        _c("partner", "knn_k20", structure="knn", k=20),
        _c("entropy_min", "entmin_10", scale=1.0),
        _c("pseudo_label", "pseudo_090", threshold=0.9),
        _c("partner", "cluster_k2", "unreliable", structure="cluster", k=2 if dataset != "gmm" else 3),
    )
    if size == "smoke":
        return core
    if size not in ("standard", "full"):
        raise ValueError(f"pool size must be smoke, standard or full, got {size!r}")
    return core + (
        _c("partner", f"cluster_k{right_k}", structure="cluster", k=right_k),
        _c("consistency", "cons_noise01", "incomplete", views=("gauss0.01",)),
        _c("consistency", "cons_fdrop50", views=("fdrop0.5",)),
        _c("mixup", "mixup_10", alpha=1.0),
        _c("pseudo_label", "pseudo_070", threshold=0.7),
        _c("partner", "random_pair", "unreliable", structure="random", k=0),
        _c("denoising", "dae_030", sigma=0.3),
        _c("contrastive", "contrast_noise", views=("gauss0.1", "gauss0.1")),
    )


# ----------------------------------------------------------------------------- transforms


def _interp_matrix(side: int, map_fn) -> np.ndarray:
    """(side^2, side^2) bilinear resampling matrix: output pixel p reads the source location
    map_fn(row, col) (zero outside)."""
    M = np.zeros((side * side, side * side))
    c = (side - 1) / 2.0
    for r in range(side):
        for q in range(side):
            sr, sq = map_fn(r - c, q - c)
            sr, sq = sr + c, sq + c
            r0, q0 = math.floor(sr), math.floor(sq)
            for dr in (0, 1):
                for dq in (0, 1):
                    rr, qq = r0 + dr, q0 + dq
                    w = (1 - abs(sr - rr)) * (1 - abs(sq - qq))
                    if 0 <= rr < side and 0 <= qq < side and w > 0:
                        M[r * side + q, rr * side + qq] += w
    return M


def _rotation(side: int, degrees: float) -> np.ndarray:
    t = math.radians(degrees)
    return _interp_matrix(
        side, lambda r, q: (math.cos(t) * r - math.sin(t) * q, math.sin(t) * r + math.cos(t) * q)
    )


def _shift(side: int, dr: int, dq: int) -> np.ndarray:
    return _interp_matrix(side, lambda r, q: (r - dr, q - dq))


class Transforms:
    """The executable views: ``apply(name, x, gen)`` for a torch batch (rows of flattened
    images for digits, vectors for synthetic data). Random ones draw from ``gen``."""

    def __init__(self, split: Split) -> None:
        self.side, self.dataset = split.image_side, split.name
        self.scale = float(np.std(split.X_u)) if self.side == 0 else 1.0
        self._linear: dict[str, list[torch.Tensor]] = {}

    def _mats(self, name: str) -> list[torch.Tensor]:
        if name not in self._linear:
            s = self.side
            if name.startswith("rot"):
                a = float(name[3:])
                mats = [_rotation(s, a), _rotation(s, -a)]
            elif name.startswith("shift"):
                d = int(name[5:])
                mats = [_shift(s, dr, dq) for dr, dq in ((d, 0), (-d, 0), (0, d), (0, -d))]
            elif name == "hflip":
                mats = [_interp_matrix(s, lambda r, q: (r, -q))]
            elif name == "vflip":
                mats = [_interp_matrix(s, lambda r, q: (-r, q))]
            elif name == "transpose":
                mats = [_interp_matrix(s, lambda r, q: (q, r))]
            elif name == "blur":
                mats = [sum(_shift(s, dr, dq) for dr in (-1, 0, 1) for dq in (-1, 0, 1)) / 9.0]
            else:
                raise ValueError(f"unknown transform {name!r}")
            self._linear[name] = [torch.tensor(m.T, dtype=torch.float32) for m in mats]
        return self._linear[name]

    def apply(self, name: str, x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
        if name.startswith("noise"):
            return (x + float(name[5:]) * torch.randn(x.shape, generator=gen)).clamp(0.0, 1.0)
        if name.startswith("dropout"):
            return x * (torch.rand(x.shape, generator=gen) >= float(name[7:])).float()
        if name == "invert":
            return 1.0 - x
        if name.startswith("gauss"):
            return x + float(name[5:]) * self.scale * torch.randn(x.shape, generator=gen)
        if name.startswith("fdrop"):
            keep = (torch.rand(x.shape, generator=gen) >= float(name[5:])).float()
            return x * keep
        if name == "reflect":
            # moons: the point reflection about (0.5, 0.25) maps each moon onto the other; gmm: x -> -x
            # maps each cluster to one of another class (data.gmm_means); rings: a radial swap r -> 1.5 - r
            if self.dataset == "moons":
                return torch.tensor([1.0, 0.5]) - x
            if self.dataset == "rings":
                r = x.norm(dim=1, keepdim=True).clamp_min(1e-6)
                return x * (1.5 - r) / r
            return -x
        if self.side == 0:
            raise ValueError(f"transform {name!r} needs images")
        mats = self._mats(name)
        if len(mats) == 1:
            return x @ mats[0]
        pick = torch.randint(0, len(mats), (len(x),), generator=gen)
        out = torch.empty_like(x)
        for i, m in enumerate(mats):
            rows = pick == i
            out[rows] = x[rows] @ m
        return out


# ----------------------------------------------------------------------------- structures


def kmeans(X: np.ndarray, k: int, seed: int, iters: int = 25) -> tuple[np.ndarray, np.ndarray]:
    """Lloyd's k-means with k-means++ seeding from ``seed``: (centroids, assignment)."""
    rng = np.random.default_rng([61, seed, k])
    centers = [X[rng.integers(len(X))]]
    for _ in range(1, k):
        d = np.min(((X[:, None, :] - np.array(centers)[None]) ** 2).sum(-1), axis=1)
        centers.append(X[rng.choice(len(X), p=d / d.sum())])
    C = np.array(centers)
    for _ in range(iters):
        assign = np.argmin(((X[:, None, :] - C[None]) ** 2).sum(-1), axis=1)
        C = np.array([X[assign == j].mean(0) if np.any(assign == j) else C[j] for j in range(k)])
    assign = np.argmin(((X[:, None, :] - C[None]) ** 2).sum(-1), axis=1)
    return C, assign


def _sqdist(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    return (A**2).sum(1)[:, None] - 2 * A @ B.T + (B**2).sum(1)[None, :]


class Structure:
    """A partner pretext's structure over the unlabelled set (the problem's, fixed per split):
    ``partners(idx, gen)`` gives one partner index into X_u per unlabelled index; ``for_points(X,
    rng)`` draws a partner in X_u for arbitrary points (the labelled set, for estimators)."""

    def __init__(self, X_u: np.ndarray, structure: str, k: int, seed: int) -> None:
        self.structure, self.k, self.n = structure, int(k), len(X_u)
        self._X = X_u
        if structure == "knn":
            d = _sqdist(X_u, X_u)
            np.fill_diagonal(d, np.inf)
            self.neighbours = np.argsort(d, axis=1)[:, :k]
            self._nb = torch.tensor(self.neighbours)
        elif structure == "cluster":
            self.centroids, assign = kmeans(X_u, k, seed)
            self.assign = assign
            order = np.argsort(assign, kind="stable")
            counts = np.bincount(assign, minlength=k)
            self._starts = torch.tensor(np.concatenate([[0], np.cumsum(counts)[:-1]]))
            self._counts = torch.tensor(counts)
            self._members = torch.tensor(order)
            self._assign = torch.tensor(assign)
        elif structure != "random":
            raise ValueError(f"structure must be knn, cluster or random, got {structure!r}")

    def partners(self, idx: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
        u = torch.rand(len(idx), generator=gen)
        if self.structure == "knn":
            return self._nb[idx, (u * self.k).long().clamp_max(self.k - 1)]
        if self.structure == "cluster":
            c = self._assign[idx]
            offset = (u * self._counts[c]).long().clamp_max(self._counts[c] - 1)
            return self._members[self._starts[c] + offset]
        return (u * self.n).long().clamp_max(self.n - 1)

    def for_points(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if self.structure == "knn":
            nb = np.argsort(_sqdist(X, self._X), axis=1)[:, : self.k]
            return nb[np.arange(len(X)), rng.integers(0, self.k, len(X))]
        if self.structure == "cluster":
            c = np.argmin(_sqdist(X, self.centroids), axis=1)
            return np.array([rng.choice(np.flatnonzero(self.assign == j)) for j in c])
        return rng.integers(0, self.n, len(X))


# ----------------------------------------------------------------------------- model and losses


class Net(nn.Module):
    """The target model: in -> h1 -> h2 -> classes, GELU (digits 64-256-128-10), with the
    pretext's auxiliary head on the h2 representation."""

    def __init__(self, d_in: int, classes: int, hidden: tuple[int, int], pretext: Pretext | None) -> None:
        super().__init__()
        h1, h2 = hidden
        self.body = nn.Sequential(nn.Linear(d_in, h1), nn.GELU(), nn.Linear(h1, h2), nn.GELU())
        self.head = nn.Linear(h2, classes)
        family = pretext.family if pretext is not None else None
        self.aux = {
            "rotation": nn.Linear(h2, 4),
            "jigsaw": nn.Linear(h2, 4),
            "denoising": nn.Linear(h2, d_in),
            "contrastive": nn.Sequential(nn.Linear(h2, h2), nn.GELU(), nn.Linear(h2, 32)),
        }.get(family)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


def _jigsaw(x: torch.Tensor, perm: int) -> torch.Tensor:
    """Quadrants of 8 x 8 images in one of 4 fixed orders (identity, swap rows, swap columns, both)."""
    img = x.reshape(-1, 8, 8)
    top, bottom = img[:, :4], img[:, 4:]
    if perm in (1, 3):
        img = torch.cat([bottom, top], dim=1)
    if perm in (2, 3):
        img = torch.cat([img[:, :, 4:], img[:, :, :4]], dim=2)
    return img.reshape(len(x), 64)


class Objective:
    """l_p of one pretext on a split: ``loss(model, idx, gen)`` on unlabelled rows ``idx``
    returns (loss, pretext accuracy or None)."""

    def __init__(self, pretext: Pretext, split: Split, transforms: Transforms, seed: int) -> None:
        self.p, self.transforms = pretext, transforms
        self.X_u = torch.tensor(split.X_u, dtype=torch.float32)
        self.structure = (
            Structure(split.X_u, pretext.params["structure"], pretext.params["k"], seed)
            if pretext.family == "partner"
            else None
        )

    def loss(self, model: Net, idx: torch.Tensor, gen: torch.Generator) -> tuple[torch.Tensor, float | None]:
        p, x = self.p, self.X_u[idx]
        fam = p.family
        if fam in ("consistency", "partner"):
            if fam == "consistency":
                other = self.transforms.apply(p.params["views"][0], x, gen)
            else:
                other = self.X_u[self.structure.partners(idx, gen)]
            target = F.softmax(model(x), dim=1)
            if fam == "consistency":
                target = target.detach()  # Pi-model style: the clean view is the target
            # partners: the symmetric graph smoothness sum ||f(x) - f(x')||^2 of manifold regularization
            return ((F.softmax(model(other), dim=1) - target) ** 2).sum(1).mean(), None
        if fam == "pseudo_label":
            logits = model(x)
            conf, label = F.softmax(logits, dim=1).detach().max(1)
            mask = (conf >= p.params["threshold"]).float()
            return (F.cross_entropy(logits, label, reduction="none") * mask).mean(), None
        if fam == "entropy_min":
            logp = F.log_softmax(model(x), dim=1)
            return -(logp.exp() * logp).sum(1).mean(), None
        if fam == "mixup":
            alpha = float(p.params["alpha"])
            draw = np.random.default_rng(int(torch.randint(0, 2**31, (1,), generator=gen)))
            lam = torch.tensor(draw.beta(alpha, alpha, (len(x), 1)), dtype=torch.float32)
            perm = torch.randperm(len(x), generator=gen)
            with torch.no_grad():
                q = F.softmax(model(x), dim=1)
            mixed = lam * x + (1 - lam) * x[perm]
            return ((F.softmax(model(mixed), dim=1) - (lam * q + (1 - lam) * q[perm])) ** 2).sum(
                1
            ).mean(), None
        if fam in ("rotation", "jigsaw"):
            k = torch.randint(0, 4, (len(x),), generator=gen)
            views = torch.empty_like(x)
            for j in range(4):
                rows = k == j
                if fam == "rotation":
                    views[rows] = torch.rot90(x[rows].reshape(-1, 8, 8), j, dims=(1, 2)).reshape(-1, 64)
                else:
                    views[rows] = _jigsaw(x[rows], j)
            logits = model.aux(model.body(views))
            return F.cross_entropy(logits, k), float((logits.argmax(1) == k).float().mean())
        if fam == "denoising":
            noisy = x + p.params["sigma"] * torch.randn(x.shape, generator=gen)
            return ((model.aux(model.body(noisy)) - x) ** 2).mean(), None
        if fam == "contrastive":
            a, b = p.params["views"]
            z1 = F.normalize(model.aux(model.body(self.transforms.apply(a, x, gen))), dim=1)
            z2 = F.normalize(model.aux(model.body(self.transforms.apply(b, x, gen))), dim=1)
            logits = z1 @ z2.T / 0.5  # NT-Xent (temperature 0.5), cross-view negatives
            target = torch.arange(len(x))
            loss = 0.5 * (F.cross_entropy(logits, target) + F.cross_entropy(logits.T, target))
            return loss, float((logits.argmax(1) == target).float().mean())
        raise ValueError(f"unknown pretext family {fam!r}")


@dataclass(frozen=True)
class TrainConfig:
    hidden: tuple[int, int] = (256, 128)
    epochs: int = 30
    batch_size: int = 128
    lr: float = 1e-3
    finetune_steps: int = 100

    def steps(self, n_unlabelled: int) -> int:
        return self.epochs * -(-n_unlabelled // self.batch_size)


def make_model(split: Split, pretext: Pretext | None, hidden: tuple[int, int], seed: int) -> Net:
    torch.manual_seed(int(seed))
    return Net(split.X_l.shape[1], split.classes, hidden, pretext)


def train(
    split: Split,
    pretext: Pretext | None,
    objective: Objective | None,
    cfg: TrainConfig,
    seed: int,
    steps: int | None = None,
    rows: np.ndarray | None = None,
    lr: float | None = None,
    finetune: bool = True,
    labels_for_all: bool = False,
) -> tuple[Net, dict[str, list[float]]]:
    """Train the target model; returns (model, trace of per-step pretext losses and accuracies).

    Ground truth: ``steps`` = epochs x batches over all unlabelled rows. Joint pretexts add
    lambda_p * l_p of each unlabelled batch to CE on the whole labelled set; pretrain pretexts
    train l_p alone, then (``finetune``) ``cfg.finetune_steps`` steps of CE on the labelled set.
    ``pretext=None`` is the supervised row (CE alone); ``labels_for_all`` the all-labels row.
    An estimator's short run passes ``steps`` and ``rows`` (its unlabelled subset)."""
    gen = torch.Generator().manual_seed(int(seed))
    model = make_model(split, pretext, cfg.hidden, seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr or cfg.lr)
    X_l = torch.tensor(split.X_l, dtype=torch.float32)
    y_l = torch.tensor(split.y_l)
    if labels_for_all:
        X_l = torch.cat([X_l, torch.tensor(split.X_u, dtype=torch.float32)])
        y_l = torch.cat([y_l, torch.tensor(split.y_u)])
    pool = torch.arange(len(split.X_u)) if rows is None else torch.tensor(np.asarray(rows))
    total = cfg.steps(len(split.X_u)) if steps is None else int(steps)
    trace: dict[str, list[float]] = {"pretext_loss": [], "pretext_acc": []}
    order = torch.randperm(len(pool), generator=gen)
    at, n_b = 0, min(cfg.batch_size, len(pool))
    for _ in range(total):
        if at + n_b > len(order):
            order, at = torch.randperm(len(pool), generator=gen), 0
        idx = pool[order[at : at + n_b]]
        at += n_b
        loss = torch.zeros(())
        if pretext is not None:
            lp, acc = objective.loss(model, idx, gen)
            trace["pretext_loss"].append(float(lp.detach()))
            if acc is not None:
                trace["pretext_acc"].append(acc)
            loss = loss + (pretext.weight * lp if pretext.mode == "joint" else lp)
        if pretext is None or pretext.mode == "joint":
            if labels_for_all:
                pick = torch.randint(0, len(y_l), (n_b,), generator=gen)
                loss = loss + F.cross_entropy(model(X_l[pick]), y_l[pick])
            else:
                loss = loss + F.cross_entropy(model(X_l), y_l)
        opt.zero_grad()
        loss.backward()
        opt.step()
    if pretext is not None and pretext.mode == "pretrain" and finetune:
        for _ in range(cfg.finetune_steps):
            loss = F.cross_entropy(model(X_l), y_l)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return model, trace


@torch.no_grad()
def accuracy(model: Net, X: np.ndarray, y: np.ndarray) -> float:
    return float((model(torch.tensor(X, dtype=torch.float32)).argmax(1).numpy() == y).mean())
