"""The problem-owned masked diffusion model ("the pre-trained model") and the oracle denoiser.

Training (MDLM objective, SUBS parameterization, log-linear schedule) [code for the objective]:
x_0 streamed from the language; t antithetic in [eps, 1] (B evenly spaced offsets of one uniform);
every position masked with probability m_t = (1 - eps) t;
L = E_t (1/t) sum_{l masked in x_t} -log p_theta(x_0^l | x_t), averaged per token. The model
never predicts MASK (no logit for it) and revealed positions are copied (:func:`subs_probs`).
AdamW (the official denoiser lr is 3e-4; the tiers use 3e-3 [recon]: a 0.1M-parameter model
trained for under 1,000 steps learns faster with the larger step), linear warm-up, clipping at
1, EMA 0.999 [recon; official 0.9999]. No time conditioning (the code default).

:class:`OracleDenoiser` gives the exact posteriors p(x^l | revealed tokens) of the language (the
limit an ideal SUBS-trained denoiser converges to): a reference row, never "the model".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from papergym.envs.maskdiff.steps import EPS
from papergym.tinylm.bidir import Bidir, BidirConfig, subs_probs
from papergym.tinylm.synthlang import HMMLanguage
from papergym.tinylm.train import TrainConfig, train


@dataclass(frozen=True)
class DenoiserSpec:
    d_model: int = 64
    n_layer: int = 2
    n_head: int = 2
    steps: int = 300
    batch: int = 64
    lr: float = 3e-4
    warmup: int = 100
    ema: float = 0.999


def mask_batch(x0: torch.Tensor, mask_id: int, generator: torch.Generator,
               t: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """x_t ~ q(. | x_0) with antithetic t in [eps, 1] (one per row) unless given: (x_t, t)."""
    batch = x0.shape[0]
    if t is None:
        u = torch.rand((), generator=generator, dtype=torch.float64)
        t = EPS + (1 - EPS) * ((u + torch.arange(batch, dtype=torch.float64) / batch) % 1.0)
    masked = torch.rand(x0.shape, generator=generator, dtype=torch.float64) < ((1 - EPS) * t)[:, None]
    return torch.where(masked, torch.full_like(x0, mask_id), x0), t


def mdlm_loss(model: Bidir, x0: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """The MDLM continuous-time bound for the log-linear schedule: (1/t) x masked-token NLL."""
    mask_id = model.cfg.mask_id
    xt, t = mask_batch(x0, mask_id, generator)
    logp = torch.log_softmax(model(xt).float(), dim=-1)
    nll = -logp.gather(-1, x0[..., None]).squeeze(-1) * (xt == mask_id)
    return (nll.sum(1) / t.float()).mean() / x0.shape[1]


def train_denoiser(language: HMMLanguage, spec: DenoiserSpec, seed: int) -> dict[str, Any]:
    """A trained denoiser for ``language`` from ``seed``: its config, EMA weights and the mean
    training loss of the last 10% of steps."""
    cfg = BidirConfig(vocab_size=language.vocab_size, length=language.length, d_model=spec.d_model,
                      n_layer=spec.n_layer, n_head=spec.n_head)
    with torch.random.fork_rng():  # the initialization, from the seed; the global state is restored
        torch.manual_seed(seed)
        model = Bidir(cfg)
    rng = np.random.default_rng([seed, 7])
    gen = torch.Generator().manual_seed(seed)

    def loss_fn(m: torch.nn.Module, step: int) -> torch.Tensor:
        x0 = torch.from_numpy(language.sample(spec.batch, rng))
        return mdlm_loss(m, x0, gen)

    result = train(model, loss_fn, TrainConfig(steps=spec.steps, lr=spec.lr, warmup=spec.warmup,
                                               clip=1.0, ema=spec.ema))
    tail = result.losses[-max(1, len(result.losses) // 10):]
    state = {k: v.clone() for k, v in result.final.state_dict().items()}
    return {"config": cfg.as_dict(), "state": state, "final_loss": float(np.mean(tail))}


def load_denoiser(value: dict[str, Any]) -> Bidir:
    model = Bidir(BidirConfig(**value["config"]))
    model.load_state_dict(value["state"])
    model.eval()
    model.requires_grad_(False)
    return model


class ModelDenoiser:
    """``probs(x)``: SUBS probabilities (B, L, V) of a Bidir denoiser."""

    def __init__(self, model: Bidir) -> None:
        self.model = model

    @torch.no_grad()
    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return subs_probs(self.model(x), x, self.model.cfg.mask_id)


class OracleDenoiser:
    """``probs(x)``: the language's exact posteriors (B, L, V) (revealed positions one-hot)."""

    def __init__(self, language: HMMLanguage) -> None:
        self.language = language

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return torch.from_numpy(self.language.posterior(x.numpy())).float()


def denoiser_kl(language: HMMLanguage, model: Bidir, rates: tuple[float, ...], n: int,
                rng: np.random.Generator, generator: torch.Generator) -> dict[float, float]:
    """Mean KL(oracle || model) over masked positions at each mask rate (nats)."""
    out = {}
    for rate in rates:
        x0 = torch.from_numpy(language.sample(n, rng))
        xt, _ = mask_batch(x0, language.mask_id, generator, t=torch.full((n,), rate / (1 - EPS)))
        p = OracleDenoiser(language)(xt).double().clamp_min(1e-12)
        q = ModelDenoiser(model)(xt).double().clamp_min(1e-12)
        kl = (p * (p.log() - q.log())).sum(-1)
        masked = xt == language.mask_id
        out[rate] = float(kl[masked].mean()) if bool(masked.any()) else 0.0
    return out
