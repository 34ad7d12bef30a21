"""``papergym/MaskedDiffusionHMM-v0``: sample from a frozen masked diffusion model of an HMM
language in T steps; the problem scores the samples' exact likelihood under the true HMM."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch

from papergym import cache, hmm
from papergym.envs.maskdiff import denoiser as denoiser_mod
from papergym.envs.maskdiff import language as language_mod
from papergym.envs.maskdiff.denoiser import (
    DenoiserSpec,
    ModelDenoiser,
    OracleDenoiser,
    denoiser_kl,
    load_denoiser,
    train_denoiser,
)
from papergym.envs.maskdiff.evaluate import gen_nll, guard, remasker_labels, roc_auc
from papergym.envs.maskdiff.language import language_seed, make_language, reference_stats
from papergym.envs.maskdiff.steps import EPS, Sampler
from papergym.problem import (
    Budget,
    BudgetExceeded,
    EvalResult,
    MetricDeclaration,
    Task,
    eval_seed_sequence,
)
from papergym.tinylm import bidir, synthlang
from papergym.tinylm import train as train_mod
from papergym.tinylm.bidir import Bidir

PACKAGE = Path(__file__).parent
ALL_T = (4, 8, 16, 19, 32, 64)  # step counts a tier may list (metric names are declared for each)
EVAL_TAG, GUARD_TAG, AUC_TAG, TRAIN_TAG = 31, 32, 33, 34
PER_T = ("gap", "nll", "flag", "entropy_ratio", "dup", "tv", "passes")


def _per_t_metrics() -> dict[str, MetricDeclaration]:
    out: dict[str, MetricDeclaration] = {}
    for T in ALL_T:
        out.update({f"gap_T{T}": ("min", None, None), f"nll_T{T}": ("min", 0.0, None),
                    f"flag_T{T}": ("min", 0.0, 1.0), f"entropy_ratio_T{T}": ("max", 0.0, None),
                    f"dup_T{T}": ("min", 0.0, 1.0), f"tv_T{T}": ("min", -1.0, 1.0),
                    f"passes_T{T}": ("min", 0.0, None), f"score_T{T}": ("max", None, None)})
    return out


def stream(seed: int, *parts: int) -> int:
    """A held-out 63-bit seed for one of the evaluator's streams (salted when a salt is set)."""
    words = eval_seed_sequence(int(seed), *parts).generate_state(2, dtype=np.uint32)
    return (int(words[0]) << 31) | (int(words[1]) >> 1)


class CountingDenoiser:
    """The evaluator's handle on a denoiser: counts the rows it is called on and raises
    :class:`BudgetExceeded` past ``limit`` (T calls per sequence)."""

    def __init__(self, probs_fn: Any, limit: int) -> None:
        self.probs_fn, self.limit, self.rows = probs_fn, limit, 0

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        if self.rows + x.shape[0] > self.limit:
            raise BudgetExceeded(f"denoiser calls: {self.rows + x.shape[0]} rows asked, the limit is "
                                 f"{self.limit} (T calls per sequence)")
        self.rows += x.shape[0]
        return self.probs_fn(x)


def run_counted(sampler: Sampler, probs_fn: Any, n: int, T: int, length: int, mask_id: int,
                generator: torch.Generator) -> tuple[torch.Tensor, float]:
    """Run ``sampler`` with the denoiser metered at T calls per sequence and forward hooks on its
    declared modules; returns the samples and the forward passes per sequence."""
    counted = CountingDenoiser(probs_fn, limit=T * n)
    extra = [0]
    hooks = [m.register_forward_hook(lambda mod, args, out: extra.__setitem__(0, extra[0] + args[0].shape[0]))
             for m in sampler.modules()]
    try:
        x = sampler.sample(counted, n, T, length, mask_id, generator)
    finally:
        for h in hooks:
            h.remove()
    return x, (counted.rows + extra[0]) / n


class MaskedDiffusionView:
    """What the agent sees: sizes, the schedule, the frozen denoiser (a copy, weights readable)
    and ``sample_data(n)`` (true sequences, the paper's training data; each one spends the
    ``train_sequences`` budget). Never the HMM's parameters."""

    def __init__(self, language: synthlang.HMMLanguage, model: Bidir, budget: Budget, seed: int,
                 steps: Sequence[int], matched_passes: int) -> None:
        self._language, self._model, self._budget = language, model, budget
        self._rng = np.random.default_rng([TRAIN_TAG, int(seed)])
        self.length, self.vocab_size, self.mask_id = language.length, language.vocab_size, language.mask_id
        self.eps, self.steps, self.matched_passes = EPS, list(steps), int(matched_passes)

    def denoiser(self) -> Bidir:
        """A copy of the frozen denoiser (SUBS: softmax of its logits at masked positions)."""
        copy = Bidir(self._model.cfg)
        copy.load_state_dict(self._model.state_dict())
        return copy.eval()

    def sample_data(self, n: int) -> np.ndarray:
        """n true sequences (n, L) from the language."""
        if not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"sample_data: n must be a positive integer, got {n!r}")
        self._budget.spend("train_sequences", int(n))
        return self._language.sample(int(n), self._rng)


class MaskedDiffusionTask(Task):
    """
    ## Description
    Masked diffusion sampling on a language with exact likelihood (G-Star, arXiv 2510.08369).
    Each trial seed draws a sparse random HMM (S states, V symbols, length L; transition and
    emission rows Dir(0.1), from a sealed seed) and the problem trains one bidirectional masked
    diffusion model on it (MDLM objective, cached per seed: the "pre-trained model"). The agent
    returns a sampler; the problem runs it at each step count T on the fixed grid t_j = j/T
    and scores the samples' exact likelihood under the true HMM.

    ## Data
    ``train_view``: ``length``, ``vocab_size``, ``mask_id`` (= V), ``eps``, ``steps`` (the T
    list), ``matched_passes``; ``denoiser()`` (a copy of the frozen model); ``sample_data(n)``
    (true sequences, metered by ``train_sequences``).

    ## Artifact
    A :class:`papergym.envs.maskdiff.steps.Sampler`: MDLM, ReMDM-cap or star-shaped (random,
    confidence or learned remasker scores; a learned remasker is a ``tinylm.bidir.Bidir`` with a
    scalar head), with its nucleus and schedule parameters. The problem runs it with the shared
    step functions, calling the denoiser through a handle metered at T calls per sequence
    (more raises ``BudgetExceeded``) and counting the forward passes of the declared remasker
    (a star step with a learned remasker costs two passes). ``oracle=True`` (exact posteriors
    instead of the denoiser) and ``kind="exact"`` (true samples) are reference modes, granted
    to reference agents only.

    ## Metrics
    Per T in ``steps`` (n samples each, from held-out generators): ``nll_T{T}`` (gen-NLL, nats
    per token), ``gap_T{T}`` (guarded gen-NLL minus the entropy rate H_rate; a set flagged by
    the diversity guard scores NLL_unif), ``score_T{T}`` ((NLL_unif - guarded NLL) /
    (NLL_unif - H_rate): 0 uniform tokens, 1 exact), ``flag_T{T}``, ``entropy_ratio_T{T}``,
    ``dup_T{T}``, ``tv_T{T}`` (the guard's quantities) and ``passes_T{T}`` (forward passes per
    sequence, measured). ``gap_matched`` / ``passes_matched`` / ``T_matched``: the sampler at
    the largest T whose forward passes do not exceed ``matched_passes`` (MDLM: T = 19; G-Star
    with t_on 0.3: T = 16). ``gap_drop``: gap at ``few`` minus gap at ``many`` steps (the
    interaction's per-trial term). ``denoiser_kl``: the denoiser's mean KL from the oracle at
    mask rate 0.5. ``remasker_auc`` (learned remaskers only): ROC-AUC of its scores for the wrong
    tokens of held-out one-step proposals.

    ## Episode End
    One artifact per trial.

    ## Arguments
    ``states``, ``vocab``, ``length`` (the HMM); ``d_model``, ``n_layer``, ``n_head``,
    ``denoiser_steps``, ``denoiser_batch``, ``denoiser_lr`` (the denoiser and its training);
    ``steps`` (T list),
    ``n_samples``, ``matched_passes``, ``few``, ``many``; ``train_sequences`` (budget);
    ``n_reference`` (exact samples for H_rate and NLL_unif).

    ## Tiers
    smoke: S=8, V=16, L=16, d 64 x 2 layers, 200 steps, T in {4, 8}, 128 samples.
    standard: S=16, V=24, L=32, d 64 x 2 layers, 800 steps x 64, T in {4, 8, 16, 32} (+ 19
    forward passes matched), 256 samples. full: S=64, V=64, L=256, d 384 x 8 layers.

    ## Reference
    G-Star (arXiv 2510.08369; code github.com/EgorShibaev/G-Star at 663bd852f1, a fork of
    kuleshov-group/mdlm). Text corpora and GPT-2 perplexity are replaced by an HMM with exact
    likelihood [recon].

    ## Version History
    - v0: initial release.
    """

    id: ClassVar[str] = "papergym/MaskedDiffusionHMM-v0"
    family: ClassVar[str] = "maskdiff"
    paper: ClassVar[str] = "gstar2026"
    metrics: ClassVar[Mapping[str, MetricDeclaration]] = {
        **_per_t_metrics(),
        "gap_matched": ("min", None, None), "passes_matched": ("min", 0.0, None),
        "T_matched": ("max", 0.0, None), "gap_drop": ("min", None, None),
        "denoiser_kl": ("min", 0.0, None), "remasker_auc": ("max", 0.0, 1.0),
        "h_rate": ("min", 0.0, None),
    }

    def __init__(self, tier: str = "smoke", states: int = 8, vocab: int = 16, length: int = 16,
                 d_model: int = 64, n_layer: int = 2, n_head: int = 2, denoiser_steps: int = 200,
                 denoiser_batch: int = 64, denoiser_lr: float = 3e-3, steps: Sequence[int] = (4, 8),
                 n_samples: int = 128,
                 matched_passes: int = 0, few: int = 4, many: int = 8,
                 train_sequences: int = 6_400, n_reference: int = 2000) -> None:
        super().__init__(tier=tier, states=states, vocab=vocab, length=length, d_model=d_model,
                         n_layer=n_layer, n_head=n_head, denoiser_steps=denoiser_steps,
                         denoiser_batch=denoiser_batch, denoiser_lr=denoiser_lr, steps=list(steps),
                         n_samples=n_samples,
                         matched_passes=matched_passes, few=few, many=many,
                         train_sequences=train_sequences, n_reference=n_reference)
        steps = [int(T) for T in steps]
        if not steps or any(T not in ALL_T for T in steps):
            raise ValueError(f"{self.id}: steps must be drawn from {ALL_T}, got {steps}")
        if few not in steps or many not in steps:
            raise ValueError(f"{self.id}: few ({few}) and many ({many}) must be in steps {steps}")
        if matched_passes and matched_passes < 2:
            raise ValueError(f"{self.id}: matched_passes must be 0 (off) or >= 2")
        for name, value in (("n_samples", n_samples), ("n_reference", n_reference),
                            ("train_sequences", train_sequences)):
            if not isinstance(value, int) or value < 2:
                raise ValueError(f"{self.id}: {name} must be an integer >= 2, got {value!r}")
        self.states, self.vocab, self.length = states, vocab, length
        self.spec = DenoiserSpec(d_model=d_model, n_layer=n_layer, n_head=n_head,
                                 steps=denoiser_steps, batch=denoiser_batch, lr=denoiser_lr,
                                 warmup=min(100, max(1, denoiser_steps // 10)))
        self.steps, self.n_samples, self.matched_passes = steps, n_samples, matched_passes
        self.few, self.many = few, many
        self.train_sequences, self.n_reference = train_sequences, n_reference

    # ------------------------------------------------------------------ the cached model
    def language(self, seed: int) -> synthlang.HMMLanguage:
        return make_language(language_seed(seed), self.states, self.vocab, self.length)

    def model_entry(self, seed: int) -> cache.Entry:
        lang_seed = language_seed(seed)
        config = {"lang_seed": lang_seed, "states": self.states, "vocab": self.vocab,
                  "length": self.length, "spec": self.spec.__dict__, "n_reference": self.n_reference}

        def build() -> dict[str, Any]:
            language = make_language(lang_seed, self.states, self.vocab, self.length)
            value = train_denoiser(language, self.spec, seed=int(seed))
            kl = denoiser_kl(language, load_denoiser(value), (0.5,), 256,
                             np.random.default_rng([AUC_TAG, lang_seed]), torch.Generator().manual_seed(1))
            return {"denoiser": value, "stats": reference_stats(language, lang_seed, self.n_reference),
                    "kl": kl[0.5]}

        return cache.Entry("maskdiff/denoiser", config, build=build,
                           code=(denoiser_mod, language_mod, bidir, synthlang, train_mod, hmm,
                                 PACKAGE / "steps.py"))

    def cache_entries(self, seeds: Sequence[int]) -> list[cache.Entry]:
        return [self.model_entry(int(s)) for s in seeds]

    def prepared(self, seed: int) -> tuple[synthlang.HMMLanguage, Bidir, dict[str, Any]]:
        value = cache.get(self.model_entry(seed))
        return self.language(seed), load_denoiser(value["denoiser"]), value

    # ------------------------------------------------------------------ protocol
    @property
    def budget(self) -> Budget:
        return Budget(train_sequences=self.train_sequences)

    def train_view(self, seed: int, budget: Budget) -> MaskedDiffusionView:
        language, model, _ = self.prepared(seed)
        return MaskedDiffusionView(language, model, budget, seed, self.steps, self.matched_passes)

    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        if not isinstance(artifact, Sampler):
            raise TypeError(f"{self.id} expects a papergym.envs.maskdiff.steps.Sampler, got "
                            f"{type(artifact).__name__}")
        artifact.validate(self.vocab, self.length)
        if (artifact.kind == "exact" or artifact.oracle) and not self.grant_privilege(True):
            raise PermissionError(f"{self.id}: the exact and oracle samplers are reference modes")
        language, model, value = self.prepared(seed)
        stats = value["stats"]
        probs_fn = OracleDenoiser(language) if artifact.oracle else ModelDenoiser(model)
        exact = language.sample(self.n_samples, np.random.default_rng(stream(seed, GUARD_TAG)))
        metrics: dict[str, float] = {"h_rate": stats["h_rate"], "denoiser_kl": value["kl"]}

        def score(T: int) -> dict[str, float]:
            gen = torch.Generator().manual_seed(stream(seed, EVAL_TAG, T))
            if artifact.kind == "exact":
                x = language.sample(self.n_samples, np.random.default_rng(stream(seed, EVAL_TAG, T)))
                passes = 0.0
            elif artifact.kind == "uniform":
                x = torch.randint(0, self.vocab, (self.n_samples, self.length), generator=gen).numpy()
                passes = 0.0
            else:
                out, passes = run_counted(artifact, probs_fn, self.n_samples, T, self.length,
                                          language.mask_id, gen)
                if passes != artifact.passes(T):
                    raise RuntimeError(f"forward passes {passes} != declared {artifact.passes(T)} at T={T}")
                x = out.numpy()
            if x.shape != (self.n_samples, self.length) or x.min() < 0 or x.max() >= self.vocab:
                raise RuntimeError(f"sampler left masks or bad ids at T={T}")
            nll = gen_nll(language, x)
            g = guard(x, language, exact)
            guarded = stats["nll_unif"] if g["flag"] else nll
            return {"nll": nll, "gap": guarded - stats["h_rate"], "passes": passes,
                    "score": (stats["nll_unif"] - guarded) / (stats["nll_unif"] - stats["h_rate"]), **g}

        for T in self.steps:
            metrics.update({f"{k}_T{T}": v for k, v in score(T).items()})
        metrics["gap_drop"] = metrics[f"gap_T{self.few}"] - metrics[f"gap_T{self.many}"]
        if self.matched_passes:
            if artifact.kind in ("exact", "uniform"):
                T_m = self.matched_passes
            else:
                T_m = max(T for T in range(1, self.matched_passes + 1)
                          if artifact.passes(T) <= self.matched_passes)
            got = score(T_m) if f"gap_T{T_m}" not in metrics else {
                k: metrics[f"{k}_T{T_m}"] for k in ("gap", "passes")}
            metrics.update({"gap_matched": got["gap"], "passes_matched": got["passes"],
                            "T_matched": float(T_m)})
        if artifact.modules():
            metrics["remasker_auc"] = self.remasker_auc(artifact.remasker, model, language, seed)
        return EvalResult(metrics=metrics)

    def remasker_auc(self, remasker: Bidir, model: Bidir, language: synthlang.HMMLanguage,
                     seed: int) -> float:
        rng = np.random.default_rng(stream(seed, AUC_TAG))
        gen = torch.Generator().manual_seed(stream(seed, AUC_TAG, 1))
        x0 = torch.from_numpy(language.sample(self.n_samples, rng))
        x_hat, y, _ = remasker_labels(x0, ModelDenoiser(model), language.mask_id, gen)
        with torch.no_grad():
            scores = remasker(x_hat).float().numpy().reshape(-1)
        return roc_auc(scores, y.numpy().reshape(-1))
