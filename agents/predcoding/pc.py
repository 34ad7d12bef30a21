"""Standard predictive coding (Rao & Ballard 1999; Whittington & Bogacz 2017): forward
initialization, T steps of (Nesterov) SGD on the free latents with the label clamped and uniform
precision, then one AdamW step on each layer's local loss ½||h_l − u_l(h_{l−1})||² at the settled
latents. No autograd: the relaxation and the weight updates are the hand-written local rules of
``papergym.envs.predcoding.core``.

:class:`PCLearner` is the one PC training loop; standard PC, iPC, DeepPC and its ablations set
its four hooks (``schedule``, ``weight_update``, ``aux``, ``incremental``) and nothing else.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from papergym.agents.predcoding._common import Learner, LearnerConfig
from papergym.envs.predcoding.core import (
    Architecture,
    InferenceConfig,
    Params,
    inference_step,
    init_state,
    one_hot,
    pc_weight_grads,
    precisions,
    relax,
)
from papergym.tuning import Choice, LogUniform, Uniform


class PCConfig(LearnerConfig):
    lr_h: float = 0.6  # latent SGD step [code: 0.56-0.80]
    momentum: float = 0.5  # Nesterov [code: 0.1-0.9]
    extra_steps: int = 2  # T = L + extra_steps (T >= the number of energy layers)
    alpha: float = 1e-3  # DeepPC's low precision [code]
    decay: float = 1.0  # schedule "D" only


class PCLearner(Learner):
    """One PC training loop; variants differ only in the four hooks below."""

    Config: ClassVar[type] = PCConfig
    schedule: ClassVar[str] = "uniform"  # uniform | S | D
    weight_update: ClassVar[str] = "settled"  # settled | fu
    aux: ClassVar[bool] = False  # auxiliary identity latents on residual skips
    incremental: ClassVar[bool] = False  # iPC: a weight step at every inference step

    def space(self, arch: Architecture) -> dict[str, Any]:
        """The spec's space; every PC agent draws its own candidates from it."""
        space = {"lr": LogUniform(1e-4, 3e-3), "lr_h": Uniform(0.05, 1.0),
                 "momentum": Uniform(0.0, 0.9), "extra_steps": Choice((0, 2, 4))}
        if self.schedule != "uniform":
            space["alpha"] = Choice((1e-3, 1e-2))
        return space

    def inference(self, cfg: Any, arch: Architecture) -> InferenceConfig:
        return InferenceConfig(T=arch.depth + int(cfg.extra_steps), lr_h=float(cfg.lr_h),
                               momentum=float(cfg.momentum), schedule=self.schedule,
                               alpha=float(cfg.alpha), decay=float(cfg.decay),
                               aux=self.aux and arch.blocks > 0, weight_update=self.weight_update)

    def steps_per_batch(self, cfg: Any, arch: Architecture) -> int:
        return arch.depth + int(cfg.extra_steps) if self.incremental else 1

    def train_batch(self, params: Params, arch: Architecture, x: np.ndarray, y: np.ndarray,
                    cfg: Any, step_lr: Any) -> None:
        opt, next_lr = step_lr
        inference = self.inference(cfg, arch)
        state = init_state(params, arch, x, one_hot(y, dtype=x.dtype), aux=inference.aux)
        if not self.incremental:
            relax(params, arch, state, inference)
            gW, gb = pc_weight_grads(params, arch, state, self.weight_update)
            opt.step([*gW, *gb], next_lr())
            return
        # iPC: every inference step also takes a weight step on the current latents
        for t in range(inference.steps(arch)):
            pi = precisions(inference.schedule, arch.depth, t, inference.alpha, inference.decay)
            gW, gb = pc_weight_grads(params, arch, state, self.weight_update)
            inference_step(params, arch, state, pi, inference)
            opt.step([*gW, *gb], next_lr())


class UniformPCConfig(PCConfig):
    lr_h: float = 0.3  # uniform precision relaxes stably with a smaller step and no momentum
    momentum: float = 0.0


class PC(PCLearner):
    """Standard PC: uniform precision, settled-state weight update, no auxiliary neurons."""

    id: ClassVar[str] = "pc"
    role: ClassVar[str] = "baseline"
    Config: ClassVar[type] = UniformPCConfig
