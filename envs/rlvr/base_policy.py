"""The problem-owned SFT base policy: every learner of a seed starts from the same weights.

Recipe [recon]: supervised fine-tuning of a fresh tinylm GPT (initialized from the seed) on
(prompt, uniformly random valid solution printed with random operand order) pairs from the
training split, with 25% of targets corrupted (one number / index / digit / operator changed),
loss on response tokens and EOS only, AdamW with linear warmup. Every ``check_every`` steps the
validation accuracy (``check_samples`` samples per validation prompt at ``check_temperature``;
v0/v1: one sample at T = 1) is measured. Without a band, training stops at the first
checkpoint at or above ``target_accuracy`` or at the step cap. With ``target_band = (lo, hi)``
(v2) training stops at the first check above ``hi`` (or at the cap) and returns the checked
checkpoint whose accuracy lies closest to the band's centre (:func:`select_checkpoint`), so a
fast-rising check does not overshoot the band. The result is a
:mod:`papergym.cache` entry per (problem id, tier, seed, size, model, recipe, code), built once
in the runner's prepare phase.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np
import torch

from papergym import cache
from papergym.envs.rlvr.tasks import RLVRTaskDef, sample_split
from papergym.tinylm import gpt, sampling
from papergym.tinylm import tokenizer as tokenizer_module
from papergym.tinylm.gpt import GPT, GPTConfig
from papergym.tinylm.tokenizer import CharTokenizer


@dataclass(frozen=True)
class SFTRecipe:
    max_steps: int = 400
    batch_size: int = 64
    lr: float = 2e-3
    warmup: int = 50
    weight_decay: float = 0.01
    corrupt_fraction: float = 0.25
    check_every: int = 100
    target_accuracy: float = 0.25
    validation_prompts: int = 64
    pool_size: int = 2000  # solved training instances the SFT batches are drawn from
    target_band: tuple[float, float] | None = None  # v2: select the check closest to the centre
    check_samples: int = 1
    check_temperature: float = 1.0


def select_checkpoint(checks: list[tuple[int, float]], band: tuple[float, float]) -> int:
    """The index of the check (step, accuracy) whose accuracy lies closest to the band's centre
    (the earliest on ties). The checks run up to the first one above the band."""
    centre = 0.5 * (band[0] + band[1])
    return min(range(len(checks)), key=lambda i: (abs(checks[i][1] - centre), i))


def train_sft(task_def: RLVRTaskDef, tokenizer: CharTokenizer, config: GPTConfig,
              recipe: SFTRecipe, seed: int) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
    torch_gen = torch.Generator().manual_seed(int(np.random.SeedSequence([seed, 3]).generate_state(1)[0]))
    rng = np.random.default_rng([seed, 5])
    model = GPT(config, generator=torch_gen)
    pool = [sample_split(task_def, rng, "train") for _ in range(recipe.pool_size)]
    validation = [sample_split(task_def, rng, "validation") for _ in range(recipe.validation_prompts)]
    optimizer = torch.optim.AdamW(model.parameters(), lr=recipe.lr, weight_decay=recipe.weight_decay)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, (step + 1) / recipe.warmup))
    accuracy, steps = 0.0, 0
    band = tuple(recipe.target_band) if recipe.target_band is not None else None
    if band is not None and not 0.0 <= band[0] <= band[1] <= 1.0:
        raise ValueError(f"target_band must satisfy 0 <= lo <= hi <= 1, got {band}")
    checks: list[tuple[int, float]] = []
    states: list[dict[str, torch.Tensor]] = []
    for step in range(1, recipe.max_steps + 1):
        rows = []
        for index in rng.integers(len(pool), size=recipe.batch_size):
            instance = pool[int(index)]
            target = task_def.render(instance, rng)
            if rng.random() < recipe.corrupt_fraction:
                target = task_def.corrupt(target, rng)
            rows.append((tokenizer.prompt_ids(instance.prompt), tokenizer.encode(target) + [tokenizer.eos]))
        width = max(len(p) + len(r) for p, r in rows)
        tokens = torch.full((len(rows), width), tokenizer.pad, dtype=torch.long)
        weights = torch.zeros(len(rows), width - 1)
        for i, (p, r) in enumerate(rows):
            tokens[i, :len(p) + len(r)] = torch.tensor(p + r)
            weights[i, len(p) - 1:len(p) - 1 + len(r)] = 1.0  # response tokens and EOS only
        logits = model(tokens[:, :-1])
        nll = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1), reduction="none")
        loss = (nll * weights.reshape(-1)).sum() / weights.sum()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        steps = step
        if step % recipe.check_every == 0 or step == recipe.max_steps:
            accuracy = validation_accuracy(model, task_def, tokenizer, validation, torch_gen,
                                           recipe.check_samples, recipe.check_temperature)
            if band is None:
                if accuracy >= recipe.target_accuracy:
                    break
                continue
            checks.append((step, accuracy))
            states.append({k: v.detach().clone() for k, v in model.state_dict().items()})
            if accuracy > band[1]:
                break
    if band is not None and checks:
        chosen = select_checkpoint(checks, band)
        (steps, accuracy), state = checks[chosen], states[chosen]
        return state, {"sft_steps": float(steps), "sft_validation_accuracy": accuracy,
                       "sft_checks": float(len(checks)), "sft_last_step": float(checks[-1][0])}
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    return state, {"sft_steps": float(steps), "sft_validation_accuracy": accuracy}


def validation_accuracy(model: GPT, task_def: RLVRTaskDef, tokenizer: CharTokenizer,
                        instances: list, generator: torch.Generator, samples: int = 1,
                        temperature: float = 1.0) -> float:
    rows = [i for i in instances for _ in range(samples)]
    gen = sampling.generate(model, [tokenizer.prompt_ids(i.prompt) for i in rows],
                            task_def.max_response_tokens, tokenizer.eos, tokenizer.pad, generator,
                            temperature=temperature)
    correct = [bool(f) and task_def.verify(i, tokenizer.decode(r))
               for i, r, f in zip(rows, gen.responses.tolist(), gen.finished)]
    return float(np.mean(correct))


def sft_entry(problem_id: str, tier: str, seed: int, task_def: RLVRTaskDef,
              tokenizer: CharTokenizer, config: GPTConfig, recipe: SFTRecipe) -> cache.Entry:
    """The cache entry of one seed's SFT base: (state dict, info)."""
    from papergym.envs.rlvr import tasks

    return cache.Entry(
        "rlvr/sft",
        config={"problem": problem_id, "tier": tier, "seed": seed, "size": task_def.size,
                "model": config.as_dict(), "recipe": recipe.__dict__},
        build=lambda: train_sft(task_def, tokenizer, config, recipe, seed),
        code=(sys.modules[__name__], tasks, gpt, sampling, tokenizer_module))


def load_base_policy(problem_id: str, tier: str, seed: int, task_def: RLVRTaskDef,
                     tokenizer: CharTokenizer, config: GPTConfig, recipe: SFTRecipe
                     ) -> tuple[GPT, dict[str, float]]:
    state, info = cache.get(sft_entry(problem_id, tier, seed, task_def, tokenizer, config, recipe))
    model = GPT(config)
    model.load_state_dict(state)
    return model, info
