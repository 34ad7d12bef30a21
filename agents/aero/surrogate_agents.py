"""The DragSurrogate agents: UniDrag-lite's multi-output surrogate and its two ablations.

- ``unidrag_surrogate`` (method): every head, Gated Expert Routing for C_d, Modality-Protected
  Learning (PCGrad on the trunk), an ensemble of ``members`` seeds;
- ``cd_only`` (baseline): the same backbone with the C_d head only (single-task);
- ``multitask_naive`` (baseline): every head, one C_d MLP (no gating), no protection.
"""

from __future__ import annotations

from papergym import Agent, AgentConfig
from papergym.agents.aero._surrogate import Variant, train_surrogate
from papergym.envs.aero.surrogate import SurrogateEnsemble

SURROGATE = ("papergym/DragSurrogate-v*",)


class _SurrogateAgent(Agent):
    family, paper, problems = "aero", "unidrag2026", SURROGATE
    variant = Variant()

    class Config(AgentConfig):
        epochs: int = 40
        width: int = 32
        members: int = 1

    def solve(self, view, budget, seed):
        data = view.dataset()
        members = [train_surrogate(data, self.variant, seed * 100 + m, self.config.epochs, self.config.width)
                   for m in range(self.config.members)]
        return SurrogateEnsemble(members)


class UniDragSurrogate(_SurrogateAgent):
    """UniDrag-lite surrogate: ePSA trunk, gated experts for C_d, PCGrad-protected multi-output."""

    id, role = "unidrag_surrogate", "method"
    variant = Variant(heads=("cd", "cp", "b", "u"), gated=True, protected=True)


class CdOnly(_SurrogateAgent):
    """Single-task ablation: the same trunk trained on C_d alone."""

    id, role = "cd_only", "baseline"
    variant = Variant(heads=("cd",), gated=True, protected=False)


class MultitaskNaive(_SurrogateAgent):
    """Naive multi-task ablation: all heads, one C_d MLP, summed losses without protection."""

    id, role = "multitask_naive", "baseline"
    variant = Variant(heads=("cd", "cp", "b", "u"), gated=False, protected=False)
