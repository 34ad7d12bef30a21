"""Backprop on the same network and output loss as PC (½||y − u_L||², AdamW, warm-up + cosine),
and a cross-entropy backprop reference (softmax cross-entropy on the same outputs). The gradient
is the chain rule written out (``core.backprop_errors``), checked against autograd in the tests."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from papergym.agents.predcoding._common import LR_RANGE, Learner
from papergym.envs.predcoding.core import (
    Architecture,
    InferenceConfig,
    Params,
    backprop_errors,
    forward,
    one_hot,
    weight_grads,
)
from papergym.tuning import LogUniform


class BP(Learner):
    id: ClassVar[str] = "bp"
    role: ClassVar[str] = "baseline"
    loss: ClassVar[str] = "mse"

    def space(self, arch: Architecture) -> dict[str, Any]:
        return {"lr": LogUniform(*LR_RANGE), "weight_decay": LogUniform(1e-6, 1e-3)}

    def inference(self, cfg: Any, arch: Architecture) -> InferenceConfig:
        return InferenceConfig(weight_update="backprop")

    def train_batch(self, params: Params, arch: Architecture, x: np.ndarray, y: np.ndarray,
                    cfg: Any, step_lr: Any) -> None:
        opt, next_lr = step_lr
        h0 = forward(params, arch, x)
        target = one_hot(y, dtype=x.dtype)
        if self.loss == "mse":  # -dLoss/du_L of ½||y − u_L||²
            out_err = target - h0[-1]
        else:  # softmax cross-entropy
            z = h0[-1] - h0[-1].max(axis=1, keepdims=True)
            p = np.exp(z)
            out_err = target - p / p.sum(axis=1, keepdims=True)
        gW, gb = weight_grads(params, arch, h0[:-1], backprop_errors(params, arch, h0, out_err))
        opt.step([*gW, *gb], next_lr())


class BPCrossEntropy(BP):
    id: ClassVar[str] = "bp_ce"
    loss: ClassVar[str] = "ce"
