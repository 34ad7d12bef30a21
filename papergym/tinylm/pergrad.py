"""Per-sample gradient norms with ``torch.func``: ``vmap(grad(loss))`` in chunks.

``per_sample_grad_norms(model, loss_fn, inputs, chunk)`` returns ``||∇_θ loss_fn(model, x_i)||``
for every row ``x_i`` of the tensors in ``inputs`` (each indexed on dim 0), without a Python
loop over samples and without keeping more than ``chunk`` gradients at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import nn
from torch.func import functional_call, grad, vmap


def per_sample_grad_norms(
    model: nn.Module,
    loss_fn: Callable[..., torch.Tensor],
    inputs: Sequence[torch.Tensor],
    chunk: int = 32,
) -> torch.Tensor:
    """``loss_fn(model_call, *row)`` gets one sample (no batch dim); ``model_call(x)`` runs the
    model on a batch of one with the parameters being differentiated."""
    params = {k: p.detach() for k, p in model.named_parameters() if p.requires_grad}
    buffers = {k: b.detach() for k, b in model.named_buffers()}

    def single(p: dict[str, torch.Tensor], *row: torch.Tensor) -> torch.Tensor:
        def call(*args: torch.Tensor, **kwargs: object) -> object:
            return functional_call(model, (p, buffers), args, kwargs)

        return loss_fn(call, *row)

    per_sample = vmap(grad(single), in_dims=(None, *([0] * len(inputs))))
    norms = []
    total = inputs[0].shape[0]
    for start in range(0, total, chunk):
        grads = per_sample(params, *(x[start:start + chunk] for x in inputs))
        squared = sum(g.reshape(g.shape[0], -1).pow(2).sum(-1) for g in grads.values())
        norms.append(squared.sqrt())
    return torch.cat(norms) if norms else torch.zeros(0)
