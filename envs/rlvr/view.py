"""The fast batched path that learners use (``RLVRTask.train_view``), metered by responses.

``RLVRView`` hands out prompts from the training split, verifies responses, samples groups of
rollouts with the tinylm KV cache, and gives a fresh copy of the problem-owned SFT policy.
Every generated response is charged to the ``responses`` budget. With ``lag > 0`` learners must
use the problem-side stream (:mod:`papergym.envs.rlvr.async_lag`), so staleness is enforced.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from papergym.envs.rlvr.tasks import Instance, RLVRTaskDef, sample_split
from papergym.problem import Budget
from papergym.tinylm.gpt import GPT, sequence_logprobs
from papergym.tinylm.sampling import generate
from papergym.tinylm.tokenizer import CharTokenizer
from papergym.tuning import TuningRecord, canonical


@dataclass
class RolloutBatch:
    """One batch of rollouts, right-padded ``BOS prompt SEP response [EOS] PAD``.

    tokens (B, T) long; mask (B, T-1) float: 1 where ``tokens[:, 1:]`` is a response token
    (EOS included); behaviour_logprobs (B, T-1) fp32 log μ of those tokens (0 elsewhere);
    rewards (B,) in {+1, -1}; groups (B,) prompt index; policy_version (B,) the snapshot that
    generated each row; log_w (B,) problem-computed clamp(Σ log π_θ - log μ, ±20) under the
    latest pushed θ (0 on the synchronous path); ess (scalar) the ESS ratio of exp(log_w).
    """

    tokens: torch.Tensor
    mask: torch.Tensor
    behaviour_logprobs: torch.Tensor
    rewards: torch.Tensor
    groups: torch.Tensor
    policy_version: torch.Tensor
    log_w: torch.Tensor
    ess: float
    instances: list[Instance]
    responses: list[str]

    @property
    def size(self) -> int:
        return int(self.tokens.shape[0])


def ess_ratio(log_w: torch.Tensor) -> float:
    """ρ = (Σ w)² / (|B| Σ w²), computed stably from log-weights."""
    if log_w.numel() == 0:
        return 1.0
    shifted = log_w.double() - log_w.double().max()
    w = shifted.exp()
    return float(w.sum() ** 2 / (log_w.numel() * (w ** 2).sum()))


def assemble(
    tokenizer: CharTokenizer,
    instances: Sequence[Instance],
    responses: torch.Tensor,
    lengths: torch.Tensor,
    logprobs: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Right-padded training tensors from left-aligned generations."""
    prompts = [tokenizer.prompt_ids(inst.prompt) for inst in instances]
    width = max(len(p) + int(n) for p, n in zip(prompts, lengths))
    tokens = torch.full((len(prompts), width), tokenizer.pad, dtype=torch.long)
    mask = torch.zeros(len(prompts), width - 1)
    behaviour = torch.zeros(len(prompts), width - 1)
    for row, (p, n) in enumerate(zip(prompts, lengths.tolist())):
        tokens[row, :len(p)] = torch.tensor(p)
        tokens[row, len(p):len(p) + n] = responses[row, :n]
        mask[row, len(p) - 1:len(p) - 1 + n] = 1.0
        behaviour[row, len(p) - 1:len(p) - 1 + n] = logprobs[row, :n]
    return tokens, mask, behaviour


def response_texts(tokenizer: CharTokenizer, responses: torch.Tensor, finished: torch.Tensor
                   ) -> list[str | None]:
    """Decoded responses; ``None`` for a response that never emitted EOS (always wrong)."""
    return [tokenizer.decode(r) if bool(f) else None for r, f in zip(responses.tolist(), finished)]


def sample_responses(
    model: GPT,
    tokenizer: CharTokenizer,
    task_def: RLVRTaskDef,
    instances: Sequence[Instance],
    samples: int,
    temperature: float,
    top_p: float,
    generator: torch.Generator,
    chunk: int = 1024,
):  # noqa: ANN201 - returns (rows, generation pieces)
    """``samples`` responses per instance (rows grouped by instance); chunked generation."""
    rows = [inst for inst in instances for _ in range(samples)]
    pieces = []
    for start in range(0, len(rows), chunk):
        part = rows[start:start + chunk]
        pieces.append(generate(model, [tokenizer.prompt_ids(i.prompt) for i in part],
                               task_def.max_response_tokens, tokenizer.eos, tokenizer.pad,
                               generator, temperature=temperature, top_p=top_p))
    width = task_def.max_response_tokens
    responses = torch.cat([torch.nn.functional.pad(g.responses, (0, width - g.responses.shape[1]),
                                                   value=tokenizer.pad) for g in pieces])
    logprobs = torch.cat([torch.nn.functional.pad(g.logprobs, (0, width - g.logprobs.shape[1]))
                          for g in pieces])
    lengths = torch.cat([g.lengths for g in pieces])
    finished = torch.cat([g.finished for g in pieces])
    return rows, responses, logprobs, lengths, finished


def score(task_def: RLVRTaskDef, rows: Sequence[Instance], texts: Sequence[str | None]) -> np.ndarray:
    return np.array([t is not None and task_def.verify(i, t) for i, t in zip(rows, texts)])


class RLVRView:
    """What an RLVR learner sees. Attributes: ``tokenizer``, ``task_def``, ``lag``,
    ``lag_mode``, ``budget`` (``responses``), ``seed``.

    Methods: ``sample_prompts(n)``, ``verify(instances, responses)``, ``rollout(policy,
    instances, G, temperature, top_p)`` (synchronous only), ``stream(policy, prompts, G, ...)``
    (every lag), ``base_policy()``, ``validation_score(fit, config)``.

    ``tuning_runs`` (0 unless the problem grants them): ``validation_score(fit, config)`` runs
    ``fit(view)`` (a training function returning the trained policy) on a fresh view of each
    tuning seed (100, 101, or 100 alone with ``tuning_seeds=1``; each starts from its seed
    group's base and has the trial's response budget), scores Avg@16 at T = 0.6 on 128
    validation-split prompts (disjoint from eval) and
    returns the mean over tuning seeds. ``config`` (plain data) names every setting of ``fit``;
    the problem keys the run by it and the trial agent's identity (set by the harness, never by
    the agent; papergym.tuning), computes each once and shares it with every trial of that
    agent. Each call spends one ``tuning_runs``; the problem records the (configuration, score)
    pairs and the chosen one in the trial's info (``tuning``). A tuning view grants no tuning
    runs.
    """

    def __init__(self, task: object, seed: int, budget: Budget, tuning: bool = False) -> None:
        self._task = task
        self.seed = seed
        self.budget = budget
        self._tuning = tuning
        self.tuning_runs = 0 if tuning else int(getattr(task, "tuning_runs", 0))
        self.tuning = TuningRecord(self.tuning_runs)  # the problem's record of the tuning runs
        self.tokenizer: CharTokenizer = task.tokenizer
        self.task_def: RLVRTaskDef = task.task_def
        self.lag = int(task.lag)
        self.lag_mode = task.lag_mode
        self._rng = np.random.default_rng([seed, 17])
        self._torch_gen = torch.Generator().manual_seed(int(np.random.SeedSequence([seed, 23])
                                                            .generate_state(1)[0]))
        self._base: GPT | None = None
        self.streams: list[object] = []
        self.non_finite = False
        self.validation_curve: list[tuple[int, float]] = []
        self.ess_series: list[tuple[int, float]] = []
        self.tokens_per_update: list[int] = []

    # -- data ----------------------------------------------------------------------------
    def sample_prompts(self, n: int) -> list[Instance]:
        return [sample_split(self.task_def, self._rng, "train") for _ in range(n)]

    def verify(self, instances: Sequence[Instance], responses: Sequence[str | None]) -> np.ndarray:
        """+1 / -1 per response (``None`` = no EOS = wrong)."""
        return np.where(score(self.task_def, instances, responses), 1.0, -1.0)

    def base_policy(self) -> GPT:
        """A fresh copy of the problem-owned SFT policy of this seed."""
        if self._base is None:
            self._base = self._task.base_policy(self.seed)
        return copy.deepcopy(self._base)

    # -- rollouts ------------------------------------------------------------------------
    def rollout(self, policy: GPT, instances: Sequence[Instance], group_size: int,
                temperature: float = 1.0, top_p: float = 1.0) -> RolloutBatch:
        """G responses per prompt from ``policy`` itself (synchronous tasks only)."""
        if self.lag > 0:
            raise RuntimeError(
                f"this problem runs with lag={self.lag}: use view.stream(...) so the problem "
                "serves stale rollouts; rollout() is the synchronous path")
        return self._generate_batch({0: policy}, instances, group_size, np.zeros(
            len(instances) * group_size, dtype=np.int64), temperature, top_p, latest=None)

    def stream(self, policy: GPT, prompts_per_batch: int, group_size: int,
               temperature: float = 1.0, top_p: float = 1.0, lag: int | None = None) -> object:
        """The problem-side rollout stream (``async_lag``). ``lag`` defaults to the problem's;
        a learner may request another staleness (the synchronous reference asks for 0), and
        the lag actually served is reported by the problem as the metric ``lag_served``."""
        from papergym.envs.rlvr.async_lag import AsyncLagStream

        s = AsyncLagStream(self, policy, prompts_per_batch, group_size, temperature, top_p,
                           lag=self.lag if lag is None else lag)
        self.streams.append(s)
        return s

    def _generate_batch(self, models: dict[int, GPT], instances: Sequence[Instance],
                        group_size: int, versions: np.ndarray, temperature: float,
                        top_p: float, latest: GPT | None) -> RolloutBatch:
        self.budget.spend("responses", len(instances) * group_size)
        rows = [inst for inst in instances for _ in range(group_size)]
        width = self.task_def.max_response_tokens
        responses = torch.full((len(rows), width), self.tokenizer.pad, dtype=torch.long)
        logprobs = torch.zeros(len(rows), width)
        lengths = torch.zeros(len(rows), dtype=torch.long)
        finished = torch.zeros(len(rows), dtype=torch.bool)
        for version in sorted(set(versions.tolist())):
            index = np.flatnonzero(versions == version)
            gen = generate(models[version], [self.tokenizer.prompt_ids(rows[i].prompt) for i in index],
                           width, self.tokenizer.eos, self.tokenizer.pad, self._torch_gen,
                           temperature=temperature, top_p=top_p)
            t = torch.as_tensor(index)
            responses[t, :gen.responses.shape[1]] = gen.responses
            logprobs[t, :gen.logprobs.shape[1]] = gen.logprobs
            lengths[t], finished[t] = gen.lengths, gen.finished
        texts = response_texts(self.tokenizer, responses, finished)
        rewards = torch.as_tensor(self.verify(rows, texts), dtype=torch.float32)
        tokens, mask, behaviour = assemble(self.tokenizer, rows, responses, lengths, logprobs)
        log_w = torch.zeros(len(rows))
        if latest is not None:  # importance weights under the latest pushed θ (problem-side)
            with torch.no_grad():
                current, _ = sequence_logprobs(latest, tokens, torch.cat(
                    [torch.zeros(len(rows), 1), mask], dim=1), temperature=temperature)
            log_w = ((current - behaviour) * mask).sum(-1).clamp(-20.0, 20.0)
        self.tokens_per_update.append(int(mask.sum()))
        return RolloutBatch(
            tokens=tokens, mask=mask, behaviour_logprobs=behaviour, rewards=rewards,
            groups=torch.arange(len(instances)).repeat_interleave(group_size),
            policy_version=torch.as_tensor(versions), log_w=log_w, ess=ess_ratio(log_w),
            instances=list(rows), responses=[t if t is not None else "" for t in texts])

    # -- shared tuning runs --------------------------------------------------------------
    def validation_score(self, fit: Callable[[RLVRView], GPT], config: Mapping[str, Any]) -> float:
        if self._tuning:
            raise PermissionError("a tuning run cannot tune again")
        canonical(config)  # plain data, or a TypeError before any budget is spent
        self.budget.spend("tuning_runs", 1)
        score = float(self._task.tuning_score(fit, config))
        self.tuning.add(config, score)
        return score

    def tuning_info(self) -> dict[str, object]:
        """The tuning runs this view scored (papergym.tuning.TuningRecord.summary)."""
        summary = self.tuning.summary()
        return {"tuning": summary} if summary else {}

    # -- problem-side monitoring (never reported by the agent) ---------------------------
    def record_validation(self, update: int, model: GPT) -> None:
        if self._tuning:
            return  # a tuning run is scored once, at its end
        self.validation_curve.append((update, self._task.validation_accuracy(model, self.seed,
                                                                              update)))
