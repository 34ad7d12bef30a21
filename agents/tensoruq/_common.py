"""What the tensoruq learners share: the pooled-moment equivariant backbone, the heads, the
losses, the training loop and the returned model.

Backbone (standard tier) [recon, after the authors' e3nn design]: per point (cloud point about
the centroid, or bond vector) the spherical harmonics Y_l, l <= 4, times C scalar channel weights
(8 Gaussian radial bases of |r|; for bonds also the species pair one-hot times (r₀/r)³), summed
over points and divided by the point count (clouds) or the cell volume (crystals): C x (0e + 1o +
2e + 3o + 4e) moments, each channel scaled by one invariant RMS from the training set and then by
an invariant function of its norm (a soft saturation for clouds, log(1 + n) for crystals). Then two
blocks of e3nn ``Linear`` -> ``FullyConnectedTensorProduct`` (the moments with themselves) ->
gated nonlinearity (SiLU scalars, sigmoid gates), a mean head (1x0e + 1x2e, plus a linear skip
from the moments) and a covariance branch (linear-gate-linear bottleneck, 2x0e + 2x2e + 1x4e).
The authors' per-edge message passing is the full tier's, not run here.

Every variant differs in one hook: ``head`` (how Σ is made from the network's outputs) and
``loss``. Targets are standardized by one scalar (the isotropic part of the training mean is
removed, then one RMS divides): per-component standardization would break equivariance.
Log-space (``log_km``) means are clamped spectrally to the training log tensors' eigenvalue range
± 0.5 [recon], so that expm of an extrapolated log mean cannot blow up the physical-space scores.
"""

from __future__ import annotations

import copy
import math
from typing import Any, ClassVar, Literal, NamedTuple

import numpy as np
import torch
from torch import nn

from papergym.agent import Agent, AgentConfig
from papergym.envs.tensoruq import geometry

PAPER = "tensoruq2026"
ISO = torch.tensor([1.0, 1.0, 1.0, 0.0, 0.0, 0.0], dtype=torch.float64) / math.sqrt(3)
N_RADIAL = 8
L_MAX = 4
SQUASH = 4.0


# ----------------------------------------------------------------------------- features
class Moments:
    """Pooled equivariant moments of a point set (see the module docstring); all invariant
    choices (radial range, channel scales) are fitted on the training inputs."""

    def __init__(self, inputs: dict[str, np.ndarray], kind: str) -> None:
        self.kind = kind
        self.n_species = 10 if kind == "dielectric" else 0
        self.channels = N_RADIAL + self.n_species
        r = np.linalg.norm(self._vectors(inputs), axis=-1)[inputs["mask"]]
        self.r_max = float(np.quantile(r, 0.99)) * 1.1
        self.r_ref = float(np.median(r))
        self.volume_ref = float(np.mean(inputs["volume"]))
        raw = self.raw(inputs, scaled=False)
        dims = [2 * deg + 1 for deg in range(L_MAX + 1)]
        blocks = torch.split(raw, [self.channels * d for d in dims], dim=-1)
        self.scale = torch.stack([
            torch.sqrt((b.reshape(len(b), self.channels, d) ** 2).sum(-1).mean(0)).clamp_min(1e-8)
            for b, d in zip(blocks, dims)])

    @property
    def irreps(self) -> str:
        return "+".join(f"{self.channels}x{deg}{'e' if deg % 2 == 0 else 'o'}" for deg in range(L_MAX + 1))

    def _vectors(self, inputs: dict[str, np.ndarray]) -> np.ndarray:
        pts = np.asarray(inputs["points"], dtype=np.float64)
        if self.kind == "dielectric":
            return pts  # bond vectors: already relative
        mask = np.asarray(inputs["mask"])[..., None]
        centroid = (pts * mask).sum(1, keepdims=True) / mask.sum(1, keepdims=True)
        return (pts - centroid) * mask  # translation invariance by centring

    def raw(self, inputs: dict[str, np.ndarray], scaled: bool = True) -> torch.Tensor:
        from e3nn import o3

        vec = torch.as_tensor(self._vectors(inputs))
        mask = torch.as_tensor(np.asarray(inputs["mask"])).to(torch.float64)
        r = torch.linalg.norm(vec, dim=-1)
        centres = torch.linspace(0, self.r_max, N_RADIAL, dtype=torch.float64)
        width = self.r_max / (N_RADIAL - 1)
        w = torch.exp(-((r[..., None] - centres) / width) ** 2)  # [B, M, 8]
        if self.n_species:
            species = torch.as_tensor(inputs["species"])
            onehot = nn.functional.one_hot(species, self.n_species).to(torch.float64)
            w = torch.cat([w, onehot * ((self.r_ref / r.clamp_min(1e-6)) ** 3)[..., None]], dim=-1)
        w = w * mask[..., None]
        Y = o3.spherical_harmonics(list(range(L_MAX + 1)), vec, normalize=True, normalization="component")
        if self.kind == "dielectric":
            norm = torch.as_tensor(np.asarray(inputs["volume"], dtype=np.float64)) / self.volume_ref
        else:
            norm = mask.sum(1)
        out, start = [], 0
        for deg in range(L_MAX + 1):
            d = 2 * deg + 1
            F = torch.einsum("bmc,bmk->bck", w, Y[..., start:start + d]) / norm[:, None, None]
            if not scaled:
                out.append(F.reshape(len(F), -1))
                start += d
                continue
            F = F / self.scale[deg][None, :, None]
            # each channel rescaled by an invariant function of its norm n (so equivariant): clouds
            # saturate softly beyond SQUASH x the training RMS (bounded tensor products
            # off-distribution); crystals are log-compressed, n -> log(1 + n), since the
            # log-dielectric target grows like the log of the bond sums
            n = torch.sqrt((F ** 2).sum(-1, keepdim=True)).clamp_min(1e-12)
            if self.kind == "dielectric":
                F = F * torch.log1p(n) / n
            else:
                F = F / torch.sqrt(1 + (n / SQUASH) ** 2)
            out.append(F.reshape(len(F), -1))
            start += d
        return torch.cat(out, dim=-1)


# ----------------------------------------------------------------------------- network
def make_gate(hidden: str) -> nn.Module:
    """e3nn's gated nonlinearity on ``hidden``: SiLU on the scalars, sigmoid gates on the rest."""
    from e3nn import nn as enn
    from e3nn import o3

    hidden_irreps = o3.Irreps(hidden)
    scalars = o3.Irreps([(m, ir) for m, ir in hidden_irreps if ir.l == 0])
    gated = o3.Irreps([(m, ir) for m, ir in hidden_irreps if ir.l > 0])
    return enn.Gate(scalars, [nn.functional.silu], f"{gated.num_irreps}x0e", [torch.sigmoid], gated)


class GatedBlock(nn.Module):
    """Linear -> FullyConnectedTensorProduct(t, t) (+ a linear skip) -> Gate."""

    def __init__(self, irreps_in: str, tp_irreps: str, hidden: str) -> None:
        from e3nn import o3

        super().__init__()
        self.gate = make_gate(hidden)
        self.lin = o3.Linear(irreps_in, tp_irreps)
        self.tp = o3.FullyConnectedTensorProduct(tp_irreps, tp_irreps, self.gate.irreps_in)
        self.skip = o3.Linear(irreps_in, self.gate.irreps_in)
        self.irreps_out = self.gate.irreps_out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = self.lin(x)
        return self.gate(self.tp(t, t) + self.skip(x))


class Bottleneck(nn.Module):
    """Linear -> Gate -> Linear, with a residual linear path (the covariance branch)."""

    def __init__(self, irreps_in: str, hidden: str, irreps_out: str) -> None:
        from e3nn import o3

        super().__init__()
        self.gate = make_gate(hidden)
        self.lin1 = o3.Linear(irreps_in, self.gate.irreps_in)
        self.lin2 = o3.Linear(self.gate.irreps_out, irreps_out)
        self.skip = o3.Linear(irreps_in, irreps_out)
        with torch.no_grad():  # start near Σ = I (standardized): a small generator
            self.lin2.weight.mul_(0.1)
            self.skip.weight.mul_(0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin2(self.gate(self.lin1(x))) + self.skip(x)


class EquivariantNet(nn.Module):
    """Moments -> two gated tensor-product blocks -> mean (0e + 2e, plus a linear skip from the
    moments) and a covariance bottleneck (``cov_irreps_out``)."""

    def __init__(self, irreps_in: str, tp_irreps: str, hidden: str, cov_irreps_out: str) -> None:
        from e3nn import o3

        super().__init__()
        self.block1 = GatedBlock(irreps_in, tp_irreps, hidden)
        self.block2 = GatedBlock(str(self.block1.irreps_out), tp_irreps, hidden)
        h = str(self.block2.irreps_out)
        self.mean = o3.Linear(h, geometry.TENSOR_IRREPS)
        self.mean_skip = o3.Linear(irreps_in, geometry.TENSOR_IRREPS)
        self.cov = Bottleneck(h, hidden, cov_irreps_out)
        self.offset = nn.Parameter(torch.zeros(()))  # learnable isotropic generator offset s₀ [code]
        with torch.no_grad():  # start near the training mean (μ = 0 standardized)
            self.mean.weight.mul_(0.1)
            self.mean_skip.weight.mul_(0.1)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = self.block2(self.block1(x))
        return self.mean(h) + self.mean_skip(x), self.cov(h)

    def covariance_parameters(self) -> list[nn.Parameter]:
        return [*self.cov.parameters(), self.offset]


# ----------------------------------------------------------------------------- losses
class Terms(NamedTuple):
    """What the losses need of one batch: μ, Σλ̄ = log|Σ̄|, q = (y − μ)ᵀ Σ̄⁻¹ (y − μ), the raw and
    the safeguarded eigenvalues of S (ascending)."""

    mu: torch.Tensor
    logdet: torch.Tensor
    q: torch.Tensor
    lam: torch.Tensor
    lam_bar: torch.Tensor


def rho(d: torch.Tensor, tau: float) -> torch.Tensor:
    """ρ_τ(d) = d for d < τ, τ + log(1 + d − τ) beyond: linear core, logarithmic tail [code]."""
    return torch.where(d < tau, d, tau + torch.log1p((d - tau).clamp_min(0)))


def le_eso(t: Terms, lam_lo: float, lam_hi: float, w_ld: float = 0.1, tau: float = 5.0, c: float = 0.5,
           kappa: float = 100.0, distance: str = "robust") -> torch.Tensor:
    """LE-ESO per item [code]: w_ld Σλ̄ + ρ_τ(D_M) + 1e-3·mean[relu(λ − λ_hi)² + relu(λ_lo − λ)²]
    + c·relu((λ̄_max − λ̄_min) − log κ), D_M = (Σ z_i² e^{−λ̄_i} + 1e-8)^{1/2} = (q + 1e-8)^{1/2}.
    ``distance="squared"`` replaces ρ_τ(D_M) by ½ D_M², the Gaussian's quadratic, and keeps every
    other term [recon]: LE-ESO without its robust distance (the control of the robustness claim)."""
    d_m = torch.sqrt(t.q + 1e-8)
    if distance not in ("robust", "squared"):
        raise ValueError(f"le_eso: distance must be 'robust' or 'squared', got {distance!r}")
    fit = rho(d_m, tau) if distance == "robust" else 0.5 * d_m ** 2
    penalty = 1e-3 * (torch.relu(t.lam - lam_hi) ** 2 + torch.relu(lam_lo - t.lam) ** 2).mean(-1)
    spread = c * torch.relu((t.lam_bar[..., -1] - t.lam_bar[..., 0]) - math.log(kappa))
    return w_ld * t.logdet + fit + penalty + spread


def gaussian_nll(t: Terms) -> torch.Tensor:
    """½ tr S̄ + ½ q (the constant dropped)."""
    return 0.5 * t.logdet + 0.5 * t.q


def laplace_floor_nll(t: Terms, q_min: float = 1e-3) -> torch.Tensor:
    """The exact Laplace NLL ½ tr S̄ + log(q̃/2) − log K₂(√(2q̃)), q̃ = max(q, q_min) [recon]."""
    q = t.q.clamp_min(q_min)
    return 0.5 * t.logdet + torch.log(q / 2) - geometry.log_bessel_k2(torch.sqrt(2 * q))


def generator_terms(mu: torch.Tensor, S: torch.Tensor, y: torch.Tensor, lam_lo: float,
                    lam_hi: float) -> Terms:
    """Terms of Σ̄ = V diag(exp λ̄) Vᵀ through :func:`geometry.spectral_map` (stable gradients)."""
    def log_sigma(lam: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return geometry.safeguard(lam, lam_lo, lam_hi)

    def precision(lam: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        bar, slope = geometry.safeguard(lam, lam_lo, lam_hi)
        e = torch.exp(-bar)
        return e, -e * slope

    logdet = torch.diagonal(geometry.spectral_map(S, log_sigma), dim1=-2, dim2=-1).sum(-1)
    r = y - mu
    q = torch.einsum("bi,bij,bj->b", r, geometry.spectral_map(S, precision), r)
    lam = torch.linalg.eigvalsh(S.to(torch.float64)).to(S.dtype)  # eigenvalue gradients are stable
    lam_bar, _ = geometry.safeguard(lam, lam_lo, lam_hi)
    return Terms(mu, logdet, q, lam, lam_bar)


# ----------------------------------------------------------------------------- the model
class TensorModel:
    """The artifact: features -> network -> (μ, Σ) in the target's units. ``predict`` runs in
    float32 (eigh in float64) unless ``dtype`` is float64."""

    def __init__(self, features: Moments, nets: list[nn.Module], head: Any, offset: torch.Tensor,
                 scale: float, family: str, space: str, dtype: torch.dtype = torch.float32,
                 factory: Any = None) -> None:
        self.features, self.nets, self.head, self.factory = features, nets, head, factory
        self.mean_range: tuple[float, float] | None = None  # see :func:`mean_range`
        self.offset, self.scale, self.family, self.space, self.dtype = offset, scale, family, space, dtype
        for net in nets:
            net.eval()

    def standardized(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.head.predict(self.nets, x.to(self.dtype))

    def predict(self, inputs: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, str, str]:
        with torch.no_grad():
            mu, Sigma = self.standardized(self.features.raw(inputs))
        mu = self.offset + self.scale * mu.to(torch.float64)
        Sigma = self.scale ** 2 * Sigma.to(torch.float64)
        if self.mean_range is not None:
            mu = clamp_spectrum(mu, *self.mean_range)
        return mu.numpy(), Sigma.numpy(), self.family, self.space

    def to(self, dtype: torch.dtype) -> TensorModel:
        """Cast the networks. For float64 each is rebuilt in float64 (e3nn's structural
        buffers, the Wigner 3j and normalizations, are then exact) and given the trained
        parameters: a float32 build cast up keeps a ~1e-7 equivariance error."""
        if dtype == torch.float64 and self.factory is not None:
            nets = []
            for net in self.nets:
                fresh = self.factory().to(dtype)
                params = dict(net.named_parameters())
                with torch.no_grad():
                    for name, p in fresh.named_parameters():
                        p.copy_(params[name].to(dtype))
                nets.append(fresh.eval())
            self.nets = nets
        else:
            self.nets = [net.to(dtype) for net in self.nets]
        self.dtype = dtype
        return self


# ----------------------------------------------------------------------------- heads
class FullHead:
    """Σ = V diag(exp λ̄) Vᵀ from S = s₀ I + Σ_j c_j B_j (the 21 generator coefficients)."""

    cov_irreps = geometry.GENERATOR_IRREPS

    def __init__(self, lam_lo: float, lam_hi: float) -> None:
        self.lam_lo, self.lam_hi = lam_lo, lam_hi

    def generator(self, net: EquivariantNet, c: torch.Tensor) -> torch.Tensor:
        return geometry.generator(c) + net.offset * torch.eye(6, dtype=c.dtype)

    def outputs(self, net: EquivariantNet, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(μ, S), both in KM coordinates (standardized)."""
        mu_irr, c = net(x)
        return geometry.tensor_from_irreps(mu_irr), self.generator(net, c)

    def terms(self, net: EquivariantNet, x: torch.Tensor, y: torch.Tensor) -> Terms:
        mu, S = self.outputs(net, x)
        return generator_terms(mu, S, y, self.lam_lo, self.lam_hi)

    def predict(self, nets: list[nn.Module], x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mu, S = self.outputs(nets[0], x)
        _, lam_bar, V = geometry.safeguarded_spectrum(S, self.lam_lo, self.lam_hi)
        return mu, geometry.spectral_exp(lam_bar.to(torch.float64), V.to(torch.float64))


class IsoHead(FullHead):
    """Σ = e^s I₆ from one invariant 0e output s (clamped like λ)."""

    cov_irreps = "1x0e"

    def generator(self, net: EquivariantNet, c: torch.Tensor) -> torch.Tensor:
        return (c[:, 0] + net.offset)[:, None, None] * torch.eye(6, dtype=c.dtype)


# ----------------------------------------------------------------------------- the learner
class TensorUQConfig(AgentConfig):
    lr: float = 3e-3  # one-cycle peak (the ICML script: 1e-3 for 60 epochs of batch 16)
    lr_start_ratio: float = 0.5  # base / peak (5e-4 / 1e-3 in the ICML script) [code]
    weight_decay: float = 1e-3  # backbone and mean head [code]
    weight_decay_cov: float = 1e-4  # covariance head [code]
    grad_clip: float = 1.0  # [code]
    lam_lo: float = -8.0  # eigenvalue clamp of S (standardized units); the ICML model's
    lam_hi: float = 2.0  # [-0.8, 2.0] clamps nearly every residual variance here (see the spec)
    w_mse: float = 0.1  # auxiliary MSE weight for the first `mse_epochs`, then w_mse_late [code]
    w_mse_late: float = 0.01
    mse_epochs: int = 5
    backbone: Literal["moments", "message_passing"] = "moments"  # message passing: the full tier's
    tp_irreps: str = "8x0e+4x1o+4x2e+2x4e"
    hidden_irreps: str = "16x0e+4x1o+4x2e+2x4e"
    epochs: int = 0  # 0: the view's epochs per model
    space: str = "auto"  # auto: log_km where the problem allows it [code], else km


class TensorUQLearner(Agent):
    """Train the equivariant network with ``loss`` on the view's metered epochs; keep the state
    with the best validation loss; return a :class:`TensorModel`."""

    family: ClassVar[str] = "tensoruq"
    paper: ClassVar[str] = PAPER
    Config: ClassVar[type[AgentConfig]] = TensorUQConfig
    predictive_family: ClassVar[str] = "gaussian"
    head_class: ClassVar[type[FullHead]] = FullHead
    members: ClassVar[int] = 1

    # ---- hooks
    def loss(self, terms: Terms) -> torch.Tensor:
        return gaussian_nll(terms)

    def make_head(self) -> Any:
        return self.head_class(self.config.lam_lo, self.config.lam_hi)

    # ---- the protocol
    def space(self, view: Any) -> str:
        if self.config.space == "auto":
            return "log_km" if "log_km" in view.spaces else "km"
        if self.config.space not in view.spaces:
            raise ValueError(f"{self.id}: space {self.config.space!r} is not one of {view.spaces}")
        return self.config.space

    def solve(self, view: Any, budget: Any, seed: int) -> TensorModel:
        torch.manual_seed(int(view.init_seed))
        space = self.space(view)
        train_in, val_in = view.train.inputs, view.validation.inputs
        y_train = to_space(torch.as_tensor(np.asarray(view.train.targets)), space)
        y_val = to_space(torch.as_tensor(np.asarray(view.validation.targets)), space)
        offset, scale = standardizer(y_train)
        features = self.make_features(train_in, view.kind)
        x_train = features.raw(train_in).float()
        x_val = features.raw(val_in).float()
        yt, yv = ((y_train - offset) / scale).float(), ((y_val - offset) / scale).float()
        head = self.make_head()
        nets = [self.fit(view, features, head, x_train, yt, x_val, yv, m) for m in range(self.members)]
        model = self.build_model(features, nets, head, offset, scale, space)
        model.mean_range = mean_range(y_train, space)
        return model

    def build_model(self, features: Moments, nets: list[nn.Module], head: Any, offset: torch.Tensor,
                    scale: float, space: str) -> TensorModel:
        return TensorModel(features, nets, head, offset, scale, self.predictive_family, space,
                           factory=lambda: self.make_net(features, head).double())

    def make_features(self, inputs: dict[str, np.ndarray], kind: str) -> Any:
        if self.config.backbone == "message_passing":
            from papergym.agents.tensoruq.message_passing import PointSets

            return PointSets(inputs, kind)
        return Moments(inputs, kind)

    def make_net(self, features: Any, head: Any) -> nn.Module:
        """The network, built in float64 (exact bases) and cast to float32 for training."""
        with geometry.float64_default():
            if self.config.backbone == "message_passing":
                from papergym.agents.tensoruq.message_passing import MessagePassingNet

                net = MessagePassingNet(features, self.config.hidden_irreps, head.cov_irreps)
            else:
                net = EquivariantNet(features.irreps, self.config.tp_irreps, self.config.hidden_irreps,
                                     head.cov_irreps)
        return net.float()

    def fit(self, view: Any, features: Moments, head: Any, x: torch.Tensor, y: torch.Tensor,
            x_val: torch.Tensor, y_val: torch.Tensor, member: int) -> nn.Module:
        cfg = self.config
        torch.manual_seed(int(view.init_seed) + 7919 * member)
        net = self.make_net(features, head)
        cov = {id(p) for p in net.covariance_parameters()}
        groups = [{"params": [p for p in net.parameters() if id(p) not in cov],
                   "weight_decay": cfg.weight_decay},
                  {"params": [p for p in net.parameters() if id(p) in cov],
                   "weight_decay": cfg.weight_decay_cov}]
        opt = torch.optim.AdamW([g for g in groups if g["params"]], lr=cfg.lr)
        epochs = cfg.epochs or int(view.epochs)
        steps = epochs * int(view.batches.batches_per_epoch)
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=cfg.lr, total_steps=steps,
                                                    div_factor=1 / cfg.lr_start_ratio)
        best, best_state = math.inf, None
        for epoch in range(epochs):
            net.train()
            w_mse = cfg.w_mse if epoch < cfg.mse_epochs else cfg.w_mse_late
            for idx, _ in view.batches.epoch():
                idx = torch.as_tensor(np.asarray(idx))
                loss = self.objective(net, head, x[idx], y[idx], w_mse)
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(net.parameters(), cfg.grad_clip)
                opt.step()
                sched.step()
            net.eval()
            with torch.no_grad():
                val = float(self.objective(net, head, x_val, y_val, 0.0))
            if math.isfinite(val) and val < best:
                best, best_state = val, copy.deepcopy(net.state_dict())
        if best_state is not None:
            net.load_state_dict(best_state)
        return net

    def objective(self, net: nn.Module, head: Any, x: torch.Tensor, y: torch.Tensor,
                  w_mse: float) -> torch.Tensor:
        """w_mse·MSE(μ, y) + mean loss [code]."""
        terms = head.terms(net, x, y)
        return w_mse * ((terms.mu - y) ** 2).mean() + self.loss(terms).mean()


def to_space(y: torch.Tensor, space: str) -> torch.Tensor:
    """Targets in the declared space: KM(ε), or KM(logm ε) for ``log_km`` [code]."""
    return geometry.km(geometry.logm_spd(geometry.from_km(y))) if space == "log_km" else y


def mean_range(y: torch.Tensor, space: str, margin: float = 0.5) -> tuple[float, float] | None:
    """For ``log_km`` predictions: the eigenvalue range of the training log tensors widened by
    ``margin``, to which a predicted log mean's eigenvalues are clamped [recon]: expm maps an
    extrapolated log mean to a wildly large tensor (a spectral clamp, so equivariant)."""
    if space != "log_km":
        return None
    lam = torch.linalg.eigvalsh(geometry.from_km(y))
    return float(lam.min()) - margin, float(lam.max()) + margin


def clamp_spectrum(v: torch.Tensor, lo: float, hi: float) -> torch.Tensor:
    """KM coordinates of T(v) with its eigenvalues clamped to [lo, hi]."""
    lam, V = torch.linalg.eigh(geometry.from_km(v))
    return geometry.km((V * lam.clamp(lo, hi)[..., None, :]) @ V.transpose(-1, -2))


def standardizer(y: torch.Tensor) -> tuple[torch.Tensor, float]:
    """(offset, scale): the isotropic part of the mean, then one RMS (equivariant) [recon]."""
    offset = (y.mean(0) @ ISO) * ISO
    scale = float(torch.sqrt(((y - offset) ** 2).sum(-1).mean() / 6))
    return offset, max(scale, 1e-12)
