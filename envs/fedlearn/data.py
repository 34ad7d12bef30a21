"""Federated instance generators: heterogeneous client datasets with a held-out split.

Three generators, selected by the env's ``data=`` argument (part of the trial key):

- ``logreg_synth`` — FedProx's synthetic(alpha, beta) (Li et al. 2020): 60 features,
  10 classes; client k draws u_k ~ N(0, alpha), W_k, b_k ~ N(u_k, 1), B_k ~ N(0, beta),
  v_k ~ N(B_k, 1), x ~ N(v_k, diag(j^-1.2)), y = argmax(W_k x + b_k). Client sizes follow
  a power law (20 + lognormal(4, 1.5), capped at 1000) [recon]; per-client 80/20
  train/test, global test = union. Model: softmax regression, p = 610, L2 1e-4.
- ``lsq_synth`` [recon] — d = 50 least squares; client i has rows a ~ N(mu_i, Sigma_kappa)
  (Sigma_kappa diagonal with eigenvalues geometric from 1 to 1/kappa),
  targets y = a^T (x_true + zeta xi_i) + 0.1 eps with xi_i ~ N(0, I/d); 100 rows each.
  mu_i ~ N(0, I/d) (the spec says N(0, I); scaled so that the Hessian of F stays close to
  Sigma_kappa and kappa is roughly F's condition number, not ~d kappa).
  The optimum of F = (1/N) sum_i f_i and F* are solved exactly (float64 normal equations).
- ``digits_dirichlet`` — scikit-learn's ``load_digits`` / 16 (read from the file it
  ships); one fixed stratified 75/25 train/test split (independent of the trial seed, so tuning instances
  never see an evaluation image); the training split is partitioned per class with
  client proportions ~ Dir(alpha 1_N), redrawn until every client has >= 2 samples;
  alpha = inf (or "iid") is a uniform random partition. Model: MLP 64-64-10 (ReLU).

``validation=True`` (tuning mode) holds out 15% of each client's training rows; the
held-out union replaces the test split, which is then not loaded into the instance at all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from papergym.datasets import digits_split
from papergym.envs.fedlearn.models import MLP, LeastSquares, Model, SoftmaxRegression

DATASETS = ("logreg_synth", "lsq_synth", "digits_dirichlet")
VALIDATION_FRACTION = 0.15


@dataclass
class FedInstance:
    """One federated problem: per-client training rows, a held-out split, a model."""

    name: str
    model: Model
    client_X: list[np.ndarray]
    client_y: list[np.ndarray]
    eval_X: np.ndarray | None = None  # global test split (validation union in tuning mode)
    eval_y: np.ndarray | None = None
    f_star: float | None = None  # least squares: exact optimum of F
    theta_star: np.ndarray | None = None
    pooled: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = len(self.client_X)
        weights = [np.full(len(y), 1.0 / (n * len(y))) for y in self.client_y]
        self.pooled = {
            "X": np.concatenate(self.client_X),
            "y": np.concatenate(self.client_y),
            "w": np.concatenate(weights),  # uniform client weights: F = (1/N) sum_i f_i
        }

    @property
    def num_clients(self) -> int:
        return len(self.client_X)

    def objective(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """F(theta) and grad F(theta), F = (1/N) sum_i f_i (the objective of the theory)."""
        P = self.pooled
        return self.model.loss_grad(theta, P["X"], P["y"], P["w"])


def parse_alpha(alpha) -> float:
    """Dirichlet concentration: a positive number, or inf / 'iid' for a uniform split."""
    if isinstance(alpha, str):
        if alpha.lower() in ("iid", "inf", "infinity"):
            return math.inf
        alpha = float(alpha)
    alpha = float(alpha)
    if not alpha > 0:
        raise ValueError(f"alpha must be positive or 'iid', got {alpha!r}")
    return alpha


def dirichlet_partition(labels: np.ndarray, num_clients: int, alpha, rng: np.random.Generator,
                        min_size: int = 2, max_draws: int = 1000) -> list[np.ndarray]:
    """Per-class Dirichlet split of ``labels``' indices (each index exactly once)."""
    alpha = parse_alpha(alpha)
    n = len(labels)
    if n < min_size * num_clients:
        raise ValueError(f"{n} samples cannot give {num_clients} clients {min_size} each")
    if math.isinf(alpha):
        return [np.sort(part) for part in np.array_split(rng.permutation(n), num_clients)]
    classes = np.unique(labels)
    for _ in range(max_draws):
        parts: list[list[np.ndarray]] = [[] for _ in range(num_clients)]
        for c in classes:
            idx = rng.permutation(np.flatnonzero(labels == c))
            shares = rng.dirichlet(np.full(num_clients, alpha))
            cuts = (np.cumsum(shares)[:-1] * len(idx)).astype(int)
            for client, chunk in enumerate(np.split(idx, cuts)):
                parts[client].append(chunk)
        merged = [np.sort(np.concatenate(p)) for p in parts]
        if min(len(m) for m in merged) >= min_size:
            return merged
    raise RuntimeError(f"no Dirichlet({alpha}) split with >= {min_size} samples per client")


def _split_rows(rng: np.random.Generator, n: int, fraction: float) -> tuple[np.ndarray, np.ndarray]:
    """Random (kept, held-out) index split holding out floor(fraction * n) rows."""
    order = rng.permutation(n)
    held = int(math.floor(fraction * n))
    return np.sort(order[held:]), np.sort(order[:held])


def _hold_out_validation(client_X, client_y, rng):
    kept_X, kept_y, val_X, val_y = [], [], [], []
    for X, y in zip(client_X, client_y):
        keep, held = _split_rows(rng, len(y), VALIDATION_FRACTION)
        kept_X.append(X[keep])
        kept_y.append(y[keep])
        val_X.append(X[held])
        val_y.append(y[held])
    return kept_X, kept_y, np.concatenate(val_X), np.concatenate(val_y)


def make_digits_dirichlet(rng, num_clients: int, alpha, validation: bool) -> FedInstance:
    X_train, y_train, X_test, y_test = digits_split()
    parts = dirichlet_partition(y_train, num_clients, alpha, rng)
    client_X = [X_train[p] for p in parts]
    client_y = [y_train[p] for p in parts]
    model = MLP(64, 64, 10)
    if validation:
        client_X, client_y, val_X, val_y = _hold_out_validation(client_X, client_y, rng)
        return FedInstance("digits_dirichlet", model, client_X, client_y, val_X, val_y)
    return FedInstance("digits_dirichlet", model, client_X, client_y, X_test, y_test)


def make_logreg_synth(rng, num_clients: int, synth_alpha: float, synth_beta: float,
                      validation: bool, dim: int = 60, classes: int = 10) -> FedInstance:
    covariance_diag = np.arange(1, dim + 1, dtype=np.float64) ** -1.2
    client_X, client_y, test_X, test_y = [], [], [], []
    for _ in range(num_clients):
        size = 20 + min(int(rng.lognormal(4.0, 1.5)), 980)
        u = rng.normal(0.0, math.sqrt(synth_alpha))
        W = rng.normal(u, 1.0, (dim, classes))
        b = rng.normal(u, 1.0, classes)
        B = rng.normal(0.0, math.sqrt(synth_beta))
        v = rng.normal(B, 1.0, dim)
        X = v + rng.standard_normal((size, dim)) * np.sqrt(covariance_diag)
        y = np.argmax(X @ W + b, axis=1).astype(np.int64)
        train, test = _split_rows(rng, size, 0.2)
        client_X.append(X[train])
        client_y.append(y[train])
        test_X.append(X[test])
        test_y.append(y[test])
    model = SoftmaxRegression(dim, classes, l2=1e-4)
    if validation:
        client_X, client_y, val_X, val_y = _hold_out_validation(client_X, client_y, rng)
        return FedInstance("logreg_synth", model, client_X, client_y, val_X, val_y)
    return FedInstance("logreg_synth", model, client_X, client_y,
                       np.concatenate(test_X), np.concatenate(test_y))


def make_lsq_synth(rng, num_clients: int, zeta: float, kappa: float, dim: int = 50,
                   rows: int = 100) -> FedInstance:
    scales = np.sqrt(np.geomspace(1.0, 1.0 / kappa, dim))  # Sigma_kappa = diag(scales^2)
    x_true = rng.standard_normal(dim)
    client_X, client_y = [], []
    for _ in range(num_clients):
        mu = rng.standard_normal(dim) / math.sqrt(dim)
        A = mu + rng.standard_normal((rows, dim)) * scales
        xi = rng.standard_normal(dim) / math.sqrt(dim)
        y = A @ (x_true + zeta * xi) + 0.1 * rng.standard_normal(rows)
        client_X.append(A)
        client_y.append(y)
    model = LeastSquares(dim)
    instance = FedInstance("lsq_synth", model, client_X, client_y)
    # exact optimum of F = (1/N) sum_i (1/2n_i)||A_i x - y_i||^2 (normal equations, float64)
    P = instance.pooled
    hessian = (P["X"] * P["w"][:, None]).T @ P["X"]
    rhs = P["X"].T @ (P["w"] * P["y"])
    theta_star = np.linalg.solve(hessian, rhs)
    # one refinement step removes the solve's rounding error
    theta_star -= np.linalg.solve(hessian, hessian @ theta_star - rhs)
    instance.theta_star = theta_star
    instance.f_star = model.loss(theta_star, P["X"], P["y"], P["w"])
    return instance


def make_instance(data: str, rng: np.random.Generator, num_clients: int, *, alpha=0.5,
                  synth_alpha: float = 0.5, synth_beta: float = 0.5, zeta: float = 1.0,
                  kappa: float = 10.0, validation: bool = False) -> FedInstance:
    if data == "digits_dirichlet":
        return make_digits_dirichlet(rng, num_clients, alpha, validation)
    if data == "logreg_synth":
        return make_logreg_synth(rng, num_clients, synth_alpha, synth_beta, validation)
    if data == "lsq_synth":
        return make_lsq_synth(rng, num_clients, zeta, kappa)
    raise ValueError(f"unknown data {data!r}; choose one of {', '.join(DATASETS)}")


def label_entropy(labels: np.ndarray, classes: int = 10) -> float:
    counts = np.bincount(labels, minlength=classes).astype(np.float64)
    probs = counts[counts > 0] / counts.sum()
    return float(-(probs * np.log(probs)).sum())


def reference_accuracy(instance: FedInstance, seed: int) -> float:
    """Test accuracy of a centralized model trained on the pooled training rows.

    Softmax regression: L-BFGS to convergence. MLP: Adam (lr 1e-3, batch 32) for 300
    epochs from a seeded init. Pooled (per-sample) weighting, as a centralized trainer.
    """
    model = instance.model
    X, y = instance.pooled["X"], instance.pooled["y"]
    rng = np.random.default_rng(seed)
    theta = model.init(rng)
    if isinstance(model, SoftmaxRegression):
        from scipy.optimize import minimize

        result = minimize(lambda t: model.loss_grad(t, X, y), theta, jac=True,
                          method="L-BFGS-B", options={"maxiter": 300, "gtol": 1e-8})
        theta = result.x
    else:
        m, v = np.zeros_like(theta), np.zeros_like(theta)
        step = 0
        for _ in range(300):
            order = rng.permutation(len(y))
            for start in range(0, len(y), 32):
                batch = order[start:start + 32]
                _, g = model.loss_grad(theta, X[batch], y[batch])
                step += 1
                m = 0.9 * m + 0.1 * g
                v = 0.999 * v + 0.001 * g * g
                theta -= 1e-3 * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
    return model.accuracy(theta, instance.eval_X, instance.eval_y)


@lru_cache(maxsize=1)
def digits_reference_accuracy() -> float:
    """The digits reference is partition-independent: one pooled model on the fixed split."""
    X_train, y_train, X_test, y_test = digits_split()
    instance = FedInstance("digits", MLP(64, 64, 10), [X_train], [y_train], X_test, y_test)
    return reference_accuracy(instance, seed=0)
