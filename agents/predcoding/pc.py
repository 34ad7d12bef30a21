"""Standard predictive coding (Rao & Ballard 1999; Whittington & Bogacz 2017): forward
initialization, T steps of (Nesterov) SGD on the free latents with the label clamped and uniform
precision, then one AdamW step on each layer's local loss ½||h_l − u_l(h_{l−1})||² at the settled
latents. No autograd: the relaxation and the weight updates are the hand-written local rules of
``papergym.envs.predcoding.core``.

The latent step is tuned inside the relaxation's stable region. SGD with Nesterov momentum mu
on a quadratic of curvature lam is stable iff lr_h * lam < 2 (1 + mu) / (1 + 2 mu)
(:func:`stable_lr_h`); a PC energy is not a quadratic, but its stability edge follows this bound
with an effective curvature (:data:`CURVATURE`) measured at the forward initialization: the
largest step at which 100 relaxation steps on a batch of 64 digits do not raise the energy, by
bisection, for MLPs of L = 3, 9, 17 and a 6-block residual net (width 64, three init seeds,
mu in {0, 0.5, 0.9}), gives lam = 7.2-8.9 under uniform precision, 1.8-2.5 under the S
schedule, and 2.9-4.2 under S on a residual net without auxiliary neurons (the skip reaches the
block's end at full precision). Each draw's latent step is a share of its own bound
(``tuning_candidates``), so no candidate diverges by construction.

:class:`PCLearner` is the one PC training loop; standard PC, iPC, DeepPC and its ablations set
its four hooks (``schedule``, ``weight_update``, ``aux``, ``incremental``) and nothing else.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from papergym.agents.predcoding._common import LR_RANGE, Learner, LearnerConfig
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

# Effective curvature of the latent energy (see the module docstring), rounded up over the
# measurements: the stable region of a PC agent is lr_h < stable_lr_h(momentum, its curvature).
CURVATURE = {"uniform": 9.0, "S": 2.4, "S_no_aux": 4.2}
STEP_SHARE = (0.2, 0.95)  # a draw's latent step, as a share of the stable step at its momentum


def stable_lr_h(momentum: float, curvature: float) -> float:
    """The largest stable step of SGD with Nesterov momentum (PyTorch's form) on a quadratic of
    curvature ``curvature``: 2 (1 + mu) / ((1 + 2 mu) lam) (heavy ball would allow 2 (1 + mu) / lam)."""
    if not (0 <= momentum < 1 and curvature > 0):
        raise ValueError(f"momentum must be in [0, 1) and curvature > 0, got {momentum}, {curvature}")
    return 2 * (1 + momentum) / ((1 + 2 * momentum) * curvature)


class PCConfig(LearnerConfig):
    # latent SGD step and Nesterov momentum; the code's example config (ResNet10, CIFAR-10) has
    # 0.56 and 0.9, at the edge of the S schedule's stable region here (0.56 at momentum 0.9)
    lr_h: float = 0.6
    momentum: float = 0.5
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
        """The spec's space; every PC agent draws its own candidates from it. ``lr_h`` is drawn
        as a share of the stable step at the drawn momentum (``tuning_candidates`` maps it)."""
        space = {"lr": LogUniform(*LR_RANGE), "lr_h": Uniform(*STEP_SHARE),
                 "momentum": Uniform(0.0, 0.9), "extra_steps": Choice((0, 2, 4, 6))}
        if self.schedule != "uniform":
            space["alpha"] = Choice((1e-3, 1e-2))
        return space

    def curvature(self, arch: Architecture) -> float:
        """The effective curvature of this agent's relaxation on ``arch`` (:data:`CURVATURE`)."""
        if self.schedule == "uniform":
            return CURVATURE["uniform"]
        return CURVATURE["S_no_aux"] if arch.blocks and not self.aux else CURVATURE["S"]

    def tuning_candidates(self, budget: int, view: Any = None) -> list[Any]:
        """The defaults, then the agent's own draws with each latent step mapped from its share
        to lr_h = share x stable_lr_h(momentum, curvature): inside the stable region."""
        default, *drawn = super().tuning_candidates(budget, view)
        curvature = self.curvature(view.arch)
        return [default] + [c.model_copy(update={"lr_h": c.lr_h * stable_lr_h(c.momentum, curvature)})
                            for c in drawn]

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
    # uniform precision has about 4x the S schedule's curvature: the code's step (0.56 with
    # momentum) diverges here; 0.2 without momentum is 0.9 of the stable step (0.22)
    lr_h: float = 0.2
    momentum: float = 0.0


class PC(PCLearner):
    """Standard PC: uniform precision, settled-state weight update, no auxiliary neurons."""

    id: ClassVar[str] = "pc"
    role: ClassVar[str] = "baseline"
    Config: ClassVar[type] = UniformPCConfig
