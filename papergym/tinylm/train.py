"""A deterministic training loop: AdamW, linear warm-up, optional cosine decay, gradient-norm
clipping and an exponential moving average of the weights (with the usual warm-up of its decay,
min(d, (1 + step) / (10 + step)), so a short run's average is not dominated by the initialization).

The caller supplies ``loss_fn(model, step) -> scalar loss``, which draws its own batch from its
own seeded generator, so the data order is a function of the caller's seed and the loop adds
no randomness: two runs with one seed give bit-identical weights (one math thread).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import torch
from torch import nn


@dataclass(frozen=True)
class TrainConfig:
    steps: int
    lr: float = 3e-4
    warmup: int = 0  # linear from lr/warmup to lr over the first `warmup` steps
    decay: str = "constant"  # "constant" | "cosine" (to 0 at the last step)
    weight_decay: float = 0.0
    betas: tuple[float, float] = (0.9, 0.999)
    clip: float | None = 1.0  # max global gradient norm; None: no clipping
    ema: float | None = None  # EMA decay of the weights; None: no EMA
    ema_warmup: bool = True  # decay min(ema, (1 + step) / (10 + step)): early weights fade fast

    def __post_init__(self) -> None:
        if self.steps < 0 or self.warmup < 0 or self.lr <= 0:
            raise ValueError(f"need steps >= 0, warmup >= 0, lr > 0; got {self}")
        if self.decay not in ("constant", "cosine"):
            raise ValueError(f"decay must be 'constant' or 'cosine', got {self.decay!r}")
        if self.ema is not None and not 0.0 <= self.ema < 1.0:
            raise ValueError(f"ema must be in [0, 1), got {self.ema}")

    def lr_at(self, step: int) -> float:
        if self.warmup and step < self.warmup:
            return self.lr * (step + 1) / self.warmup
        if self.decay == "cosine":
            span = max(1, self.steps - self.warmup)
            return self.lr * 0.5 * (1.0 + math.cos(math.pi * min(1.0, (step - self.warmup) / span)))
        return self.lr


@dataclass
class TrainResult:
    model: nn.Module  # the trained weights (in place)
    ema: nn.Module | None  # the moving average (a copy), when cfg.ema is set
    losses: list[float] = field(default_factory=list)

    @property
    def final(self) -> nn.Module:
        """The weights to use: the EMA when there is one."""
        return self.ema if self.ema is not None else self.model


def train(model: nn.Module, loss_fn: Callable[[nn.Module, int], torch.Tensor], cfg: TrainConfig,
          parameters: Iterable[nn.Parameter] | None = None) -> TrainResult:
    """Run ``cfg.steps`` optimizer steps on ``parameters`` (default: every parameter of
    ``model`` that requires grad); the rest stay frozen."""
    params = [p for p in (model.parameters() if parameters is None else parameters) if p.requires_grad]
    if not params:
        raise ValueError("no trainable parameters")
    opt = torch.optim.AdamW(params, lr=cfg.lr, betas=cfg.betas, weight_decay=cfg.weight_decay)
    ema = None
    if cfg.ema is not None:
        ema = copy.deepcopy(model).eval()
        ema.requires_grad_(False)
    pairs = list(zip(model.state_dict().values(), ema.state_dict().values())) if ema is not None else []
    losses = []
    model.train()
    for step in range(cfg.steps):
        for group in opt.param_groups:
            group["lr"] = cfg.lr_at(step)
        loss = loss_fn(model, step)
        if not torch.isfinite(loss):
            raise FloatingPointError(f"non-finite loss {loss.item()} at step {step}")
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if cfg.clip is not None:
            torch.nn.utils.clip_grad_norm_(params, cfg.clip)
        opt.step()
        losses.append(float(loss.detach()))
        if pairs:
            decay = min(cfg.ema, (1 + step) / (10 + step)) if cfg.ema_warmup else cfg.ema
        with torch.no_grad():
            for live, avg in pairs:  # ema <- d * ema + (1 - d) * live (buffers copied)
                if avg.is_floating_point():
                    avg.mul_(decay).add_(live, alpha=1.0 - decay)
                else:
                    avg.copy_(live)
    model.eval()
    return TrainResult(model=model, ema=ema, losses=losses)
