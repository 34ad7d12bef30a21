"""The prior-fitted network both PFN agents train (nanoTabPFN-style, after the official
``model_pretrain/src/models.py``), its pretraining on the problem's prior, and its in-context
predictor.

Per task: every column is standardized with the train rows' mean and std (NaN -> the train mean),
clipped to +-100 and embedded by Linear(1 -> E); the label by Linear(1 -> E), test rows getting
the train label mean; the label embedding is the label column's token and is also added to every
cell of its row [recon: shortens the path of the in-context signal; at CPU budgets the plain
design stayed at the chance plateau]. Each layer: (1) attention across the columns of a row (label column
included), (2) attention across rows within a column, where every row attends to the train rows
only, (3) a GELU MLP; post-LayerNorm after each. The decoder reads the label token of each test row
(2 logits); the loss is the cross-entropy on the test rows of each prior task. Attention is
``torch.nn.functional.scaled_dot_product_attention``. So a prediction is invariant to the order of
the train rows and of the columns, and a test row's prediction depends on no other test row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from papergym.tinylm.train import TrainConfig, train

MAX_COLUMNS = 32  # per forward; wider inputs average 4 seeded column subsets [recon]
SUBSETS = 4


@dataclass(frozen=True)
class PFNSize:
    embed: int = 32
    layers: int = 2
    heads: int = 2
    mlp: int = 64


class Attention(nn.Module):
    def __init__(self, embed: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(embed, embed)
        self.kv = nn.Linear(embed, 2 * embed)
        self.out = nn.Linear(embed, embed)

    def forward(self, x: torch.Tensor, context: torch.Tensor, key_mask: torch.Tensor | None = None
                ) -> torch.Tensor:
        """x (N, Lq, E) attends to context (N, Lk, E); key_mask (N, Lk) True = attend."""
        N, Lq, E = x.shape
        h = self.heads
        q = self.q(x).view(N, Lq, h, E // h).transpose(1, 2)
        k, v = self.kv(context).view(N, context.shape[1], 2, h, E // h).permute(2, 0, 3, 1, 4)
        mask = None if key_mask is None else key_mask[:, None, None, :]
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.out(y.transpose(1, 2).reshape(N, Lq, E))


class Layer(nn.Module):
    def __init__(self, size: PFNSize) -> None:
        super().__init__()
        E = size.embed
        self.columns = Attention(E, size.heads)
        self.rows = Attention(E, size.heads)
        self.mlp = nn.Sequential(nn.Linear(E, size.mlp), nn.GELU(), nn.Linear(size.mlp, E))
        self.norm1, self.norm2, self.norm3 = nn.LayerNorm(E), nn.LayerNorm(E), nn.LayerNorm(E)

    def forward(self, h: torch.Tensor, n_train: int, column_mask: torch.Tensor | None) -> torch.Tensor:
        B, R, C, E = h.shape  # C includes the label column (last)
        flat = h.reshape(B * R, C, E)
        mask = None if column_mask is None else column_mask[:, None, :].expand(B, R, C).reshape(B * R, C)
        flat = self.norm1(flat + self.columns(flat, flat, mask))  # (1) across columns
        cols = flat.view(B, R, C, E).transpose(1, 2).reshape(B * C, R, E)
        cols = self.norm2(cols + self.rows(cols, cols[:, :n_train]))  # (2) rows attend to train rows
        cols = self.norm3(cols + self.mlp(cols))  # (3)
        return cols.view(B, C, R, E).transpose(1, 2)


class PFN(nn.Module):
    def __init__(self, size: PFNSize) -> None:
        super().__init__()
        self.size = size
        self.features = nn.Linear(1, size.embed)
        self.label = nn.Linear(1, size.embed)
        self.layers = nn.ModuleList([Layer(size) for _ in range(size.layers)])
        self.decoder = nn.Sequential(nn.Linear(size.embed, size.mlp), nn.GELU(), nn.Linear(size.mlp, 2))

    def forward(self, X: torch.Tensor, y_train: torch.Tensor, column_mask: torch.Tensor | None = None
                ) -> torch.Tensor:
        """X (B, R, C) already standardized, the first ``n_train = y_train.shape[1]`` rows the
        context; column_mask (B, C) marks real (not padded) columns. Logits (B, R - n_train, 2)."""
        B, R, C = X.shape
        n_train = y_train.shape[1]
        label = torch.cat([y_train, y_train.mean(1, keepdim=True).expand(B, R - n_train)], dim=1)
        label = self.label(label[..., None, None])  # (B, R, 1, E)
        # [recon] the label embedding is also added to every feature cell of its row, so that
        # attention within a column sees labels from the first layer on (the plain design did
        # not leave the chance plateau within CPU budgets: 600 steps here)
        h = torch.cat([self.features(X[..., None]) + label, label], dim=2)
        mask = None
        if column_mask is not None:
            mask = torch.cat([column_mask, torch.ones(B, 1, dtype=torch.bool)], dim=1)
        for layer in self.layers:
            h = layer(h, n_train, mask)
        return self.decoder(h[:, n_train:, -1])


def standardize(X_train: np.ndarray, X_test: np.ndarray) -> np.ndarray:
    """Rows train then test, standardized with the train rows' statistics; NaN -> train mean."""
    X = np.concatenate([X_train, X_test]).astype(np.float64)
    present = ~np.isnan(X_train)
    counts = np.maximum(present.sum(axis=0), 1)
    mean = np.where(present, X_train, 0.0).sum(axis=0) / counts
    var = np.where(present, (X_train - mean) ** 2, 0.0).sum(axis=0) / counts
    std = np.sqrt(var)
    std = np.where(std > 1e-8, std, 1.0)
    Z = (X - mean) / std
    return np.clip(np.where(np.isfinite(Z), Z, 0.0), -100.0, 100.0)


# ----------------------------------------------------------------------------- pretraining


def _batch(tasks: Sequence[dict], rng: np.random.Generator, max_columns: int, rows: int
           ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Prior tasks -> one padded batch: a shared train size (uniform in [8, rows - 8]), each task
    ``rows`` rows drawn without replacement, at most ``max_columns`` columns (a random subset),
    padded with masked zero columns."""
    rows = min(rows, *(len(t["y"]) for t in tasks))
    n_train = int(rng.integers(8, rows - 7))
    width = max(1, min(max_columns, max(t["X"].shape[1] for t in tasks)))
    X = np.zeros((len(tasks), rows, width))
    mask = np.zeros((len(tasks), width), dtype=bool)
    Y = np.zeros((len(tasks), rows))
    for i, t in enumerate(tasks):
        rows_i = rng.choice(len(t["y"]), size=rows, replace=False)
        cols = np.sort(rng.choice(t["X"].shape[1], size=min(width, t["X"].shape[1]), replace=False))
        x, y = t["X"][rows_i][:, cols], t["y"][rows_i]
        X[i, :, :len(cols)] = standardize(x[:n_train], x[n_train:])
        mask[i, :len(cols)] = True
        Y[i] = y
    as_t = lambda a: torch.as_tensor(a, dtype=torch.float32)  # noqa: E731
    y_test = torch.as_tensor(Y[:, n_train:], dtype=torch.long)
    return as_t(X), as_t(Y[:, :n_train]), y_test, torch.as_tensor(mask)


def pretrain(model: PFN, draw: Callable[[int], Sequence[dict]], steps: int, batch: int, lr: float,
             seed: int, rows: int, max_columns: int) -> list[float]:
    """``steps`` AdamW steps (linear warm-up, cosine decay) on batches of ``batch`` tasks from
    ``draw(step)``; the cross-entropy on each task's test rows."""
    rng = np.random.default_rng([seed, 7])

    def loss_fn(m: nn.Module, step: int) -> torch.Tensor:
        X, y_train, y_test, mask = _batch(draw(step), rng, max_columns, rows)
        logits = m(X, y_train, mask)
        return F.cross_entropy(logits.reshape(-1, 2), y_test.reshape(-1))

    if steps == 0:
        model.eval()
        return []
    cfg = TrainConfig(steps=steps, lr=lr, warmup=min(50, steps // 10), decay="cosine", weight_decay=1e-4)
    return train(model, loss_fn, cfg).losses


# ----------------------------------------------------------------------------- prediction


class InContextPredictor:
    """The artifact: ``predict_proba(X_train, y_train, X_test, cat_mask, own_mask) -> P(y = 1)``
    by one forward pass per column subset (no gradient step)."""

    def __init__(self, model: PFN, seed: int) -> None:
        self.model = model.eval()
        self.seed = int(seed)

    @torch.no_grad()
    def __call__(self, X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray,
                 cat_mask: np.ndarray | None = None, own_mask: np.ndarray | None = None) -> np.ndarray:
        X_train, X_test = np.asarray(X_train, float), np.asarray(X_test, float)
        y = torch.as_tensor(np.asarray(y_train, float), dtype=torch.float32)[None]
        Z = standardize(X_train, X_test)
        d = Z.shape[1]
        if d <= MAX_COLUMNS:
            subsets = [np.arange(d)]
        else:
            rng = np.random.default_rng([self.seed, d])
            subsets = [np.sort(rng.choice(d, size=MAX_COLUMNS, replace=False)) for _ in range(SUBSETS)]
        probs = []
        for cols in subsets:
            X = torch.as_tensor(Z[:, cols] if d else np.zeros((len(Z), 1)), dtype=torch.float32)[None]
            probs.append(torch.softmax(self.model(X, y), dim=-1)[0, :, 1].double().numpy())
        return np.mean(probs, axis=0)


# ----------------------------------------------------------------------------- the agents' shared steps


def build(size: PFNSize, seed: int) -> PFN:
    """A PFN with weights drawn from ``seed`` (the global torch generator is restored after)."""
    with torch.random.fork_rng():
        torch.manual_seed(int(seed))
        return PFN(size)


def prior_draw(view, batch: int, relational_share: float) -> Callable[[int], list[dict]]:
    """Batches from the view's prior: ``relational_share`` of each batch relational, the rest
    single-table (0: the single-table prior only)."""
    n_rel = int(round(batch * relational_share))

    def draw(step: int) -> list[dict]:
        tasks = view.sample_prior(n_rel, "relational") if n_rel else []
        return list(tasks) + (list(view.sample_prior(batch - n_rel, "single")) if batch > n_rel else [])
    return draw
