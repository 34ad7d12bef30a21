"""TGTransferEntropy: recover the directed coupling pattern of an autoregressive torus graph.

v0 couples channels through the first harmonic of the source's lagged phase (the AR-TG itself);
a linear VAR on (cos y, sin y) sees that coupling too. v1 couples them 1:2 (the target's natural
parameters are linear in (cos 2 y_s, sin 2 y_s)), a cross-frequency phase coupling whose
projection on the source's (cos y_s, sin y_s) is zero when the source's lagged phase is independent
of the target's own past, so that linear Granger on those features cannot see it while the
conditional distribution (and so the transfer entropy) changes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from sklearn.metrics import average_precision_score, roc_auc_score

from papergym import cache
from papergym.envs.torus import tg
from papergym.problem import Budget, EvalResult, Task, check_training_seed, sealed_seed

_CODE = (Path(tg.__file__),)
_CODE_V1 = (Path(tg.__file__), Path(__file__))


def simulate_cross_harmonic(w: np.ndarray, steps: int, rng: np.random.Generator, harmonic: int,
                            burn: int = 200) -> np.ndarray:
    """y (steps, R) of an AR-TG whose cross-channel blocks act on the ``harmonic``-th harmonic of
    the source: channel t ~ vM with (a, b)_t = sum_l [M_ttl (cos, sin)(y_t) + sum_{s != t}
    M_tsl (cos, sin)(harmonic * y_s)] at t - l, M = w0 I + w1 J (``tg.ar_weights``' layout).
    ``harmonic`` 1 is ``tg.simulate_ar``'s process."""
    r, _, lags, _ = w.shape
    total = steps + burn + lags
    y = np.zeros((total, r))
    y[:lags] = rng.uniform(0.0, tg.TWO_PI, (lags, r))
    order = np.where(np.eye(r, dtype=bool), 1, int(harmonic))[..., None]  # [t, s, 1]
    w0, w1 = w[..., 0], w[..., 1]  # (R_target, R_source, L)
    for t in range(lags, total):
        ang = order * y[t - lags:t][::-1].T[None]  # (R_t, R_s, L), lag 1 first
        c, s = np.cos(ang), np.sin(ang)
        nat_a = (w0 * c - w1 * s).sum((1, 2))
        nat_b = (w0 * s + w1 * c).sum((1, 2))
        y[t] = rng.vonmises(np.arctan2(nat_b, nat_a), np.hypot(nat_a, nat_b)) % tg.TWO_PI
    return y[burn + lags:]


def _te_instance(r: int, lags: int, steps: int, pairs: int, pair_steps: int, model: dict,
                 seed: int, harmonic: int = 1) -> dict[str, Any]:
    rng = np.random.default_rng(seed)

    def simulate(w, n):
        return tg.simulate_ar(w, n, rng) if harmonic == 1 else \
            simulate_cross_harmonic(w, n, rng, harmonic)

    w, pattern = tg.ar_weights(r, lags, rng, model["self_scale"], model["cross_scale"],
                               model["edge_prob"])
    network = simulate(w, steps)
    pair_data, sources = [], []
    for _ in range(pairs):  # one directed edge per pair, its direction drawn at random
        source = int(rng.integers(2))
        w2, _ = tg.ar_weights(2, lags, rng, model["self_scale"], model["cross_scale"], 0.0)
        w2[1 - source, source] = rng.normal(0.0, model["cross_scale"], (lags, 2))
        pair_data.append(simulate(w2, pair_steps))
        sources.append(source)
    return {"pattern": pattern, "w": w, "network": network,
            "pairs": np.stack(pair_data) if pairs else np.zeros((0, pair_steps, 2)),
            "sources": np.array(sources, dtype=int)}


class TGTransferEntropyView:
    """``network()`` -> y (T, R); ``pairs()`` -> (P, T2, 2) bivariate series; ``lags`` = L."""

    def __init__(self, inst: dict, lags: int, budget: Budget) -> None:
        self._inst, self.lags, self.budget = inst, lags, budget
        self.steps, self.channels = inst["network"].shape
        self.n_pairs = len(inst["pairs"])

    def network(self) -> np.ndarray:
        self.budget.spend("series_reads", 1)
        return self._inst["network"].copy()

    def pairs(self) -> np.ndarray:
        self.budget.spend("series_reads", 1)
        return self._inst["pairs"].copy()


class TGTransferEntropyTask(Task):
    """Score every directed interaction s -> t of a multichannel phase time series.

    ## Description
    An autoregressive torus graph (AR-TG): channel t at time tau is von Mises with natural
    parameters (a, b)_t = sum_s sum_{l=1..L} M_{t,s,l} (cos y_s, sin y_s)_{tau - l}, each 2x2
    block M = w0 I + w1 J (J the 90 degree rotation), w ~ N(0, scale^2) with scale
    ``self_scale`` on s = t, ``cross_scale`` on the edges of a random directed pattern (edge
    probability ``edge_prob``) and 0 elsewhere. A separate set of ``pairs`` bivariate series
    (R = 2, one edge of random direction) tests directionality. Built in the prepare phase;
    sealed by the store's evaluation salt.

    ## Data
    ``TGTransferEntropyView``: ``network()`` -> y (T, R); ``pairs()`` -> (P, T2, 2); ``lags``.

    ## Artifacts
    ``{"network": (R, R), "pairs": (P, 2, 2)}`` score matrices, entry [s, t] the strength of
    s -> t (the diagonal is ignored).

    ## Metrics
    ``auroc`` (off-diagonal scores vs the true directed pattern; primary), ``auprc``,
    ``direction_accuracy`` (share of pairs whose true direction scores higher; ties count 1/2).

    ## Budget
    ``series_reads`` (100).

    ## Episode End
    Not sequential.

    ## Arguments
    ``channels`` (R), ``lags`` (L), ``steps`` (T), ``pairs``, ``pair_steps``, ``self_scale``,
    ``cross_scale``, ``edge_prob``.

    ## Tiers
    smoke R = 3, L = 2, T = 2,000, 4 pairs; standard R = 8, L = 3, T = 5,000, 20 pairs of
    T = 5,000; full R = 30, T = 20,000.

    ## Reference
    Goffinet, Hanks & Carlson (ICML 2026), the autoregressive torus graph and its transfer
    entropy; the 2x2 block parameterization and the pattern density are ours.

    ## Version History
    - v0: initial release (superseded by v1: its coupling is one a linear VAR-Granger test on
      (cos, sin) captures).
    - v1: ``TGTransferEntropyV1Task``, cross-channel coupling 1:2.
    """

    id = "papergym/TGTransferEntropy-v0"
    family = "torus"
    paper = "goffinet2026torus"
    metrics: ClassVar[dict[str, Any]] = {"auroc": ("max", 0.0, 1.0), "auprc": ("max", 0.0, 1.0),
                                         "direction_accuracy": ("max", 0.0, 1.0)}

    def __init__(self, tier: str = "smoke", channels: int = 3, lags: int = 2, steps: int = 2000,
                 pairs: int = 4, pair_steps: int = 2000, self_scale: float = 0.5,
                 cross_scale: float = 0.3, edge_prob: float = 0.2) -> None:
        super().__init__(tier=tier, channels=channels, lags=lags, steps=steps, pairs=pairs,
                         pair_steps=pair_steps, self_scale=self_scale, cross_scale=cross_scale,
                         edge_prob=edge_prob)
        self.r, self.lags, self.steps = int(channels), int(lags), int(steps)
        self.n_pairs, self.pair_steps = int(pairs), int(pair_steps)
        if self.r < 2 or self.lags < 1 or self.steps < 10 * self.lags:
            raise ValueError("TGTransferEntropy-v0 needs channels >= 2, lags >= 1, steps >= 10 lags")
        self.model = {"self_scale": float(self_scale), "cross_scale": float(cross_scale),
                      "edge_prob": float(edge_prob)}

    def entry(self, seed: int) -> cache.Entry:
        sealed = sealed_seed(seed, 301, self.r, self.lags)
        for _ in range(100):  # the pattern must have both classes for the AUROC
            config = {"r": self.r, "lags": self.lags, "steps": self.steps, "pairs": self.n_pairs,
                      "pair_steps": self.pair_steps, "seed": sealed, **self.model}
            rng = np.random.default_rng(sealed)
            _, pattern = tg.ar_weights(self.r, self.lags, rng, 1.0, 1.0, self.model["edge_prob"])
            off = pattern[~np.eye(self.r, dtype=bool)]
            if 0 < off.sum() < len(off):
                break
            sealed = int(np.random.default_rng(sealed).integers(2 ** 62))
        return cache.Entry("torus/te", config, code=_CODE, build=lambda: _te_instance(
            self.r, self.lags, self.steps, self.n_pairs, self.pair_steps, self.model, sealed))

    def cache_entries(self, seeds: Sequence[int]) -> list[cache.Entry]:
        return [self.entry(s) for s in seeds]

    @property
    def budget(self) -> Budget:
        return Budget(series_reads=100)

    def train_view(self, seed: int, budget: Budget) -> TGTransferEntropyView:
        check_training_seed(seed, self.id)
        return TGTransferEntropyView(cache.get(self.entry(seed)), self.lags, budget)

    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        if not (isinstance(artifact, dict) and {"network", "pairs"} <= set(artifact)):
            raise TypeError("TGTransferEntropy-v0 expects {'network': (R, R), 'pairs': (P, 2, 2)}")
        net = np.asarray(artifact["network"], dtype=float)
        pair_scores = np.asarray(artifact["pairs"], dtype=float)
        if net.shape != (self.r, self.r) or pair_scores.shape != (self.n_pairs, 2, 2):
            raise ValueError(f"TGTransferEntropy-v0: scores must be ({self.r}, {self.r}) and "
                             f"({self.n_pairs}, 2, 2), got {net.shape} and {pair_scores.shape}")
        if not (np.isfinite(net).all() and np.isfinite(pair_scores).all()):
            raise ValueError("TGTransferEntropy-v0: non-finite scores")
        inst = cache.get(self.entry(seed))
        off = ~np.eye(self.r, dtype=bool)
        truth = inst["pattern"][off].astype(int)
        metrics = {"auroc": float(np.clip(roc_auc_score(truth, net[off]), 0.0, 1.0)),
                   "auprc": float(np.clip(average_precision_score(truth, net[off]), 0.0, 1.0))}
        if self.n_pairs:
            src = inst["sources"]
            forward = pair_scores[np.arange(self.n_pairs), src, 1 - src]
            backward = pair_scores[np.arange(self.n_pairs), 1 - src, src]
            metrics["direction_accuracy"] = float(np.mean((forward > backward) + 0.5 * (forward == backward)))
        return EvalResult(metrics=metrics)


class TGTransferEntropyV1Task(TGTransferEntropyTask):
    """Score every directed interaction s -> t of a multichannel phase series with 1:2 coupling.

    ## Description
    As v0 (an AR-TG with L lags, self blocks of scale ``self_scale``, a random directed pattern of
    edge probability ``edge_prob`` with blocks of scale ``cross_scale``, and ``pairs`` bivariate
    series with one edge of random direction), except that every cross-channel block acts on the
    ``harmonic``-th harmonic of the source's lagged phase: (a, b)_t gains M_tsl (cos, sin)
    (``harmonic`` y_s) instead of M_tsl (cos, sin)(y_s) (n:m phase-phase coupling, as between
    frequency bands). With ``harmonic`` >= 2 and independent lagged phases, E[(cos, sin)(y_t)
    (cos, sin)(y_s)] at any lag is zero however strong the edge: a linear VAR on (cos y, sin y)
    has no coefficient to find, while p(y_t | past) depends on y_s.

    ## Data
    ``TGTransferEntropyView``: ``network()`` -> y (T, R); ``pairs()`` -> (P, T2, 2); ``lags``.

    ## Artifacts
    ``{"network": (R, R), "pairs": (P, 2, 2)}`` score matrices, entry [s, t] the strength of
    s -> t (the diagonal is ignored).

    ## Metrics
    ``auroc`` (primary), ``auprc``, ``direction_accuracy``, as v0.

    ## Budget
    ``series_reads`` (100).

    ## Episode End
    Not sequential.

    ## Arguments
    v0's, and ``harmonic`` (2; the order of the source harmonic the coupling acts on).

    ## Tiers
    smoke R = 3, L = 2, T = 2,000, 4 pairs; standard R = 8, L = 3, T = 5,000, 20 pairs of
    T = 2,000; full R = 30, T = 20,000.

    ## Reference
    Goffinet, Hanks & Carlson (ICML 2026), the autoregressive torus graph and its transfer
    entropy; the 1:2 cross coupling, the block parameterization and the pattern density are
    ours (n:m phase coupling: Tass et al., Phys. Rev. Lett. 1998).

    ## Version History
    - v1: cross-channel coupling through the source's second harmonic (v0 coupled through the
      first, which linear Granger on (cos, sin) captures as well as transfer entropy). Results
      are not comparable with v0.
    """

    id = "papergym/TGTransferEntropy-v1"

    def __init__(self, tier: str = "smoke", channels: int = 3, lags: int = 2, steps: int = 2000,
                 pairs: int = 4, pair_steps: int = 2000, self_scale: float = 0.5,
                 cross_scale: float = 0.3, edge_prob: float = 0.2, harmonic: int = 2) -> None:
        super().__init__(tier=tier, channels=channels, lags=lags, steps=steps, pairs=pairs,
                         pair_steps=pair_steps, self_scale=self_scale, cross_scale=cross_scale,
                         edge_prob=edge_prob)
        if int(harmonic) < 1:
            raise ValueError(f"TGTransferEntropy-v1: harmonic must be >= 1, got {harmonic}")
        self.harmonic = int(harmonic)
        self.kwargs["harmonic"] = self.harmonic

    def entry(self, seed: int) -> cache.Entry:
        base = super().entry(seed)
        sealed = base.config["seed"]
        config = {**base.config, "harmonic": self.harmonic}
        return cache.Entry("torus/te-v1", config, code=_CODE_V1, build=lambda: _te_instance(
            self.r, self.lags, self.steps, self.n_pairs, self.pair_steps, self.model, sealed,
            self.harmonic))
