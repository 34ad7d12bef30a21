"""The trivial surrogate: whatever the shape, predict the training-set mean of every target (C_d,
surface C_p, drag build-up b, velocity field u). Its held-out C_d R^2 is about 0 (a little below:
the test shapes' mean is not the training mean), the floor that a learned surrogate must clear.

It is a ``DragSurrogateNet`` (the artifact format the problem scores) whose output layers are
zero, so the normalized outputs are 0 and the de-normalized ones are the training means; the
points still pass through the network, so C_d is differentiable in them (with a zero gradient).
"""

from __future__ import annotations

import torch

from papergym import Agent
from papergym.agents.aero._surrogate import normalization
from papergym.envs.aero.surrogate import DragSurrogateNet, SurrogateEnsemble

SURROGATE = ("papergym/DragSurrogate-v1",)  # v0 refuses a zero gradient


def mean_predictor(data: dict) -> DragSurrogateNet:
    net = DragSurrogateNet(width=8, slices=2, layers=1, heads=1, gated=False)
    net.set_normalization(normalization(data))
    last_layers = [net.experts[0][-1], net.cp_head, net.b_head[-1], net.u_head[-1]]
    with torch.no_grad():
        for layer in last_layers:
            layer.weight.zero_()
            layer.bias.zero_()
    return net.eval()


class MeanSurrogate(Agent):
    """Predict the training means (no learning): the trivial agent of the surrogate problem."""

    id, family, role, paper, problems = "mean_surrogate", "aero", "baseline", "unidrag2026", SURROGATE

    def solve(self, view, budget, seed):
        return SurrogateEnsemble([mean_predictor(view.dataset())])
