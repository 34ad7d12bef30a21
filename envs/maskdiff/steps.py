"""The denoising steps of masked diffusion sampling, shared by the Task's samplers and the env.

Schedule (log-linear, MDLM): mask probability m_t = (1 - eps) t, eps = 1e-3, alpha_t = 1 - m_t,
on the fixed grid t_j = j / T, j = T ... 0. The last step (s = 0) reveals every mask, so a
T-step sampler calls the denoiser exactly T times.

- :func:`mdlm_step` (MDLM ancestral, the official ``ddpm_cache`` update): a masked position is
  revealed with probability (m_t - m_s) / m_t = (t - s) / t by a draw from p_theta(. | x_t);
  revealed positions are copied (never revisited).
- :func:`remdm_step` (ReMDM-cap, ``remdm_mode=cap``; ``rescale`` multiplies instead of capping):
  sigma_t = min(eta, (1 - alpha_s) / alpha_t);
  a revealed token is remasked with probability sigma_t, a masked one revealed with probability
  (alpha_s - (1 - sigma_t) alpha_t) / (1 - alpha_t). With eta = 0 it is MDLM, draw for draw.
- :func:`star_step` (star-shaped, G-Star): a full proposal x_prop (x_t where revealed, else a
  draw from p_theta), then the K = ceil((1 - eps) s L) positions chosen by error scores are set
  back to MASK; revealed tokens may be revised.

:class:`Sampler` is the artifact of ``MaskedDiffusionHMM-v0``: a declared sampler that the
problem runs with these steps (so samplers, env and evaluator cannot drift), optionally holding
a learned remasker (a :class:`~papergym.tinylm.bidir.Bidir` with a scalar head).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch

from papergym.tinylm.bidir import Bidir
from papergym.tinylm.sampling import filter_top_p, gumbel_top_k, top_k_mask

EPS = 1e-3
ProbsFn = Callable[[torch.Tensor], torch.Tensor]  # x (B, L) -> SUBS probabilities (B, L, V)


def mask_rate(t: float) -> float:
    """m_t = (1 - eps) t."""
    return (1.0 - EPS) * t


def grid(T: int) -> list[tuple[float, float]]:
    """The T steps (t, s) = (j/T, (j-1)/T), j = T ... 1."""
    if not isinstance(T, int) or T < 1:
        raise ValueError(f"T must be an integer >= 1, got {T!r}")
    return [(j / T, (j - 1) / T) for j in range(T, 0, -1)]


def n_remask(s: float, length: int) -> int:
    """K = ceil((1 - eps) s L): the masks a star step leaves at time s."""
    return min(length, math.ceil(mask_rate(s) * length - 1e-9))


def draw_tokens(probs: torch.Tensor, generator: torch.Generator, nucleus: float = 1.0,
                temperature: float = 1.0) -> torch.Tensor:
    """One token per position from probs (B, L, V) (temperature, then nucleus), by inverse CDF
    with one uniform per position."""
    batch, length, vocab = probs.shape
    u = torch.rand(batch, length, generator=generator, dtype=torch.float64)
    p = probs.double()
    if temperature != 1.0:
        p = torch.softmax(p.clamp_min(1e-300).log() / temperature, dim=-1)
    p = filter_top_p(p.reshape(-1, vocab), nucleus).reshape(batch, length, vocab)
    cdf = p.cumsum(-1)
    cdf[..., -1] = 1.0 + 1e-9
    return torch.searchsorted(cdf, u[..., None]).squeeze(-1).clamp_max(vocab - 1)


def mdlm_step(x: torch.Tensor, probs: torch.Tensor, t: float, s: float, mask_id: int,
              generator: torch.Generator, nucleus: float = 1.0) -> torch.Tensor:
    u = torch.rand(x.shape, generator=generator, dtype=torch.float64)
    tokens = draw_tokens(probs, generator, nucleus)
    reveal = (x == mask_id) & (u < (mask_rate(t) - mask_rate(s)) / mask_rate(t))
    return torch.where(reveal, tokens, x)


def remdm_probs(t: float, s: float, eta: float, schedule: str = "cap") -> tuple[float, float]:
    """(sigma_t: remask a revealed token, reveal a masked one) of ReMDM: ``cap`` sigma_t =
    min(eta, sigma_max), ``rescale`` sigma_t = eta sigma_max, sigma_max = min(1, (1 - alpha_s)/alpha_t)."""
    a_t, a_s = 1.0 - mask_rate(t), 1.0 - mask_rate(s)
    sigma_max = min(1.0, max(0.0, (1.0 - a_s) / a_t))
    if schedule not in ("cap", "rescale"):
        raise ValueError(f"ReMDM schedule must be 'cap' or 'rescale', got {schedule!r}")
    sigma = min(eta, sigma_max) if schedule == "cap" else eta * sigma_max
    reveal = (a_s - (1.0 - sigma) * a_t) / (1.0 - a_t)
    return sigma, min(1.0, max(0.0, reveal))


def remdm_step(x: torch.Tensor, probs: torch.Tensor, t: float, s: float, mask_id: int,
               generator: torch.Generator, eta: float, nucleus: float = 1.0,
               schedule: str = "cap") -> torch.Tensor:
    u = torch.rand(x.shape, generator=generator, dtype=torch.float64)
    tokens = draw_tokens(probs, generator, nucleus)
    sigma, reveal_p = remdm_probs(t, s, eta, schedule)
    masked = x == mask_id
    out = torch.where(masked & (u < reveal_p), tokens, x)
    return torch.where(~masked & (u < sigma), torch.full_like(x, mask_id), out)


def propose(x: torch.Tensor, probs: torch.Tensor, generator: torch.Generator, nucleus: float,
            temperature: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    """x_prop (x where revealed, else a draw) and the denoiser's probability of each proposed
    token (1 where revealed: SUBS copies them)."""
    tokens = draw_tokens(probs, generator, nucleus, temperature)
    prop = torch.where(x == probs.shape[-1], tokens, x)
    return prop, probs.gather(-1, prop[..., None]).squeeze(-1).float()


def remask(prop: torch.Tensor, chosen: torch.Tensor, mask_id: int) -> torch.Tensor:
    return torch.where(chosen, torch.full_like(prop, mask_id), prop)


def remasker_scores(remasker: Bidir, prop: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        return remasker(prop).float()


@dataclass(eq=False)
class Sampler:
    """A declared sampler; ``sample(probs_fn, n, T, length, mask_id, generator)`` runs it.

    kind: ``"mdlm"`` | ``"remdm"`` | ``"star"``. ``nucleus``: top-p of every token draw.
    ``eta``, ``remdm_schedule`` (``cap`` | ``rescale``): ReMDM's. ``t_on``: star steps run for
    t <= t_on (MDLM steps before).
    ``scores`` (star): ``"random"`` (uniform scores, Gumbel-top-K: a uniformly random subset),
    ``"confidence"`` (e = -p(proposed token), the K least confident, deterministic top-K),
    ``"learned"`` (e = remasker(x_prop) / tau_r, Gumbel-top-K). ``tau_d``: temperature of the
    proposal. References (granted by the problem to reference agents only): ``oracle`` (run
    with the true posteriors instead of the denoiser), ``kind="exact"`` (true samples) and
    ``kind="uniform"`` (uniform random tokens, the trivial end).
    """

    kind: str = "mdlm"
    nucleus: float = 1.0
    eta: float = 0.008
    remdm_schedule: str = "cap"
    t_on: float = 0.3
    scores: str = "learned"
    remasker: Bidir | None = None
    tau_d: float = 1.0
    tau_r: float = 1.0
    oracle: bool = False

    def validate(self, vocab: int, length: int) -> None:
        if self.kind not in ("mdlm", "remdm", "star", "exact", "uniform"):
            raise ValueError(f"Sampler.kind must be mdlm, remdm, star, exact or uniform, got {self.kind!r}")
        if not (0.0 < float(self.nucleus) <= 1.0 and 0.0 <= float(self.eta) <= 1.0
                and 0.0 < float(self.t_on) <= 1.0 and self.tau_d > 0 and self.tau_r > 0):
            raise ValueError(f"Sampler: need 0 < nucleus <= 1, 0 <= eta <= 1, 0 < t_on <= 1, "
                             f"tau > 0; got {self}")
        if self.kind == "remdm" and self.remdm_schedule not in ("cap", "rescale"):
            raise ValueError(f"Sampler.remdm_schedule must be cap or rescale, got {self.remdm_schedule!r}")
        if self.kind == "star" and self.scores not in ("random", "confidence", "learned"):
            raise ValueError(f"Sampler.scores must be random, confidence or learned, got {self.scores!r}")
        if self.kind == "star" and self.scores == "learned":
            r = self.remasker
            if not (isinstance(r, Bidir) and r.cfg.head == "scalar" and r.cfg.length == length
                    and r.cfg.vocab_size == vocab and not r.cfg.time_conditioning):
                raise TypeError(f"Sampler: learned scores need a remasker Bidir with a scalar head "
                                f"over length {length} and vocabulary {vocab}")

    def modules(self) -> list[torch.nn.Module]:
        return [self.remasker] if self.kind == "star" and self.scores == "learned" else []

    def is_star(self, t: float, s: float) -> bool:
        return self.kind == "star" and t <= self.t_on + 1e-12

    def passes(self, T: int) -> int:
        """Forward passes per sequence: T denoiser calls plus one remasker call per star step
        with s > 0 (learned scores only)."""
        extra = sum(1 for t, s in grid(T) if self.is_star(t, s) and s > 0) if self.modules() else 0
        return T + extra

    def scores_for(self, prop: torch.Tensor, prop_prob: torch.Tensor) -> torch.Tensor:
        if self.scores == "random":
            return torch.zeros(prop.shape)
        if self.scores == "confidence":
            return -prop_prob
        return remasker_scores(self.remasker, prop)

    def step(self, x: torch.Tensor, probs_fn: ProbsFn, t: float, s: float, mask_id: int,
             generator: torch.Generator) -> torch.Tensor:
        """One grid step t -> s of this sampler."""
        probs = probs_fn(x)
        if self.kind == "remdm":
            return remdm_step(x, probs, t, s, mask_id, generator, self.eta, self.nucleus,
                              self.remdm_schedule)
        if not self.is_star(t, s):
            return mdlm_step(x, probs, t, s, mask_id, generator, self.nucleus)
        prop, prop_prob = propose(x, probs, generator, self.nucleus, self.tau_d)
        if s <= 0:
            return prop
        k = n_remask(s, x.shape[1])
        e = self.scores_for(prop, prop_prob)
        chosen = (top_k_mask(e, k) if self.scores == "confidence"
                  else gumbel_top_k(e, k, generator, self.tau_r))
        return remask(prop, chosen, mask_id)

    def sample(self, probs_fn: ProbsFn, n: int, T: int, length: int, mask_id: int,
               generator: torch.Generator) -> torch.Tensor:
        """n sequences (n, L) of ids in [0, mask_id)."""
        x = torch.full((n, length), mask_id, dtype=torch.long)
        for t, s in grid(T):
            x = self.step(x, probs_fn, t, s, mask_id, generator)
        return x
