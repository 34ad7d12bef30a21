"""Flat-parameter models with exact loss and gradient (numpy, float64).

Every model maps one flat parameter vector ``theta`` (shape ``(p,)``) and a batch of rows
to a weighted mean loss and its gradient. Weights let the same code compute a minibatch
mean (weights 1/B) and the federated objective F = (1/N) sum_i f_i with uniform client
weights (each row of client i weighs 1/(N n_i)).

- :class:`LeastSquares`: f(x) = sum_s w_s (a_s^T x - y_s)^2 / 2; p = d.
- :class:`SoftmaxRegression`: multinomial logistic regression with bias and an L2 term
  (l2/2)||theta||^2 on all parameters [recon: 1e-4]; p = (d + 1) * classes.
- :class:`MLP`: d-h-classes with ReLU, cross-entropy; for digits p = 64*64+64+64*10+10 = 4810.
"""

from __future__ import annotations

import numpy as np


def _softmax_ce(logits: np.ndarray, labels: np.ndarray, weights: np.ndarray):
    """Weighted cross-entropy and its gradient with respect to the logits."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    exp = np.exp(shifted)
    denom = exp.sum(axis=1, keepdims=True)
    log_probs = shifted - np.log(denom)
    rows = np.arange(len(labels))
    loss = -float(weights @ log_probs[rows, labels])
    dlogits = exp / denom
    dlogits[rows, labels] -= 1.0
    dlogits *= weights[:, None]
    return loss, dlogits


class Model:
    """Interface of a flat-parameter model."""

    name: str = ""
    p: int = 0
    classification: bool = True

    def init(self, rng: np.random.Generator) -> np.ndarray:
        raise NotImplementedError

    def loss_grad(self, theta, X, y, weights=None) -> tuple[float, np.ndarray]:
        raise NotImplementedError

    def loss(self, theta, X, y, weights=None) -> float:
        return self.loss_grad(theta, X, y, weights)[0]

    def predict(self, theta, X) -> np.ndarray:
        raise NotImplementedError

    def accuracy(self, theta, X, y) -> float:
        return float(np.mean(self.predict(theta, X) == y))

    def logits(self, theta, X) -> np.ndarray:
        raise NotImplementedError

    def loss_and_accuracy(self, theta, X, y) -> tuple[float, float]:
        """Mean cross-entropy (without the L2 term) and accuracy from one forward pass."""
        logits = self.logits(theta, X)
        shifted = logits - logits.max(axis=1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
        loss = -float(np.mean(log_probs[np.arange(len(y)), y]))
        return loss, float(np.mean(np.argmax(logits, axis=1) == y))

    @staticmethod
    def _weights(n: int, weights) -> np.ndarray:
        return np.full(n, 1.0 / n) if weights is None else weights


class LeastSquares(Model):
    name = "least_squares"
    classification = False

    def __init__(self, dim: int) -> None:
        self.p = int(dim)

    def init(self, rng: np.random.Generator) -> np.ndarray:
        return rng.standard_normal(self.p)

    def loss_grad(self, theta, X, y, weights=None):
        w = self._weights(len(y), weights)
        residual = X @ theta - y
        loss = 0.5 * float(w @ residual**2)
        return loss, X.T @ (w * residual)

    def predict(self, theta, X):
        return X @ theta


class SoftmaxRegression(Model):
    name = "softmax_regression"

    def __init__(self, dim: int, classes: int, l2: float = 1e-4) -> None:
        self.dim, self.classes, self.l2 = int(dim), int(classes), float(l2)
        self.p = (self.dim + 1) * self.classes

    def _unpack(self, theta):
        W = theta[: self.dim * self.classes].reshape(self.dim, self.classes)
        return W, theta[self.dim * self.classes:]

    def init(self, rng: np.random.Generator) -> np.ndarray:
        return 0.01 * rng.standard_normal(self.p)

    def loss_grad(self, theta, X, y, weights=None):
        w = self._weights(len(y), weights)
        W, b = self._unpack(theta)
        loss, dlogits = _softmax_ce(X @ W + b, y, w)
        grad = np.concatenate([(X.T @ dlogits).ravel(), dlogits.sum(axis=0)])
        loss += 0.5 * self.l2 * float(theta @ theta)
        return loss, grad + self.l2 * theta

    def logits(self, theta, X):
        W, b = self._unpack(theta)
        return X @ W + b

    def predict(self, theta, X):
        return np.argmax(self.logits(theta, X), axis=1)


class MLP(Model):
    name = "mlp"

    def __init__(self, dim: int, hidden: int, classes: int) -> None:
        self.dim, self.hidden, self.classes = int(dim), int(hidden), int(classes)
        self._sizes = [dim * hidden, hidden, hidden * classes, classes]
        self._offsets = np.cumsum([0, *self._sizes])
        self.p = int(self._offsets[-1])

    def _unpack(self, theta):
        o = self._offsets
        return (
            theta[o[0]:o[1]].reshape(self.dim, self.hidden),
            theta[o[1]:o[2]],
            theta[o[2]:o[3]].reshape(self.hidden, self.classes),
            theta[o[3]:o[4]],
        )

    def init(self, rng: np.random.Generator) -> np.ndarray:
        # PyTorch's nn.Linear default: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weights and biases.
        bound_in, bound_hidden = 1 / np.sqrt(self.dim), 1 / np.sqrt(self.hidden)
        return np.concatenate([
            rng.uniform(-bound_in, bound_in, self._sizes[0] + self._sizes[1]),
            rng.uniform(-bound_hidden, bound_hidden, self._sizes[2] + self._sizes[3]),
        ])

    def loss_grad(self, theta, X, y, weights=None):
        w = self._weights(len(y), weights)
        W1, b1, W2, b2 = self._unpack(theta)
        pre = X @ W1 + b1
        hidden = np.maximum(pre, 0.0)
        loss, dlogits = _softmax_ce(hidden @ W2 + b2, y, w)
        dhidden = dlogits @ W2.T
        dhidden[pre <= 0] = 0.0
        grad = np.concatenate([
            (X.T @ dhidden).ravel(), dhidden.sum(axis=0),
            (hidden.T @ dlogits).ravel(), dlogits.sum(axis=0),
        ])
        return loss, grad

    def logits(self, theta, X):
        W1, b1, W2, b2 = self._unpack(theta)
        return np.maximum(X @ W1 + b1, 0.0) @ W2 + b2

    def predict(self, theta, X):
        return np.argmax(self.logits(theta, X), axis=1)
