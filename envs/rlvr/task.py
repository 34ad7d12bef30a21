"""The scoring side of every RLVR problem: ``RLVRTask`` (budget, view, base policy, metrics)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import torch

from papergym import cache
from papergym.envs.rlvr import evaluate as ev
from papergym.envs.rlvr.base_policy import SFTRecipe, load_base_policy, sft_entry
from papergym.envs.rlvr.tasks import SYMBOLS, make_task_def, sample_split
from papergym.envs.rlvr.view import RLVRView, assemble, response_texts, sample_responses, score
from papergym.problem import (
    EVAL_SEED_OFFSET,
    Budget,
    EvalResult,
    MetricDeclaration,
    Task,
    eval_seed_sequence,
)
from papergym.tinylm.gpt import GPT, GPTConfig
from papergym.tinylm.tokenizer import CharTokenizer
from papergym.tuning import cached_score

PASS_KS = tuple(2 ** i for i in range(9))  # 1 .. 256

TASK_KWARGS = (
    "d_model", "n_layer", "n_head", "sft_max_steps", "sft_check_every", "sft_target_accuracy",
    "sft_batch_size", "sft_pool_size", "sft_seed_pool", "responses", "lag", "lag_mode", "eval_prompts",
    "avg_samples", "passk_prompts", "passk_samples", "final_samples", "validation_prompts",
    "validation_samples", "curve_every", "lld_prompts", "target_gain", "c_gen", "c_train",
    "corrupt_fraction", "collapse_margin", "sustain", "unit_prompts", "sft_band_low",
    "sft_band_high", "sft_check_samples", "sft_check_temperature", "sft_validation_prompts",
    "tuning_runs", "tuning_seeds",
)
# Shared tuning runs [recon, spec "Tuning"]: a configuration's run trains on each tuning seed
# (the first ``tuning_seeds`` of TUNING_SEEDS, training seeds no benchmark trial uses; each
# starts from its seed group's cached base, s mod sft_seed_pool) and is scored by Avg@16 at
# T = 0.6 on TUNING_PROMPTS validation-split prompts x TUNING_SAMPLES samples (the validation
# split is disjoint from eval by hash).
TUNING_SEEDS = (100, 101)
TUNING_PROMPTS, TUNING_SAMPLES = 128, 16
TUNING_TAG = 61


def tokenizer() -> CharTokenizer:
    return CharTokenizer(SYMBOLS)  # 24 symbols + BOS, SEP, EOS, PAD = 28 ids


class RLVRTask(Task):
    """Scores a causal LM (the tinylm protocol) on held-out prompts; see ``RLVREnv`` for the
    full documentation of the problem, its tiers and its metrics."""

    family: ClassVar[str] = "rlvr"
    paper: ClassVar[str] = "resrl2026+vcpo2026"
    task_name: ClassVar[str] = ""
    task_kwargs: ClassVar[tuple[str, ...]] = TASK_KWARGS
    # v1: a sealed eval set shared by all seeds, per-prompt units, the collapse rule relative
    # to the base with a noise margin, sustained target crossings (see RLVREnv's docstring)
    fixed_eval: ClassVar[bool] = False
    metrics: ClassVar[dict[str, MetricDeclaration]] = {
        "avg_at_16": ("max", 0.0, 1.0), **{f"pass_at_{k}": ("max", 0.0, 1.0) for k in PASS_KS},
        "pass_at_max": ("max", 0.0, 1.0),
        "distinct_correct": "max", "token_entropy": "max", "lld": "max",
        "final_accuracy": ("max", 0.0, 1.0), "ess_min": "max", "ess_mean": "max",
        "ess_window_min": "max",
        "collapsed": "min", "steps_to_target": "min", "modelled_time_to_target": "min",
        "lag_served": "min", "updates": "max", "base_validation_accuracy": "max",
        "reached_target": ("max", 0.0, 1.0),
        "sft_validation_accuracy": "max",
    }

    def __init__(
        self,
        tier: str = "smoke",
        size: int | None = None,
        d_model: int = 64, n_layer: int = 2, n_head: int = 2,
        sft_max_steps: int = 200, sft_check_every: int = 50, sft_target_accuracy: float = 0.25,
        sft_batch_size: int = 64, sft_pool_size: int = 2000, sft_seed_pool: int = 0,
        responses: int = 640, lag: int = 0, lag_mode: str = "fixed",
        eval_prompts: int = 16, avg_samples: int = 16, passk_prompts: int = 8,
        passk_samples: int = 32, final_samples: int = 8,
        validation_prompts: int = 32, validation_samples: int = 4, curve_every: int = 5,
        lld_prompts: int = 16, target_gain: float = 0.05, c_gen: float = 1.0,
        c_train: float = 1.0, corrupt_fraction: float = 0.25, collapse_margin: float = 0.1,
        sustain: int = 2, unit_prompts: int = 8, sft_band_low: float | None = None,
        sft_band_high: float | None = None, sft_check_samples: int = 1,
        sft_check_temperature: float = 1.0, sft_validation_prompts: int = 64,
        tuning_runs: int = 0, tuning_seeds: int = 2,
    ) -> None:
        super().__init__(tier=tier)
        self.task_def = make_task_def(self.task_name, size)
        self.tokenizer = tokenizer()
        prompt_len = self.task_def.prompt_length_bound() + 2
        self.model_config = GPTConfig(self.tokenizer.vocab_size, d_model, n_layer, n_head,
                                      prompt_len + self.task_def.max_response_tokens)
        if (sft_band_low is None) != (sft_band_high is None):
            raise ValueError("sft_band_low and sft_band_high go together")
        band = None if sft_band_low is None else (float(sft_band_low), float(sft_band_high))
        if band is not None and not 0.0 <= band[0] <= band[1] <= 1.0:
            raise ValueError(f"the SFT band must satisfy 0 <= low <= high <= 1, got {band}")
        self.recipe = SFTRecipe(max_steps=sft_max_steps, check_every=sft_check_every,
                                target_accuracy=sft_target_accuracy, batch_size=sft_batch_size,
                                pool_size=sft_pool_size, corrupt_fraction=corrupt_fraction,
                                validation_prompts=sft_validation_prompts, target_band=band,
                                check_samples=int(sft_check_samples),
                                check_temperature=float(sft_check_temperature))
        # sft_seed_pool > 0: trial seed s starts from the base of seed s mod pool (a scale
        # saving: SFT is the costliest step on 2 cores; pairing within a seed is unchanged)
        self.sft_seed_pool = int(sft_seed_pool)
        self.responses, self.lag, self.lag_mode = int(responses), int(lag), lag_mode
        self.eval_prompts, self.avg_samples = eval_prompts, avg_samples
        self.passk_prompts, self.passk_samples = passk_prompts, passk_samples
        self.final_samples = final_samples
        self.validation_prompts, self.validation_samples = validation_prompts, validation_samples
        self.curve_every, self.lld_prompts = curve_every, lld_prompts
        self.target_gain, self.c_gen, self.c_train = target_gain, c_gen, c_train
        if not 0.0 <= corrupt_fraction <= 1.0:
            raise ValueError(f"corrupt_fraction must lie in [0, 1], got {corrupt_fraction}")
        self.collapse_margin, self.sustain = float(collapse_margin), max(1, int(sustain))
        self.unit_prompts = int(unit_prompts)
        if self.fixed_eval and (self.unit_prompts < 1 or eval_prompts % self.unit_prompts):
            raise ValueError(f"unit_prompts ({unit_prompts}) must divide eval_prompts "
                             f"({eval_prompts})")
        if int(tuning_runs) < 0:
            raise ValueError(f"tuning_runs must be >= 0, got {tuning_runs}")
        self.tuning_runs = int(tuning_runs)
        if not 1 <= int(tuning_seeds) <= len(TUNING_SEEDS):
            raise ValueError(f"tuning_seeds must lie in [1, {len(TUNING_SEEDS)}] (the tuning "
                             f"seeds are {TUNING_SEEDS}), got {tuning_seeds}")
        self.tuning_seeds = TUNING_SEEDS[:int(tuning_seeds)]
        self._views: dict[int, RLVRView] = {}
        self.training = TrainingSide(self)

    @property
    def budget(self) -> Budget:
        return Budget(responses=self.responses, tuning_runs=self.tuning_runs)

    def train_view(self, seed: int, budget: Budget | None = None) -> RLVRView:
        # the view gets the training side (base policy, validation probe), not the Task
        self.training.agent = self.shared_runs.agent  # the harness's identity keys tuning runs
        view = RLVRView(self.training, seed, budget if budget is not None else self.budget)
        self._views[seed] = view
        return view

    # -- problem-owned pieces (held by the training side; see TrainingSide) -------------
    def base_seed(self, seed: int) -> int:
        return self.training.base_seed(seed)

    def cache_entries(self, seeds: Sequence[int]) -> list[cache.Entry]:
        """The SFT base of every seed's base seed, trained once before the trials."""
        return [sft_entry(self.id, self.tier, base, self.task_def, self.tokenizer,
                          self.model_config, self.recipe)
                for base in sorted({self.base_seed(s) for s in seeds})]

    def base_policy(self, seed: int) -> GPT:
        return self.training.base_policy(seed)

    @property
    def _bases(self) -> dict[int, tuple[GPT, dict[str, float]]]:
        return self.training.bases

    def _generator(self, *parts: int) -> torch.Generator:
        return self.training.generator(*parts)

    def validation_accuracy(self, model: GPT, seed: int, update: int) -> float:
        return self.training.validation_accuracy(model, seed, update)

    def _correct(self, model: GPT, instances: list, samples: int, temperature: float,
                 top_p: float, generator: torch.Generator):  # noqa: ANN202
        return self.training.correct(model, instances, samples, temperature, top_p, generator)

    # -- evaluation ----------------------------------------------------------------------
    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        if not isinstance(artifact, GPT):  # the class itself: its run is the problem's code
            raise TypeError(
                f"{type(self).__name__} expects a tinylm causal LM (papergym.tinylm.gpt.GPT, "
                f"returned as data), got {type(artifact).__name__}")
        model = artifact.eval()
        non_finite = not all(torch.isfinite(p).all() for p in model.parameters())
        if non_finite:  # a diverged policy scores 0 and is flagged as collapsed
            model = self.base_policy(seed)
            for p in model.parameters():
                torch.nn.init.zeros_(p)
        eval_set = self.eval_set(seed)
        metrics: dict[str, float] = {}
        # Avg@16: 16 samples per prompt at T = 0.6, top-p 1 (ResRL's validation setting)
        avg_correct = self._correct(model, eval_set[:self.eval_prompts], self.avg_samples, 0.6,
                                    1.0, self._generator(seed, 101))[0]
        metrics["avg_at_16"] = float(avg_correct.mean())
        # final accuracy re-measured at VCPO's validation sampling (T = 0.8, top-p 0.7)
        final_correct = self._correct(model, eval_set[:self.eval_prompts], self.final_samples,
                                      0.8, 0.7, self._generator(seed, 102))[0]
        metrics["final_accuracy"] = float(final_correct.mean())
        # Pass@k (unbiased), distinct correct, token entropy: n samples at T = 1
        passk_set = eval_set[:self.passk_prompts]
        correct, rows, texts, responses, lengths, logprobs = self._correct(
            model, passk_set, self.passk_samples, 1.0, 1.0, self._generator(seed, 103))
        curve = ev.pass_at_k_curve(correct)
        for k in PASS_KS:
            if k in curve:
                metrics[f"pass_at_{k}"] = curve[k]
        metrics["pass_at_max"] = curve[max(curve)]
        distinct = []
        for p, instance in enumerate(passk_set):
            forms = {self.task_def.canonical(instance, texts[p * self.passk_samples + j])
                     for j in range(self.passk_samples) if correct[p, j]}
            distinct.append(len(forms))
        metrics["distinct_correct"] = float(np.mean(distinct))
        tokens, mask, _ = assemble(self.tokenizer, rows, responses, lengths, logprobs)
        metrics["token_entropy"] = ev.mean_token_entropy(model, tokens, mask)
        metrics["lld"] = self._likelihood_displacement(model, seed, eval_set[:self.lld_prompts])
        metrics.update(self._training_metrics(seed, model, non_finite))
        base_info = self._bases.get(self.base_seed(seed), (None, {}))[1]
        metrics["sft_validation_accuracy"] = base_info.get("sft_validation_accuracy", 0.0)
        view = self._views.get(seed)
        curves = {}
        if view is not None:
            curves["validation_accuracy"] = list(view.validation_curve)
            if view.ess_series:
                curves["ess"] = list(view.ess_series)
        units = []
        if self.fixed_eval:
            # one unit per block of `unit_prompts` consecutive eval prompts (the same prompts
            # for every seed), so claims pair per prompt block: a single prompt's score is
            # mostly 0 or 1 for both sides (most prompts tie), which leaves rank tests and
            # Hodges-Lehmann bounds at exactly 0; a block mean is not degenerate
            size = self.unit_prompts
            for b in range(self.eval_prompts // size):
                block = slice(b * size, (b + 1) * size)
                unit: dict[str, float | int] = {
                    "instance": b, "avg_at_16": float(avg_correct[block].mean()),
                    "final_accuracy": float(final_correct[block].mean())}
                if (b + 1) * size <= self.passk_prompts:
                    counts = correct[block].sum(1)
                    for k in PASS_KS:
                        if k <= self.passk_samples:
                            unit[f"pass_at_{k}"] = float(np.mean(
                                [ev.pass_at_k(self.passk_samples, int(c), k) for c in counts]))
                    unit["distinct_correct"] = float(np.mean(distinct[block]))
                units.append(unit)
        info = view.tuning_info() if view is not None else {}
        return EvalResult(metrics=metrics, curves=curves, units=units, info=info)

    def eval_set(self, seed: int) -> list:
        """The eval-only prompts. v1: one sealed set for every seed (drawn from the eval salt
        with a fixed tag, never from the trial seed), so every learner and seed answers the
        same prompts; v0: a set per trial seed."""
        n = max(self.eval_prompts, self.passk_prompts, self.lld_prompts)
        if self.fixed_eval:
            rng = np.random.default_rng(eval_seed_sequence(EVAL_SEED_OFFSET, 16, 1))
        else:
            rng = np.random.default_rng(self.eval_seeds(seed, 1)[0])
        return [sample_split(self.task_def, rng, "eval") for _ in range(n)]

    def _likelihood_displacement(self, model: GPT, seed: int, instances: list) -> float:
        """LLD probe: mean change of log π(y⁺|x) from base to final on base-generated correct
        responses to eval prompts (negative = likelihood displacement)."""
        base = self.base_policy(seed)
        correct, rows, texts, responses, lengths, logprobs = self._correct(
            base, instances, 4, 1.0, 1.0, self._generator(seed, 104))
        keep = np.flatnonzero(correct.reshape(-1))
        if keep.size == 0:
            return 0.0
        tokens, mask, _ = assemble(self.tokenizer, [rows[i] for i in keep],
                                   responses[keep], lengths[keep], logprobs[keep])
        delta = ev.sequence_logprob_sum(model, tokens, mask) - ev.sequence_logprob_sum(base, tokens, mask)
        return float(delta.mean())

    def _training_metrics(self, seed: int, model: GPT, non_finite: bool) -> dict[str, float]:
        view = self._views.get(seed)
        if view is None or not view.streams:
            out = {"ess_min": 1.0, "ess_mean": 1.0, "ess_window_min": 1.0,
                   "collapsed": float(non_finite), "lag_served": 0.0, "updates": 0.0,
                   "base_validation_accuracy": 0.0}
            if not self.fixed_eval:
                out.update(steps_to_target=0.0, modelled_time_to_target=0.0)
            return out
        stream = view.streams[0]
        updates = stream.step
        if not view.validation_curve or view.validation_curve[-1][0] != updates:
            view.validation_curve.append((updates, self.validation_accuracy(model, seed, updates)))
        curve = view.validation_curve
        ess = [v for _, v in view.ess_series] or [1.0]
        non_finite = non_finite or getattr(view, "non_finite", False)
        base = curve[0][1]  # the SFT policy's point: the same for every learner of a seed
        # modelled wall time [recon]: T_gen = c_gen·tokens, T_train = c_train·tokens per update;
        # synchronous N(T_gen + T_train); pipelined N·max(T_gen, T_train) + k·T_gen
        per_update = float(np.mean(view.tokens_per_update or [0]))
        lag = stream.lag

        def modelled_time(steps: float) -> float:
            if lag == 0:
                return steps * (self.c_gen + self.c_train) * per_update
            return (steps * max(self.c_gen, self.c_train) * per_update
                    + lag * self.c_gen * per_update)

        out = {"ess_min": float(min(ess)), "ess_mean": float(np.mean(ess)),
               "ess_window_min": ev.windowed_min(ess, 10), "lag_served": float(lag),
               "updates": float(updates), "base_validation_accuracy": float(base)}
        if self.fixed_eval:
            # v1: collapse = the mean of the last 3 curve points below the base by the margin;
            # target = a crossing of base + target_gain held for `sustain` curve points; a run
            # that never reaches it stores no time (claims pair only runs that both reach it)
            out["collapsed"] = float(ev.collapse_relative(curve, base, self.collapse_margin,
                                                          non_finite))
            steps = ev.sustained_crossing(curve, base + self.target_gain, self.sustain)
            out["reached_target"] = float(steps is not None)
            if steps is not None:
                out["steps_to_target"] = float(steps)
                out["modelled_time_to_target"] = modelled_time(steps)
            return out
        # v0: first update whose validation accuracy reaches base + target_gain
        reached = [u for u, acc in curve if acc >= base + self.target_gain]
        steps = reached[0] if reached else 2 * max(updates, 1)  # censored: twice the run
        out.update(collapsed=float(ev.collapse_flag(curve, non_finite)),
                   steps_to_target=float(steps), modelled_time_to_target=modelled_time(steps))
        return out


class TrainingSide:
    """What a training view may call on the problem side: the SFT base policy of a seed, the
    validation-accuracy probe and the shared tuning runs (validation split). It holds copies of
    the settings, never the Task, so nothing reachable from a view can evaluate or draw eval
    prompts."""

    def __init__(self, task: RLVRTask) -> None:
        self.id, self.tier = task.id, task.tier
        self.task_def, self.tokenizer = task.task_def, task.tokenizer
        self.model_config, self.recipe = task.model_config, task.recipe
        self.sft_seed_pool = task.sft_seed_pool
        self.lag, self.lag_mode, self.curve_every = task.lag, task.lag_mode, task.curve_every
        self.validation_prompts = task.validation_prompts
        self.validation_samples = task.validation_samples
        self.responses, self.tuning_runs = task.responses, task.tuning_runs
        self.tuning_seeds = task.tuning_seeds
        self.bases: dict[int, tuple[GPT, dict[str, float]]] = {}
        self.validation_sets: dict[int, list] = {}
        self.agent: str | None = None  # the trial agent's identity, set by the harness

    def base_seed(self, seed: int) -> int:
        return seed % self.sft_seed_pool if self.sft_seed_pool > 0 else seed

    def base_policy(self, seed: int) -> GPT:
        seed = self.base_seed(seed)
        if seed not in self.bases:
            self.bases[seed] = load_base_policy(self.id, self.tier, seed, self.task_def,
                                                 self.tokenizer, self.model_config, self.recipe)
        import copy

        return copy.deepcopy(self.bases[seed][0])

    def generator(self, *parts: int) -> torch.Generator:
        state = np.random.SeedSequence(list(parts)).generate_state(1)[0]
        return torch.Generator().manual_seed(int(state))

    def validation_accuracy(self, model: GPT, seed: int, update: int) -> float:
        """Learning-curve point: validation prompts × samples at T = 0.8, top-p 0.7."""
        if seed not in self.validation_sets:
            rng = np.random.default_rng([seed, 41])
            self.validation_sets[seed] = [sample_split(self.task_def, rng, "validation")
                                           for _ in range(self.validation_prompts)]
        correct = self.correct(model, self.validation_sets[seed], self.validation_samples,
                                0.8, 0.7, self.generator(seed, 43, update))[0]
        return float(correct.mean())

    def correct(self, model: GPT, instances: list, samples: int, temperature: float,
                 top_p: float, generator: torch.Generator):  # noqa: ANN202
        rows, responses, logprobs, lengths, finished = sample_responses(
            model, self.tokenizer, self.task_def, instances, samples, temperature, top_p, generator)
        texts = response_texts(self.tokenizer, responses, finished)
        correct = score(self.task_def, rows, texts).reshape(len(instances), samples)
        return correct, rows, texts, responses, lengths, logprobs

    def tuning_set(self) -> list:
        """The tuning-validation prompts: validation split (disjoint from eval by hash), drawn
        from a tag of their own, the same for every tuning seed and trial."""
        rng = np.random.default_rng([TUNING_TAG, 0])
        return [sample_split(self.task_def, rng, "validation") for _ in range(TUNING_PROMPTS)]

    def tuning_validation(self, model: GPT, seed: int) -> float:
        """Avg@16 of ``model`` at T = 0.6, top-p 1 on the tuning-validation prompts; a model
        with non-finite weights (a diverged configuration) scores 0."""
        if not (isinstance(model, torch.nn.Module) and hasattr(model, "run")):
            raise TypeError(f"a tuning run must return a tinylm causal LM, got {type(model).__name__}")
        if not all(torch.isfinite(p).all() for p in model.parameters()):
            return 0.0
        correct = self.correct(model.eval(), self.tuning_set(), TUNING_SAMPLES, 0.6, 1.0,
                               self.generator(TUNING_TAG, seed))[0]
        return float(correct.mean())

    def tuning_score(self, fit: Callable[[RLVRView], GPT], config: Mapping[str, Any]) -> float:
        """The mean over the tuning seeds of ``fit(view)``'s tuning-validation Avg@16, ``view`` a
        fresh training view of the tuning seed (the trial's response budget, no tuning runs);
        computed once per (problem settings, trial agent identity, ``config``) and shared by
        every trial of that agent (papergym.tuning.cached_score)."""

        def run() -> float:
            scores = []
            for seed in self.tuning_seeds:
                view = RLVRView(self, seed, Budget(responses=self.responses), tuning=True)
                try:
                    model = fit(view)
                except FloatingPointError:
                    scores.append(0.0)  # a diverged configuration
                    continue
                scores.append(0.0 if view.non_finite else self.tuning_validation(model, seed))
            return float(np.mean(scores))

        problem = {"problem": self.id, "tier": self.tier, "size": self.task_def.size,
                   "model": self.model_config.as_dict(), "recipe": self.recipe.__dict__,
                   "sft_seed_pool": self.sft_seed_pool, "responses": self.responses,
                   "lag": self.lag, "lag_mode": self.lag_mode, "seeds": list(self.tuning_seeds),
                   "prompts": TUNING_PROMPTS, "samples": TUNING_SAMPLES}
        from papergym.envs.rlvr import async_lag, base_policy, tasks
        from papergym.envs.rlvr import view as view_module
        from papergym.tinylm import gpt, sampling

        return cached_score("rlvr/tuning", problem, self.agent, config, run,
                            (sys.modules[__name__], view_module, async_lag, base_policy, tasks,
                             gpt, sampling))
