"""``papergym/LosslessDistill-v0``: distill a problem-owned transformer teacher into a student
within a token budget; the problem scores both on held-out items and computes the Win-and-Tie
rates and the critical tolerance α*."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import torch
import torch.nn.functional as F

from papergym import cache, hmm
from papergym.envs.distill import tasks as tasks_mod
from papergym.envs.distill import teacher as teacher_mod
from papergym.envs.distill import wintie
from papergym.envs.distill.tasks import TOKENIZER, Item, Suite, batch_ids, domain_of
from papergym.envs.distill.teacher import TeacherSpec, answer_mask, load_teacher, teacher_outputs
from papergym.problem import Budget, EvalResult, MetricDeclaration, Task, eval_seed_sequence
from papergym.tinylm import gpt, synthlang
from papergym.tinylm import train as train_mod

PACKAGE = Path(__file__).parent
ALL_TASKS = ("add2", "add3", "add5", "mul2", "dyck8", "dyck12", "vartrack3", "vartrack4", "vartrack6",
             "sort5", "sort8", "recall8", "recall12", "recall16", "recall24", "recall48", "copy16", "copy24",
             "copy32", "hmm32",
             "hmm64")
EVAL_TAG, PROBE_TAG, LANG_TAG, STREAM_TAG = 41, 42, 43, 44
CHUNK = 256  # rows per evaluation forward pass


def _task_metrics() -> dict[str, MetricDeclaration]:
    out: dict[str, MetricDeclaration] = {}
    for t in ALL_TASKS:
        out.update({f"score_{t}": ("max", 0.0, 1.0), f"teacher_{t}": ("max", 0.0, 1.0),
                    f"eligible_{t}": ("max", 0.0, 1.0), f"recovery_{t}": ("max", 0.0, None)})
    return out


class DistillView:
    """What the agent sees: the teacher's config and weights (copies), the task list and domains,
    the context, the window the problem states for sub-quadratic students, and ``stream``: training
    items with the teacher's outputs on them, metered by the token budget."""

    def __init__(self, suite: Suite, teacher: gpt.GPT, budget: Budget, seed: int, ctx: int,
                 window: int, sinks: int) -> None:
        self._suite, self._teacher, self._budget = suite, teacher, budget
        self._rng = np.random.default_rng([STREAM_TAG, int(seed)])
        self.tasks, self.domains, self.ctx, self.window, self.sinks = (
            list(suite.tasks), suite.domains(), int(ctx), int(window), int(sinks))
        self.vocab_size, self.pad_id = TOKENIZER.vocab_size, TOKENIZER.pad

    def teacher_config(self) -> dict[str, int]:
        return self._teacher.cfg.as_dict()

    def teacher_state_dict(self) -> dict[str, torch.Tensor]:
        return {k: v.clone() for k, v in self._teacher.state_dict().items()}

    def stream(self, domain: str = "mix", batch: int = 32,
               outputs: Sequence[str] = ("logits",)) -> dict[str, Any]:
        """One batch of training items from ``domain`` ("mix": every task), right-padded:
        ``tokens`` (B, T), ``mask`` (B, T; True where the next token is an answer token or EOS),
        ``pad`` (B, T; True at padding), and per ``outputs``: ``logits`` (the teacher's, B x T x V),
        ``layer_io`` (``hidden``: the residual stream entering each block, ``attn``: each attention
        sublayer's output). Spends B x ctx of the ``tokens`` budget (every row is charged as a full
        context slot, so the cost of a batch is known before it is drawn), and of
        ``teacher_tokens`` when teacher outputs are asked for."""
        if domain != "mix" and domain not in self.domains:
            raise ValueError(f"stream: domain must be 'mix' or one of {self.domains}, got {domain!r}")
        if not isinstance(batch, (int, np.integer)) or not 1 <= batch <= 1024:
            raise ValueError(f"stream: batch must be an integer in [1, 1024], got {batch!r}")
        outputs = tuple(outputs)
        if set(outputs) - {"logits", "layer_io"}:
            raise ValueError(f"stream: outputs must be drawn from ('logits', 'layer_io'), got {outputs}")
        items = teacher_mod.draw_items(self._suite, self._suite.tasks_of(domain), int(batch), self._rng)
        ids = batch_ids(items)
        cost = int(batch) * self.ctx  # a row is charged as a full context slot: a deterministic cost
        self._budget.spend("tokens", cost)
        if outputs:
            self._budget.spend("teacher_tokens", cost)
        tokens = torch.from_numpy(ids)
        out: dict[str, Any] = {"tokens": tokens, "mask": torch.from_numpy(answer_mask(items, ids.shape[1])),
                               "pad": tokens == TOKENIZER.pad}
        if outputs:
            logits, hidden, attn = teacher_outputs(self._teacher, tokens)
            if "logits" in outputs:
                out["logits"] = logits
            if "layer_io" in outputs:
                out["hidden"], out["attn"] = hidden, attn
        return out


class LosslessDistillTask(Task):
    """
    ## Description
    Lossless distillation of a transformer into a sub-quadratic student (Hauzenberger et al.
    2026, "Effective Distillation to Hybrid xLSTM Architectures"). Each trial seed has its own
    teacher, a ``tinylm.gpt`` causal transformer the problem trains on a mixture of synthetic tasks
    in four domains (arith, code, memory, lang; cached per seed: the "pre-trained LLM"). The agent
    distills it into a student within a token budget; the problem scores student and teacher on
    the same held-out items and reports the critical tolerance α* of the Win-and-Tie rate.

    ## Data
    ``train_view``: ``tasks``, ``domains``, ``ctx``, ``window`` and ``sinks`` (the window stated for
    sub-quadratic students: ctx / 8, 4 sinks), ``vocab_size``, ``pad_id``; ``teacher_config()``,
    ``teacher_state_dict()`` (copies); ``stream(domain, batch, outputs)``: training items (eval-only
    items never appear) with the teacher's logits and per-layer attention inputs and outputs,
    metered by ``tokens`` and ``teacher_tokens`` (B x ctx per batch; past the budget
    ``BudgetExceeded``). Running a rebuilt teacher on other inputs is against the rules.

    ## Artifact
    A causal module ``artifact(tokens) -> logits`` (B, T) -> (B, T, V), e.g.
    :class:`papergym.tinylm.linearized.LinearizedGPT`; optional ``state_bytes(n)`` (decode-state
    bytes after n tokens). ``evaluate`` first probes causality (changing tokens after position i
    must leave the logits up to i unchanged within 1e-5; a failure raises ``ValueError``).

    ## Metrics
    Per task j: ``score_<task>`` S_j (exact-match tasks: the share of held-out items whose greedy
    decoding equals the answer and then EOS, computed as the share whose every answer token and
    EOS is the argmax given the correct prefix, which is the same thing; ``hmm``: exp(−mean
    cross-entropy per token)), ``teacher_<task>`` T_j, ``eligible_<task>`` (T_j >= ``eligibility``;
    ``hmm`` always), ``recovery_<task>`` r_j = S_j / T_j. Over the eligible tasks: ``alpha_star``
    (α*, primary, lower better), ``c_0``, ``c_0.02``, ``c_0.05``, ``c_0.1`` (Win-and-Tie rates),
    ``c_area`` (mean of C_α over α in {0, .005, .01, .02, .03, .05, .1, .15, .2, .3, .4}),
    ``alpha_all`` (max shortfall), ``cabs_0.05``, ``mean_recovery``, ``min_recovery``, ``exceeds_any``
    (some S_j >= T_j), ``memory_score`` (mean S_j over eligible memory tasks), ``n_eligible``;
    ``kl`` (token-mean KL(teacher ‖ student) at the answer positions of the held-out items);
    ``state_bytes_128``, ``state_bytes_2048`` (from ``state_bytes`` where the artifact has it);
    ``hmm_bound``: the exact HMM predictor's score on the same ``hmm`` items (forward algorithm).
    ``EvalResult.units``: one row per task (instance = task) with ``eligible``, ``score``,
    ``teacher``, ``shortfall``, ``recovery``, ``delta`` = S_j − T_j, ``area`` (the share of the α grid
    at which task j is within tolerance: ``c_area`` is its mean over the eligible tasks).
    ``EvalResult.info``: ``artifact_selection``, the artifact's own ``selection`` record (the
    candidate its agent chose on validation and their validation losses) when it has one, kept
    as provenance; it is never a score.

    ## Episode End
    One artifact per trial.

    ## Arguments
    ``tasks`` (names from ``ALL_TASKS``), ``d_model``, ``n_layer``, ``n_head``, ``ctx`` (the teacher),
    ``teacher_steps``, ``teacher_batch``, ``teacher_lr``; ``hmm_states`` (the lang domain's HMM);
    ``token_budget`` (student training tokens, all stages); ``eval_items`` (per task);
    ``eligibility`` (teacher score needed for a task to count); ``window_fraction`` (8: window =
    ctx / 8); ``sinks``.

    ## Tiers
    smoke: d 32 x 2 layers, ctx 48, 4 tasks, teacher 150 steps, 40k student tokens, 64 items per
    task. standard: d 64 x 2 layers x 2 heads, ctx 64, 8 tasks, teacher 1,200 steps x 64 items,
    0.6M student tokens, 200 items per task. full: d 256 x 6 layers, ctx 256, 12 tasks, 20,000
    teacher steps, 20M tokens, 1,000 items per task.

    ## Reference
    Hauzenberger, Schmidinger, Schmied, Hartl, Stap, Hoedt, Beck, Böck, Klambauer, Hochreiter,
    "Effective Distillation to Hybrid xLSTM Architectures" (arXiv 2603.15590): the Win-and-Tie
    rate and α* (App. A), read from the paper. The synthetic tasks, the teacher and all sizes are
    reconstructed.

    ## Version History
    - v0: initial release (superseded by v1: per-seed teachers that never passed recall8).
    - v1: :class:`LosslessDistillV1Task`.
    """

    id: ClassVar[str] = "papergym/LosslessDistill-v0"
    family: ClassVar[str] = "distill"
    paper: ClassVar[str] = "hauzenberger2026"
    metrics: ClassVar[Mapping[str, MetricDeclaration]] = {
        **_task_metrics(),
        "alpha_star": ("min", 0.0, 1.0), "alpha_all": ("min", 0.0, 1.0), "c_0": ("max", 0.0, 1.0),
        "c_0.02": ("max", 0.0, 1.0), "c_0.05": ("max", 0.0, 1.0), "c_0.1": ("max", 0.0, 1.0),
        "c_area": ("max", 0.0, 1.0), "cabs_0.05": ("max", 0.0, 1.0), "mean_recovery": ("max", 0.0, None),
        "min_recovery": ("max", 0.0, None), "exceeds_any": ("max", 0.0, 1.0),
        "memory_score": ("max", 0.0, 1.0), "n_eligible": ("max", 0.0, None), "kl": ("min", 0.0, None),
        "state_bytes_128": ("min", 0.0, None), "state_bytes_2048": ("min", 0.0, None),
        "hmm_bound": ("max", 0.0, 1.0),
    }

    def __init__(self, tier: str = "smoke",
                 tasks: Sequence[str] = ("vartrack3", "recall8", "copy16", "hmm32"),
                 d_model: int = 32, n_layer: int = 2, n_head: int = 2, ctx: int = 48,
                 teacher_steps: int = 150, teacher_batch: int = 64, teacher_lr: float = 3e-3,
                 hmm_states: int = 16, token_budget: int = 40_000, eval_items: int = 64,
                 eligibility: float = 0.3, window_fraction: int = 8, sinks: int = 4,
                 teacher_seed: int | None = None) -> None:
        super().__init__(tier=tier, tasks=list(tasks), d_model=d_model, n_layer=n_layer, n_head=n_head,
                         ctx=ctx, teacher_steps=teacher_steps, teacher_batch=teacher_batch,
                         teacher_lr=teacher_lr, hmm_states=hmm_states, token_budget=token_budget,
                         eval_items=eval_items, eligibility=eligibility, window_fraction=window_fraction,
                         sinks=sinks, teacher_seed=teacher_seed)
        tasks = [str(t) for t in tasks]
        unknown = [t for t in tasks if t not in ALL_TASKS]
        if not tasks or unknown or len(set(tasks)) != len(tasks):
            raise ValueError(f"{self.id}: tasks must be distinct names from {ALL_TASKS}, got {tasks}")
        for name, value in (("token_budget", token_budget), ("eval_items", eval_items),
                            ("teacher_steps", teacher_steps), ("window_fraction", window_fraction)):
            if not isinstance(value, int) or value < 2:
                raise ValueError(f"{self.id}: {name} must be an integer >= 2, got {value!r}")
        if not 0 < eligibility < 1:
            raise ValueError(f"{self.id}: eligibility must lie in (0, 1), got {eligibility}")
        if teacher_seed is not None and (not isinstance(teacher_seed, int) or teacher_seed < 0):
            raise ValueError(f"{self.id}: teacher_seed must be an integer >= 0 or None (one teacher per "
                             f"trial seed), got {teacher_seed!r}")
        self.teacher_seed = teacher_seed
        self.tasks = tasks
        self.spec = TeacherSpec(d_model=d_model, n_layer=n_layer, n_head=n_head, ctx=ctx, steps=teacher_steps,
                                batch=teacher_batch, lr=teacher_lr)
        self.hmm_states, self.token_budget, self.eval_items = hmm_states, token_budget, eval_items
        self.eligibility, self.sinks = eligibility, sinks
        self.window = ctx // window_fraction
        if not 1 <= self.window < ctx:
            raise ValueError(f"{self.id}: the window ctx / window_fraction = {self.window} must lie in "
                             "[1, ctx)")
        probe = self.suite(0).max_length(np.random.default_rng(0), draws=32)
        if probe > ctx:
            raise ValueError(f"{self.id}: items of {tasks} reach {probe} tokens, more than ctx = {ctx}")

    # ------------------------------------------------------------------ the cached teacher
    def world_seed(self, seed: int) -> int:
        """The seed of the teacher and its HMM language for trial ``seed``: the trial's own (v0), or
        ``teacher_seed`` for every trial (v1: one teacher, the students' training seeds vary)."""
        return int(seed) if self.teacher_seed is None else int(self.teacher_seed)

    def language(self, seed: int) -> synthlang.HMMLanguage | None:
        lengths = [int(t[3:]) for t in self.tasks if t.startswith("hmm")]
        if not lengths:
            return None
        # one HMM per teacher, public (the agent only ever sees its samples through the stream)
        return synthlang.HMMLanguage.random(self.hmm_states, len(tasks_mod.LETTERS), max(lengths),
                                            np.random.default_rng([LANG_TAG, self.world_seed(seed)]))

    def suite(self, seed: int) -> Suite:
        return Suite(self.tasks, self.language(seed))

    def teacher_entry(self, seed: int) -> cache.Entry:
        world = self.world_seed(seed)
        config = {"seed": world, "tasks": self.tasks, "spec": self.spec.as_dict(),
                  "hmm_states": self.hmm_states}
        return cache.Entry("distill/teacher", config,
                           build=lambda: teacher_mod.train_teacher(self.suite(seed), self.spec, world),
                           code=(tasks_mod, teacher_mod, gpt, train_mod, synthlang, hmm))

    def cache_entries(self, seeds: Sequence[int]) -> list[cache.Entry]:
        entries = {}
        for s in seeds:
            entry = self.teacher_entry(int(s))
            entries.setdefault(entry.key, entry)
        return list(entries.values())

    def teacher(self, seed: int) -> gpt.GPT:
        return load_teacher(cache.get(self.teacher_entry(seed)))

    # ------------------------------------------------------------------ protocol
    @property
    def budget(self) -> Budget:
        return Budget(tokens=self.token_budget, teacher_tokens=self.token_budget)

    def train_view(self, seed: int, budget: Budget) -> DistillView:
        return DistillView(self.suite(seed), self.teacher(seed), budget, seed, self.spec.ctx, self.window,
                           self.sinks)

    def eval_items_for(self, suite: Suite, seed: int) -> dict[str, list[Item]]:
        out = {}
        for index, task in enumerate(self.tasks):
            rng = np.random.default_rng(eval_seed_sequence(int(seed), EVAL_TAG, index))
            out[task] = suite.draw_many(task, self.eval_items, rng, held_out=True)
        return out

    def probe_causality(self, artifact: Any, seed: int) -> None:
        words = eval_seed_sequence(int(seed), PROBE_TAG).generate_state(1)
        gen = torch.Generator().manual_seed(int(words[0]))
        length = self.spec.ctx
        tokens = torch.randint(0, TOKENIZER.vocab_size, (4, length), generator=gen)
        with torch.no_grad():
            base = torch.as_tensor(artifact(tokens)).float()
            if base.shape != (4, length, TOKENIZER.vocab_size):
                raise ValueError(f"{self.id}: the artifact must map (B, T) ids to (B, T, "
                                 f"{TOKENIZER.vocab_size}) logits, got shape {tuple(base.shape)}")
            for cut in sorted({1, length // 3, length // 2, length - 2}):
                changed = tokens.clone()
                changed[:, cut + 1:] = torch.randint(0, TOKENIZER.vocab_size, changed[:, cut + 1:].shape,
                                                     generator=gen)
                other = torch.as_tensor(artifact(changed)).float()
                gap = float((other[:, : cut + 1] - base[:, : cut + 1]).abs().max())
                if not gap <= 1e-5:
                    raise ValueError(f"{self.id}: the artifact is not causal: changing tokens after position "
                                     f"{cut} moved the logits at or before it by {gap:.3g}")

    @staticmethod
    def _forward(model: Any, ids: np.ndarray) -> torch.Tensor:
        with torch.no_grad():
            return torch.cat([torch.as_tensor(model(torch.from_numpy(ids[i: i + CHUNK]))).float()
                              for i in range(0, len(ids), CHUNK)])

    def score_task(self, task: str, items: list[Item], logits: torch.Tensor) -> tuple[Any, torch.Tensor]:
        """The score and the per-position log-probabilities at the answer positions."""
        ids = torch.from_numpy(batch_ids(items))
        mask = torch.from_numpy(answer_mask(items, ids.shape[1]))[:, :-1]
        target = ids[:, 1:]
        logp = F.log_softmax(logits[:, :-1], dim=-1)
        if task.startswith("hmm"):
            letters = mask.clone()
            letters[torch.arange(len(items)), mask.sum(1) - 1 + mask.float().argmax(1)] = False  # drop EOS
            ce = -(logp.gather(-1, target[..., None]).squeeze(-1) * letters).sum() / letters.sum()
            return float(torch.exp(-ce)), logp[mask]
        correct = ((logits[:, :-1].argmax(-1) == target) | ~mask).all(-1)
        return Fraction(int(correct.sum()), len(items)), logp[mask]

    @staticmethod
    def hmm_bound(suite: Suite, items: dict[str, list[Item]]) -> float | None:
        """The exact HMM predictor's score on the held-out ``hmm`` items: exp(mean log p(x) / L) by
        the forward algorithm (an upper bound on any model's ``hmm`` score, up to sampling noise)."""
        language = suite.language
        length = language.length if language is not None else -1
        full = [t for t in items if t.startswith("hmm") and int(t[3:]) == length]
        if not full:
            return None
        x = np.array([[tasks_mod.LETTERS.index(c) for c in it.answer] for it in items[full[0]]])
        return float(np.exp(language.log_prob(x).mean() / language.length))

    def evaluate(self, artifact: Any, seed: int) -> EvalResult:
        if not callable(artifact):
            raise TypeError(f"{self.id} expects a callable causal module tokens -> logits, got "
                            f"{type(artifact).__name__}")
        if isinstance(artifact, torch.nn.Module):
            artifact.eval()
        self.probe_causality(artifact, seed)
        suite = self.suite(seed)
        teacher = self.teacher(seed)
        items = self.eval_items_for(suite, seed)
        S, T, units, kls = {}, {}, [], []
        for task in self.tasks:
            ids = batch_ids(items[task])
            s, logp_s = self.score_task(task, items[task], self._forward(artifact, ids))
            t, logp_t = self.score_task(task, items[task], self._forward(teacher, ids))
            S[task], T[task] = s, t
            kls.append((logp_t.exp() * (logp_t - logp_s)).sum(-1))
        eligible = [t for t in self.tasks if t.startswith("hmm") or T[t] >= self.eligibility]
        metrics: dict[str, float] = {"n_eligible": float(len(eligible)),
                                     "kl": float(torch.cat(kls).mean().clamp_min(0.0))}
        bound = self.hmm_bound(suite, items)
        if bound is not None:
            metrics["hmm_bound"] = bound
        for task in self.tasks:
            ok = task in eligible
            recovery = float(S[task] / T[task]) if T[task] > 0 else 0.0
            metrics.update({f"score_{task}": float(S[task]), f"teacher_{task}": float(T[task]),
                            f"eligible_{task}": float(ok), f"recovery_{task}": recovery})
            units.append({"instance": task, "domain": domain_of(task), "eligible": int(ok),
                          "score": float(S[task]), "teacher": float(T[task]), "recovery": recovery,
                          "delta": float(S[task] - T[task]),
                          "shortfall": float(max(0, 1 - S[task] / T[task])) if T[task] > 0 else 1.0,
                          "area": wintie.curve_area([S[task]], [T[task]]) if T[task] > 0 else 0.0})
        if eligible:
            s_e, t_e = [S[t] for t in eligible], [T[t] for t in eligible]
            memory = [float(S[t]) for t in eligible if domain_of(t) == "memory"]
            metrics.update({
                "alpha_star": float(wintie.critical_tolerance(s_e, t_e)),
                "alpha_all": float(wintie.full_tolerance(s_e, t_e)),
                "c_0": float(wintie.win_tie(s_e, t_e, 0)),
                "c_0.02": float(wintie.win_tie(s_e, t_e, "1/50")),
                "c_0.05": float(wintie.win_tie(s_e, t_e, "1/20")),
                "c_0.1": float(wintie.win_tie(s_e, t_e, "1/10")),
                "c_area": wintie.curve_area(s_e, t_e),
                "cabs_0.05": float(wintie.win_tie_abs(s_e, t_e, "1/20")),
                "mean_recovery": float(np.mean([float(s / t) for s, t in zip(s_e, t_e)])),
                "min_recovery": float(min(float(s / t) for s, t in zip(s_e, t_e))),
                "exceeds_any": float(any(s >= t for s, t in zip(s_e, t_e))),
                "memory_score": float(np.mean(memory)) if memory else 0.0,
            })
        else:  # a teacher that passes nothing: every student is lossless vacuously; say so by the count
            metrics.update({k: 0.0 for k in ("alpha_star", "alpha_all", "mean_recovery", "min_recovery",
                                              "exceeds_any", "memory_score", "c_area")})
        state_bytes = getattr(artifact, "state_bytes", None)
        if callable(state_bytes):
            metrics["state_bytes_128"] = float(state_bytes(128))
            metrics["state_bytes_2048"] = float(state_bytes(2048))
        return EvalResult(metrics=metrics, units=units, info=self.artifact_info(artifact))

    @staticmethod
    def artifact_info(artifact: Any) -> dict[str, Any]:
        """What the artifact says of its own making (``selection``: the candidate its agent chose
        on validation and the candidates' validation losses), kept verbatim as provenance when it
        is JSON; never a score."""
        selection = getattr(artifact, "selection", None)
        if not isinstance(selection, dict):
            return {}
        try:
            return {"artifact_selection": json.loads(json.dumps(selection))}
        except (TypeError, ValueError):
            return {}


class LosslessDistillV1Task(LosslessDistillTask):
    """
    ## Description
    v0's problem (lossless distillation of a transformer teacher into a sub-quadratic student,
    Hauzenberger et al. 2026) with **one teacher** for every trial: the teacher and its HMM
    language come from ``teacher_seed`` (default 0), trained once (cached) for longer than v0's
    per-seed teachers, so that it passes every task of its tier; the trial seed is the students'
    training seed, their stream order, and the held-out items scored. A claim over seeds is then
    one about distilling this teacher, as the paper's are about distilling Llama-3.1-8B.
    The content-addressed recall tasks are out of the standard tier: no teacher of this size
    learned them within the budget (recall8 at 0.26-0.34 after 3,000 steps, also with 3 layers,
    4 heads or d = 128, and recall alone); the memory domain is copy16, retrieval by position from
    beyond the students' 8-token window (copy24 is out too: beside copy16 the teachers learned
    one copy length or the other).

    ## Data
    As v0: ``train_view`` gives ``tasks``, ``domains``, ``ctx``, ``window``, ``sinks``,
    ``vocab_size``, ``pad_id``, ``teacher_config()``, ``teacher_state_dict()`` and the metered
    ``stream(domain, batch, outputs)`` (the teacher's logits and per-layer attention inputs and
    outputs on training items; budget ``tokens`` and ``teacher_tokens``).

    ## Artifact
    As v0: a causal module ``artifact(tokens) -> logits``, probed for causality first.

    ## Metrics
    As v0 (per task ``score_``, ``teacher_``, ``eligible_``, ``recovery_``; ``alpha_star`` primary,
    the Win-and-Tie rates, ``c_area``, ``alpha_all``, ``kl``, ``state_bytes_*``, ``hmm_bound``; one
    unit row per task).

    ## Episode End
    One artifact per trial.

    ## Arguments
    v0's, plus ``teacher_seed`` (default 0; ``None``: one teacher per trial seed, as v0).

    ## Tiers
    smoke: d 32 x 2 layers, ctx 48, 3 tasks, teacher 150 steps, 40k student tokens, 64 items per
    task. standard: d 64 x 2 layers x 2 heads, ctx 64, 6 tasks (no recall, no copy24), one teacher
    of 2,000 steps x 64 items, 0.3M student tokens, 150 items per task. full: v0's with one
    teacher.

    ## Reference
    As v0: Hauzenberger et al., arXiv 2603.15590 (Win-and-Tie, α*, App. A); the tasks, the teacher
    and all sizes are reconstructed.

    ## Version History
    - v1: one teacher (``teacher_seed``) for every trial seed, trained for 2,000 steps at standard;
      recall and copy24 out of the standard tier (no teacher of this size passes recall; copy24
      competed with copy16); 0.3M student tokens. Not comparable with v0.
    - v0: per-seed teachers (superseded).
    """

    id: ClassVar[str] = "papergym/LosslessDistill-v1"

    def __init__(self, tier: str = "smoke", tasks: Sequence[str] = ("vartrack3", "copy16", "hmm32"),
                 d_model: int = 32, n_layer: int = 2, n_head: int = 2, ctx: int = 48,
                 teacher_steps: int = 150, teacher_batch: int = 64, teacher_lr: float = 3e-3,
                 hmm_states: int = 16, token_budget: int = 40_000, eval_items: int = 64,
                 eligibility: float = 0.3, window_fraction: int = 8, sinks: int = 4,
                 teacher_seed: int | None = 0) -> None:
        super().__init__(tier=tier, tasks=tasks, d_model=d_model, n_layer=n_layer, n_head=n_head, ctx=ctx,
                         teacher_steps=teacher_steps, teacher_batch=teacher_batch, teacher_lr=teacher_lr,
                         hmm_states=hmm_states, token_budget=token_budget, eval_items=eval_items,
                         eligibility=eligibility, window_fraction=window_fraction, sinks=sinks,
                         teacher_seed=teacher_seed)
