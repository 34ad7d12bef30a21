"""Low-rank adapters (Hu et al. 2022, "LoRA"): y = W x + b + (α / r) B A x with W, b frozen,
A (r x in) Kaiming-uniform with a = √5 and B (out x r) zero, as the PEFT library initializes them,
so an adapted model starts equal to its base.

A fused projection (one ``nn.Linear`` computing q, k and v) takes ``splits`` = 3: one adapter per
equal slice of its output, as separate adapters on separate W_q, W_k, W_v would be.

``add_lora(model, {name: splits}, rank, alpha)`` wraps every ``nn.Linear`` child of that name and
returns the adapters' parameters (the only ones left trainable); ``merge_lora(model)`` folds every
adapter back into a plain ``nn.Linear`` (W + (α / r) B A), PEFT's ``merge_and_unload``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import torch
from torch import nn


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, rank: int, alpha: float, splits: int = 1) -> None:
        super().__init__()
        if rank < 1 or splits < 1 or base.out_features % splits:
            raise ValueError(f"need rank >= 1 and splits >= 1 dividing {base.out_features} outputs, "
                             f"got rank {rank}, splits {splits}")
        self.base, self.scale, self.splits = base, alpha / rank, splits
        base.requires_grad_(False)
        self.lora_a = nn.Parameter(torch.empty(splits, rank, base.in_features))
        self.lora_b = nn.Parameter(torch.zeros(splits, base.out_features // splits, rank))
        for a in self.lora_a.data:
            nn.init.kaiming_uniform_(a, a=math.sqrt(5))  # each (rank x in), as PEFT's lora_A

    def delta(self) -> torch.Tensor:
        """(α / r) B A as one (out x in) matrix."""
        return self.scale * (self.lora_b @ self.lora_a).reshape(self.base.out_features, self.base.in_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        low = torch.einsum("...i,sri->...sr", x, self.lora_a)
        update = torch.einsum("...sr,sor->...so", low, self.lora_b).flatten(-2)
        return self.base(x) + self.scale * update

    @torch.no_grad()
    def merged(self) -> nn.Linear:
        out = nn.Linear(self.base.in_features, self.base.out_features, bias=self.base.bias is not None)
        out.weight.copy_(self.base.weight + self.delta())
        if self.base.bias is not None:
            out.bias.copy_(self.base.bias)
        return out


def add_lora(model: nn.Module, targets: Mapping[str, int], rank: int, alpha: float) -> list[nn.Parameter]:
    """Freeze ``model`` and wrap its ``nn.Linear`` children named in ``targets`` (name: splits);
    returns the adapters' parameters, the only trainable ones."""
    model.requires_grad_(False)
    found = [(parent, name) for parent in model.modules() for name, child in parent.named_children()
             if name in targets and isinstance(child, nn.Linear)]
    if not found:
        raise ValueError(f"no nn.Linear child named {sorted(targets)} to adapt")
    params = []
    for parent, name in found:
        adapter = LoRALinear(getattr(parent, name), rank, alpha, targets[name])
        setattr(parent, name, adapter)
        params += [adapter.lora_a, adapter.lora_b]
    return params


def merge_lora(model: nn.Module) -> None:
    """Replace every :class:`LoRALinear` in ``model`` by its merged ``nn.Linear`` (in place)."""
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, LoRALinear):
                setattr(parent, name, child.merged())
