"""UniDrag-lite on DragFFD2D (method): a frozen multi-output surrogate drives gradient-based FFD
under the engineering constraints, with Expectation over Transformation (EoT).

Surrogate: the ``unidrag_surrogate`` recipe (ePSA trunk, gated experts for C_d, PCGrad-protected
multi-output training) as an ensemble of ``members`` seeds, trained on the view's dataset.
Optimization [recon]: min_z E_{tau ~ T}[C_d,theta(tau(FFD_z(G_0)))] + lambda P(z), P = squared
hinges of the height / area / clearance constraints (relative), lambda = 10; Adam (lr in units of
L), ``steps`` steps, ``samples`` draws of tau per restart and step, projection onto the box
after each step, ``restarts`` starts (z = 0 and random ones). T: a random arc-length phase of
the boundary samples, translation within +-0.5 evaluation cells, rotation within +-1 degree,
scale within +-2%, a random ensemble member. The surrogate ranks the restarts; up to
``n_verify`` online solver calls verify the top ones and the best verified design is final.
"""

from __future__ import annotations

import numpy as np
import torch

from papergym import Agent, AgentConfig
from papergym.agents.aero._policies import VerifyThenHold
from papergym.agents.aero._surrogate import Variant, train_surrogate
from papergym.envs.aero import shapes
from papergym.envs.aero.surrogate import SurrogateEnsemble

FFD = ("papergym/DragFFD2D-v0",)


def transform(points: torch.Tensor, gen: torch.Generator, cell: float) -> torch.Tensor:
    """One EoT draw per row of ``points`` (N, K, 2): phase, rotation, scale, translation."""
    n, k, _ = points.shape
    shift = torch.randint(0, k, (n,), generator=gen)
    idx = (torch.arange(k)[None, :] + shift[:, None]) % k
    points = torch.gather(points, 1, idx[..., None].expand(-1, -1, 2))
    angle = torch.deg2rad((torch.rand(n, generator=gen) * 2 - 1) * 1.0)
    scale = 1.0 + (torch.rand(n, generator=gen) * 2 - 1) * 0.02
    offset = (torch.rand(n, 2, generator=gen) * 2 - 1) * 0.5 * cell
    centre = points.mean(dim=1, keepdim=True)
    cos, sin = torch.cos(angle)[:, None], torch.sin(angle)[:, None]
    x, y = (points - centre).unbind(-1)
    rotated = torch.stack([cos * x - sin * y, sin * x + cos * y], dim=-1)
    return centre + scale[:, None, None] * rotated + offset[:, None, :]


def penalty(points: torch.Tensor, base: np.ndarray) -> torch.Tensor:
    """Squared hinges of the constraint slacks, relative to the base's height, area and length."""
    slacks = shapes.constraint_slacks(points, base)
    h0, a0 = float(shapes.frontal_height(base)), float(shapes.polygon_area(base))
    scaled = [slacks["height"] / h0, slacks["area"], slacks["clearance"] / 0.005 * 0.01]
    del a0
    return sum(torch.relu(-s) ** 2 for s in scaled)


class SurrogateFFD(VerifyThenHold):
    """The policy: optimize through the surrogate at the episode start, then verify the top designs."""

    def __init__(self, seed: int, model: SurrogateEnsemble, delta_max: float, cell: float, eot: bool,
                 cfg: AgentConfig) -> None:
        self.model, self.delta_max, self.cell, self.eot, self.cfg = model, delta_max, cell, eot, cfg
        super().__init__(seed)

    def start(self, obs):
        self.queue = list(self.optimize(obs))[: self.cfg.n_verify]

    def propose(self, obs):
        return self.queue.pop(0) if self.queue else None

    def predict(self, points: torch.Tensor, body: int, member: torch.Tensor | None) -> torch.Tensor:
        types = torch.full((len(points),), body, dtype=torch.long)
        if member is None:
            return self.model.predict(points, types)["cd"]
        cd = points.new_zeros(len(points))
        for m in range(len(self.model.members)):
            rows = member == m
            if rows.any():
                cd = cd.index_put((rows,), self.model.member(m, points[rows], types[rows])["cd"])
        return cd

    def optimize(self, obs) -> list[np.ndarray]:
        cfg, gen = self.cfg, torch.Generator().manual_seed(int(self.rng.integers(2**62)))
        base_np = np.asarray(obs["base_shape"], np.float64)
        base = torch.tensor(base_np, dtype=torch.float32)
        basis = torch.tensor(shapes.ffd_basis(base_np), dtype=torch.float32)
        body = int(obs["body_type"])
        z = torch.zeros(cfg.restarts, shapes.N_Z)
        z[1:] = (torch.rand(cfg.restarts - 1, shapes.N_Z, generator=gen) * 2 - 1) * 0.5 * self.delta_max
        z.requires_grad_(True)
        optimizer = torch.optim.Adam([z], lr=cfg.lr)
        samples = cfg.samples if self.eot else 1
        for _ in range(cfg.steps):
            points = shapes.deform(base, basis, z)                         # (R, K, 2)
            if self.eot:
                batch = transform(points.repeat_interleave(samples, 0), gen, self.cell)
                member = torch.randint(0, len(self.model.members), (len(batch),), generator=gen)
                cd = self.predict(batch, body, member).view(cfg.restarts, samples).mean(1)
            else:
                cd = self.predict(points, body, torch.zeros(cfg.restarts, dtype=torch.long))
            loss = (cd + cfg.penalty_weight * penalty(points, base_np)).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                z.clamp_(-self.delta_max, self.delta_max)
        with torch.no_grad():
            points = shapes.deform(base, basis, z)
            first = torch.zeros(cfg.restarts, dtype=torch.long)
            score = self.predict(points, body, None if self.eot else first)
            score = score + cfg.penalty_weight * penalty(points, base_np)
        order = torch.argsort(score).tolist()
        return [z[i].detach().numpy().astype(np.float32) for i in order]


class UniDragFFD(Agent):
    """UniDrag-lite: surrogate ensemble + EoT gradient FFD, top designs verified by the solver."""

    id, family, role, paper, problems = "unidrag", "aero", "method", "unidrag2026", FFD
    eot = True

    class Config(AgentConfig):
        epochs: int = 40
        width: int = 32
        members: int = 2
        steps: int = 100
        lr: float = 0.002
        samples: int = 8
        restarts: int = 4
        penalty_weight: float = 10.0
        n_verify: int = 4

    def surrogate(self, view, seed) -> SurrogateEnsemble:
        data = view.dataset()
        members = self.config.members if self.eot else 1
        return SurrogateEnsemble([train_surrogate(data, Variant(), seed * 100 + m, self.config.epochs,
                                                  self.config.width) for m in range(members)])

    def solve(self, view, budget, seed):
        model = self.surrogate(view, seed)
        cell = 1.0 / float(view.eval_length)
        return SurrogateFFD(seed, model, float(view.delta_max), cell, self.eot, self.config)
