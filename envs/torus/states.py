"""TGHMM-v0: recover the hidden coupling states of a torus-graph hidden Markov model."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import adjusted_rand_score

from papergym import cache
from papergym.envs.torus import tg
from papergym.problem import Budget, EvalResult, Task, check_training_seed, sealed_seed

_CODE = (Path(tg.__file__), Path(__file__))


def sticky_states(k: int, steps: int, p_stay: float, rng: np.random.Generator) -> np.ndarray:
    """A Markov chain that stays with p_stay and jumps uniformly to another state otherwise."""
    z = np.empty(steps, dtype=int)
    z[0] = rng.integers(k)
    for t in range(1, steps):
        z[t] = z[t - 1] if rng.random() < p_stay else (z[t - 1] + 1 + rng.integers(k - 1)) % k
    return z


def _hmm_instance(k: int, d: int, steps: int, p_stay: float, edge_prob: float, scale: float,
                  seed: int, gibbs: dict) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    gibbs = dict(gibbs)
    max_rhat = gibbs.pop("max_rhat")
    z = sticky_states(k, steps, p_stay, rng)
    phis, x, rhats = [], np.empty((steps, d)), []
    for state in range(k):
        phi, pool, rhat, _ = tg.sample_gated(lambda r: tg.coupling_phi(d, r, edge_prob, scale),
                                             steps, rng, rng, max_rhat=max_rhat, **gibbs)
        at = np.flatnonzero(z == state)
        x[at] = pool[rng.permutation(steps)[:len(at)]]
        phis.append(phi)
        rhats.append(rhat)
    return {"phis": np.stack(phis), "states": z, "x": x, "rhat": max(rhats)}


def matched_accuracy(labels: np.ndarray, states: np.ndarray, k: int) -> float:
    """Accuracy after the best one-to-one relabelling (Hungarian on the confusion matrix)."""
    confusion = np.zeros((k, k))
    np.add.at(confusion, (labels, states), 1)
    rows, cols = linear_sum_assignment(-confusion)
    return float(confusion[rows, cols].sum() / len(states))


class TGHMMView:
    """``data()`` -> x (T, d) float64 in [0, 2pi); ``k`` states, ``steps`` = T, ``d``."""

    def __init__(self, x: np.ndarray, k: int, budget: Budget) -> None:
        self._x, self.k, self.budget = x, k, budget
        self.steps, self.d = x.shape

    def data(self) -> np.ndarray:
        self.budget.spend("samples", self.steps)
        return self._x.copy()


class TGHMMTask(Task):
    """Label every time step of a sequence with its hidden coupling state.

    ## Description
    A sticky Markov chain over K states (stay probability ``p_stay``) emits x_t ~ TG(phi_k).
    Each phi_k has **only phase-difference couplings** (alpha, beta entries below the
    diagonal; each pair kept w.p. ``edge_prob`` with entries N(0, ``coupling_scale``^2)) and no
    diagonal or phase-sum terms, so every marginal of every state is exactly uniform: the states
    differ only in how the phases couple. Emissions are drawn by Gibbs sampling (R-hat gated)
    in the prepare phase; every draw is sealed by the store's evaluation salt.

    ## Data
    ``TGHMMView``: ``data()`` -> x (T, d); ``k``. Never the states or phi_k.

    ## Artifacts
    An integer array (T,) of state labels in [0, K).

    ## Metrics
    ``accuracy`` (after Hungarian matching of labels to states; primary, chance about 1/K),
    ``ari`` (adjusted Rand index), ``rhat``.

    ## Budget
    ``samples`` reads (100 passes).

    ## Episode End
    Not sequential.

    ## Arguments
    ``k``, ``d``, ``steps``, ``p_stay``, ``edge_prob``, ``coupling_scale``, Gibbs ``chains``/``burn``/
    ``thin``/``max_rhat``.

    ## Tiers
    smoke K = 2, d = 4, T = 500; standard K = 3, d = 10, T = 1,000; full K = 4, d = 30, T = 10,000.

    ## Reference
    Goffinet, Hanks & Carlson (ICML 2026), the TG hidden Markov model; p_stay, the coupling-only
    emissions and their scale are ours.

    ## Version History
    - v0: initial release.
    """

    id = "papergym/TGHMM-v0"
    family = "torus"
    paper = "goffinet2026torus"
    metrics: ClassVar[dict[str, Any]] = {"accuracy": ("max", 0.0, 1.0), "ari": ("max", -1.0, 1.0),
                                         "rhat": ("min", 0.0, None)}

    def __init__(self, tier: str = "smoke", k: int = 2, d: int = 4, steps: int = 500,
                 p_stay: float = 0.98, edge_prob: float = 0.5, coupling_scale: float = 1.0,
                 chains: int = 200, burn: int = 200, thin: int = 3, max_rhat: float = 1.05) -> None:
        super().__init__(tier=tier, k=k, d=d, steps=steps, p_stay=p_stay, edge_prob=edge_prob,
                         coupling_scale=coupling_scale, chains=chains, burn=burn, thin=thin,
                         max_rhat=max_rhat)
        if int(k) < 2 or int(d) < 2 or not 0.0 < float(p_stay) < 1.0:
            raise ValueError(f"TGHMM-v0 needs k >= 2, d >= 2, 0 < p_stay < 1; got {k}, {d}, {p_stay}")
        self.k, self.d, self.steps = int(k), int(d), int(steps)
        self.model = {"p_stay": float(p_stay), "edge_prob": float(edge_prob),
                      "scale": float(coupling_scale)}
        self.gibbs = {"chains": int(chains), "burn": int(burn), "thin": int(thin),
                      "max_rhat": float(max_rhat)}

    def entry(self, seed: int) -> cache.Entry:
        sealed = sealed_seed(seed, 201, self.k, self.d)
        config = {"k": self.k, "d": self.d, "steps": self.steps, "seed": sealed, **self.model,
                  **self.gibbs}
        return cache.Entry("torus/tghmm", config, code=_CODE, build=lambda: _hmm_instance(
            self.k, self.d, self.steps, self.model["p_stay"], self.model["edge_prob"],
            self.model["scale"], sealed, self.gibbs))

    def cache_entries(self, seeds: Sequence[int]) -> list[cache.Entry]:
        return [self.entry(s) for s in seeds]

    @property
    def budget(self) -> Budget:
        return Budget(samples=100 * self.steps)

    def train_view(self, seed: int, budget: Budget) -> TGHMMView:
        check_training_seed(seed, self.id)
        return TGHMMView(cache.get(self.entry(seed))["x"], self.k, budget)

    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        labels = np.asarray(artifact)
        if labels.shape != (self.steps,) or not np.issubdtype(labels.dtype, np.integer):
            raise TypeError(f"TGHMM-v0 expects an integer label array ({self.steps},), got "
                            f"{labels.dtype} {labels.shape}")
        if labels.min() < 0 or labels.max() >= self.k:
            raise ValueError(f"TGHMM-v0: labels must lie in [0, {self.k})")
        inst = cache.get(self.entry(seed))
        states = inst["states"]
        return EvalResult(metrics={"accuracy": matched_accuracy(labels, states, self.k),
                                   "ari": float(adjusted_rand_score(states, labels)),
                                   "rhat": float(inst["rhat"])})
