"""``RLVREnv``: the token-level Gymnasium view of the four verifiable tasks, and their Tasks."""

from __future__ import annotations

from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from papergym.actions import check_action
from papergym.envs.rlvr.task import RLVRTask, tokenizer
from papergym.envs.rlvr.tasks import Instance, make_task_def, sample_split


class RLVREnv(gym.Env):
    """Verifiable-reward language tasks as a token-level MDP (one episode = one prompt).

    ## Description
    The agent writes a response to a prompt one character token at a time; an exact verifier
    scores the finished response. Four tasks share this env (ids in ``Arguments``):
    Countdown (``C3,7,12;33`` -> an expression over + − × ÷ ( ) using each given number at
    most once whose value is the target; exact rational arithmetic), Subset-sum (``S4,9,2;15``
    -> strictly increasing 0-based indices whose values sum to the target), Mod-linear
    (``M5x+3=7;11`` -> x in [0, p) with a·x + b ≡ c mod p; one answer, a control) and
    Add-scratch (``A4821+9670`` -> per-digit "<sum digit><carry>" pairs from the least
    significant digit, ``=``, the sum; only the digits after the last ``=`` are checked).
    This is the substrate of two papers: ResRL (negative-sample projection residual RL) and
    VCPO (variance-controlled off-policy RL). Learners normally use the fast batched path of
    ``RLVRTask.train_view`` (same tasks, same verifier); this env is the standard Gymnasium API.

    ## Action Space
    ``Discrete(28)``: a token id of the character tokenizer (``0-9 + - * / ( ) = , ; x C S M A``
    then BOS, SEP, EOS, PAD). EOS ends the response. Out-of-range actions raise
    ``gymnasium.error.InvalidAction``; non-finite or non-integer actions raise ``ValueError``.

    ## Observation Space
    ``MultiDiscrete([28] * ctx)`` int64: ``BOS prompt SEP generated-prefix`` followed by PAD up
    to ``ctx = prompt bound + 2 + max_response_tokens``.

    ## Rewards
    0 on every step except the last, which gets +1 if the verifier accepts the response, else −1.

    ## Starting State
    A prompt drawn from the training split (sha256(prompt) mod 10 ∉ {0, 1}) with
    ``self.np_random``; ``reset(options={"instance": Instance})`` sets one explicitly.

    ## Episode End
    Terminated at EOS, or when the response reaches ``max_response_tokens`` (EOS included)
    without EOS — then it is verified as is, hence −1. ``info`` at the end: ``prompt``,
    ``response``, ``correct``.
    ``max_response_tokens`` is the registered ``max_episode_steps``: through
    ``gymnasium.make`` a response that reaches it is also flagged truncated.

    ## Arguments
    ``size``: countdown numbers n / subset-sum values n (≤ 10) / mod-linear p_max /
    add-scratch digits n (default: the smoke tier's, 3 / 6 / 13 / 4). ``render_mode``:
    ``"ansi"`` or None. Ids:
    ``papergym/RLVRCountdown-v0``, ``papergym/RLVRSubsetSum-v0``, ``papergym/RLVRModLinear-v0``,
    ``papergym/RLVRAddScratch-v0`` (and ``-v1``, ``-v2``). Task-only kwargs (``RLVRTask``):
    policy size, SFT recipe, response budget, lag, evaluation sizes (see
    ``papergym.envs.rlvr.task.TASK_KWARGS``), and ``tuning_runs`` (default 0): the shared
    tuning runs the training view grants (``view.validation_score(fit, key)``: ``fit`` trained
    on tuning seeds 100 and 101, each from its seed group's base, scored by Avg@16 at T = 0.6 on
    128 validation-split prompts, disjoint from eval; the mean over the two seeds, computed once
    per configuration key and shared by every trial; the trial's info records every scored key
    and the best); ``tuning_seeds`` (default 2): how many of those tuning seeds, from 100, each
    run trains on (1: seed 100 only).

    ## Tiers
    v2 (``-v2`` ids): as v1 (below) but add-scratch n=5 at the standard tier, and the SFT base
    is chosen inside a validation-accuracy band: every ``sft_check_every`` (25) steps the
    accuracy on ``sft_validation_prompts`` (256) validation prompts x ``sft_check_samples`` (4)
    samples at T = 0.6 (Avg@16's temperature) is measured; training stops at the first check
    above ``sft_band_high`` (0.5) or at the cap (6,000 standard steps) and keeps the checked
    checkpoint closest to the band's centre (0.4). Standard: 60% corrupted targets,
    ``target_gain`` 0.2. Smoke: checks every 25 steps on 32 prompts x 2 samples.
    v1 (``-v1`` ids, superseded): smoke: countdown n=3, subset n=4, p ≤ 13, add n=4; GPT d=32, 1 layer; SFT
    150 steps. standard: countdown n=3, subset n=5, p ≤ 97, add n=4; GPT d=64, 2 layers, 2 heads
    (~0.1M); SFT 1,500 fixed steps on 20k training instances with 30% corrupted targets
    (``corrupt_fraction``, ``sft_pool_size``), one base per seed group (``sft_seed_pool=3``:
    seed s starts from the base of s mod 3); RL budget 12,800 responses (100 updates × 16
    prompts × G=8); one sealed eval set of 256 prompts for every seed (Avg@16; final accuracy
    × 8 samples; Pass@k n=64 on the first 128); learning curve every 10 updates on 128
    validation prompts × 4 samples. full: d=256, 6 layers, 8 heads; SFT ≤ 20k steps; 512,000
    responses; 512 eval prompts, Pass@k n=256. The spec's standard policy (d=128, 4 layers) is
    cut to fit a shared 2-core machine; the v1 subset-sum base scores Avg@16 ~0.22.
    v0 (``-v0`` ids, superseded): as v1 but subset n=8, add n=8, SFT ≤ 1500 steps stopping at
    validation accuracy 0.25 with 25% corruption and one base for all seeds; RL budget 1,536
    responses; eval 48 prompts drawn per seed, Pass@k n=128 on 16.

    ## Metrics (RLVRTask.evaluate, on eval-only prompts, problem-seeded sampling)
    ``avg_at_16`` (16 samples, T=0.6), ``pass_at_k`` for k = 1, 2, 4, … ≤ n (unbiased, T=1),
    ``pass_at_max``, ``distinct_correct`` (canonical forms among the n samples), ``token_entropy``
    (T=1), ``lld`` (mean Δ log π(y⁺|x) from base to final on base-generated correct responses),
    ``final_accuracy`` (T=0.8, top-p 0.7), learning curve on validation prompts every
    ``curve_every`` updates, ``ess_min/mean/window_min`` (the problem's ESS series),
    ``collapsed``, ``steps_to_target`` and ``modelled_time_to_target`` (see task.py), ``lag_served``.
    v1 also stores one unit per block of ``unit_prompts`` (8) consecutive eval prompts
    (``avg_at_16``, ``final_accuracy``, and on the Pass@k prompts ``pass_at_k`` and
    ``distinct_correct``, each the block's mean) so claims pair per prompt block (one
    prompt's score is mostly 0 or 1 for both sides, which degenerates rank tests);
    ``collapsed`` = the mean of the last 3 curve points below the base's point by more than
    ``collapse_margin`` (0.1, about 4 standard errors at 512 samples per point) or non-finite
    weights; ``reached_target`` = the curve held base + ``target_gain`` (0.03) for ``sustain`` (2)
    consecutive points, and only then are ``steps_to_target`` and ``modelled_time_to_target``
    (c_gen, c_train measured by ``benchmarks/perf/rlvr_token_costs.py``) stored.

    ## Reference
    ResRL (arXiv 2605.00380; code 1229095296/ResRL) and VCPO (arXiv 2602.17616; code
    mit-han-lab/vcpo). Tasks, formats, tokenizer, SFT recipe and sizes are reconstructed
    [recon] for a CPU-scale substrate; the papers used LLMs on math, code and tool use.

    ## Version History
    * v0: initial release; superseded by v1 (its standard-tier SFT base could not do the task
      and its eval prompts changed with the seed).
    * v1: the env is unchanged (default size from the v1 tiers); the Task adds
      ``corrupt_fraction`` and ``sft_pool_size`` arguments, a fixed-step SFT base per seed group,
      one sealed eval set for every seed with per-prompt units, the collapse rule relative to
      the base, sustained target crossings and measured per-token costs; superseded by v2 (the
      fixed-step subset-sum base scored Avg@16 ~0.22, below the 0.3-0.5 band, RL moved it
      ~+0.03, and a fixed-step base was a lottery across seeds).
    * v2: the env is unchanged (add-scratch standard n = 5); the SFT base is the checked
      checkpoint closest to the centre of a validation-accuracy band (0.3-0.5 at T = 0.6,
      256 validation prompts x 4 samples every 25 steps, stopping at the first check above
      the band; ``sft_band_low/high``, ``sft_check_samples``, ``sft_check_temperature``,
      ``sft_validation_prompts``).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["ansi"]}
    task_name: ClassVar[str] = ""

    version: ClassVar[int] = 0

    @property
    def _name(self) -> str:  # the registered id, named in every bad-action error
        name = type(self).__name__.removesuffix("V1").removesuffix("V2").removesuffix("Env")
        return f"papergym/RLVR{name}-v{self.version}"

    def __init__(self, size: int | None = None, render_mode: str | None = None) -> None:
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', got {render_mode!r}")
        self.render_mode = render_mode
        self.task_def = make_task_def(self.task_name, size)
        self.tokenizer = tokenizer()
        self.max_response_tokens = self.task_def.max_response_tokens
        self.ctx = self.task_def.prompt_length_bound() + 2 + self.max_response_tokens
        vocab = self.tokenizer.vocab_size
        self.action_space = spaces.Discrete(vocab)
        self.observation_space = spaces.MultiDiscrete(np.full(self.ctx, vocab), dtype=np.int64)
        self.instance: Instance | None = None
        self._prompt_ids: list[int] = []
        self._response: list[int] = []

    def _observation(self) -> np.ndarray:
        obs = np.full(self.ctx, self.tokenizer.pad, dtype=np.int64)
        ids = self._prompt_ids + self._response
        obs[:len(ids)] = ids
        return obs

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):  # noqa: ANN201
        super().reset(seed=seed)
        if options and "instance" in options:
            self.instance = options["instance"]
        else:
            self.instance = sample_split(self.task_def, self.np_random, "train")
        self._prompt_ids = self.tokenizer.prompt_ids(self.instance.prompt)
        self._response = []
        return self._observation(), {"prompt": self.instance.prompt}

    def step(self, action: Any):  # noqa: ANN201
        if self.instance is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        token = check_action(self.action_space, action, self._name)  # one integer token id
        self._response.append(token)
        ended_by_eos = token == self.tokenizer.eos
        terminated = ended_by_eos or len(self._response) >= self.max_response_tokens
        reward, info = 0.0, {}
        if terminated:
            text = self.tokenizer.decode(self._response)
            correct = ended_by_eos and self.task_def.verify(self.instance, text)
            reward = 1.0 if correct else -1.0
            info = {"prompt": self.instance.prompt, "response": text, "correct": bool(correct)}
        return self._observation(), reward, terminated, False, info

    def render(self) -> str | None:
        if self.render_mode != "ansi" or self.instance is None:
            return None
        return f"{self.instance.prompt} -> {self.tokenizer.decode(self._response)}\n"


class CountdownEnv(RLVREnv):
    """Countdown: reach a target with an arithmetic expression (``papergym/RLVRCountdown-v0``).

    ## Description
    The prompt ``C3,7,12;33`` lists n numbers in [1, 20] and a target in [1, 99]; the answer is
    an expression over ``+ - * / ( )`` using each given number at most once whose exact rational
    value is the target (several answers usually exist; distinct ones are counted canonically).
    The substrate of the ResRL and VCPO benchmarks.

    ## Action Space
    ``Discrete(28)``: a character token id (see :class:`RLVREnv`); EOS ends the response.
    Out-of-range ids raise ``gymnasium.error.InvalidAction``, non-finite or non-integer ones
    ``ValueError``.

    ## Observation Space
    ``MultiDiscrete([28] * ctx)`` int64: ``BOS prompt SEP generated-prefix`` then PAD; ctx = 27
    at n = 3 (prompt bound 3n + 3, response ≤ 5n − 2 tokens).

    ## Rewards
    0 on every step except the last: +1 if the exact verifier accepts the response, else −1.

    ## Starting State
    A training-split prompt (sha256(prompt) mod 10 ∉ {0, 1}) drawn with ``self.np_random``;
    ``reset(options={"instance": Instance})`` sets one explicitly.

    ## Episode End
    Terminated at EOS or when the response reaches ``max_response_tokens`` (EOS included);
    ``info`` at the end holds ``prompt``, ``response`` and ``correct``. ``max_response_tokens``
    is the registered ``max_episode_steps``: through ``gymnasium.make`` a response that
    reaches it is also flagged truncated.

    ## Arguments
    ``size`` (default 3): how many numbers the prompt lists, 2 ≤ n ≤ 10. ``render_mode``:
    ``"ansi"`` or None.

    ## Tiers
    smoke n = 3, standard n = 3, full n = 4 (policy and RL budgets: :class:`RLVREnv`).

    ## Reference
    ResRL (arXiv 2605.00380) and VCPO (arXiv 2602.17616); the task, its format and sizes are
    reconstructed [recon] for a CPU-scale substrate. The scoring Task (``CountdownTask``) is
    documented in :class:`RLVREnv` (Metrics).

    ## Version History
    * v0: initial release; superseded by v1 (its standard-tier SFT base could not do the task
      and its eval prompts changed with the seed).
    * v1: the env is unchanged (default size from the v1 tiers); the Task adds
      ``corrupt_fraction`` and ``sft_pool_size`` arguments, a fixed-step SFT base per seed group,
      one sealed eval set for every seed with per-prompt units, the collapse rule relative to
      the base, sustained target crossings and measured per-token costs; superseded by v2 (the
      fixed-step subset-sum base scored Avg@16 ~0.22, below the 0.3-0.5 band, RL moved it
      ~+0.03, and a fixed-step base was a lottery across seeds).
    * v2: the env is unchanged (add-scratch standard n = 5); the SFT base is the checked
      checkpoint closest to the centre of a validation-accuracy band (0.3-0.5 at T = 0.6,
      256 validation prompts x 4 samples every 25 steps, stopping at the first check above
      the band; ``sft_band_low/high``, ``sft_check_samples``, ``sft_check_temperature``,
      ``sft_validation_prompts``).
    """

    task_name = "countdown"


class SubsetSumEnv(RLVREnv):
    """Subset-sum: pick indices whose values sum to a target (``papergym/RLVRSubsetSum-v0``).

    ## Description
    The prompt ``S4,9,2;15`` lists n values in [1, 30] and the sum of a random non-empty subset;
    the answer is strictly increasing 0-based indices, comma-separated (``0,2``), whose values
    sum to the target. Several subsets may be correct.

    ## Action Space
    ``Discrete(28)``: a character token id (see :class:`RLVREnv`); EOS ends the response.
    Out-of-range ids raise ``gymnasium.error.InvalidAction``, non-finite or non-integer ones
    ``ValueError``.

    ## Observation Space
    ``MultiDiscrete([28] * ctx)`` int64: ``BOS prompt SEP generated-prefix`` then PAD; ctx = 36
    at n = 6 (prompt bound 3n + 4, response ≤ 2n tokens).

    ## Rewards
    0 on every step except the last: +1 if the exact verifier accepts the response, else −1.

    ## Starting State
    A training-split prompt (sha256(prompt) mod 10 ∉ {0, 1}) drawn with ``self.np_random``;
    ``reset(options={"instance": Instance})`` sets one explicitly.

    ## Episode End
    Terminated at EOS or when the response reaches ``max_response_tokens`` (EOS included);
    ``info`` at the end holds ``prompt``, ``response`` and ``correct``. ``max_response_tokens``
    is the registered ``max_episode_steps``: through ``gymnasium.make`` a response that
    reaches it is also flagged truncated.

    ## Arguments
    ``size`` (default 6): how many values the prompt lists, 1 ≤ n ≤ 10 (single-digit indices).
    ``render_mode``: ``"ansi"`` or None.

    ## Tiers
    v0: smoke n = 6, standard n = 8, full n = 10; v1 and v2: 4 / 5 / 8.

    ## Reference
    ResRL (arXiv 2605.00380) and VCPO (arXiv 2602.17616); the task, its format and sizes are
    reconstructed [recon] for a CPU-scale substrate. The scoring Task (``SubsetSumTask``) is
    documented in :class:`RLVREnv` (Metrics).

    ## Version History
    * v0: initial release; superseded by v1 (its standard-tier SFT base could not do the task
      and its eval prompts changed with the seed).
    * v1: the env is unchanged (default size from the v1 tiers); the Task adds
      ``corrupt_fraction`` and ``sft_pool_size`` arguments, a fixed-step SFT base per seed group,
      one sealed eval set for every seed with per-prompt units, the collapse rule relative to
      the base, sustained target crossings and measured per-token costs; superseded by v2 (the
      fixed-step subset-sum base scored Avg@16 ~0.22, below the 0.3-0.5 band, RL moved it
      ~+0.03, and a fixed-step base was a lottery across seeds).
    * v2: the env is unchanged (add-scratch standard n = 5); the SFT base is the checked
      checkpoint closest to the centre of a validation-accuracy band (0.3-0.5 at T = 0.6,
      256 validation prompts x 4 samples every 25 steps, stopping at the first check above
      the band; ``sft_band_low/high``, ``sft_check_samples``, ``sft_check_temperature``,
      ``sft_validation_prompts``).
    """

    task_name = "subset_sum"


class ModLinearEnv(RLVREnv):
    """Mod-linear: solve a·x + b ≡ c (mod p) (``papergym/RLVRModLinear-v0``).

    ## Description
    The prompt ``M5x+3=7;11`` gives a, b, c and a prime p (5 ≤ p ≤ p_max); the answer is the
    unique x in [0, p) with a·x + b ≡ c mod p, written without leading zeros. One answer per
    prompt: a control task for the diversity metrics.

    ## Action Space
    ``Discrete(28)``: a character token id (see :class:`RLVREnv`); EOS ends the response.
    Out-of-range ids raise ``gymnasium.error.InvalidAction``, non-finite or non-integer ones
    ``ValueError``.

    ## Observation Space
    ``MultiDiscrete([28] * ctx)`` int64: ``BOS prompt SEP generated-prefix`` then PAD; ctx = 18
    at p_max = 13 (prompt bound 4·digits(p_max) + 5, response ≤ digits(p_max) + 1 tokens).

    ## Rewards
    0 on every step except the last: +1 if the exact verifier accepts the response, else −1.

    ## Starting State
    A training-split prompt (sha256(prompt) mod 10 ∉ {0, 1}) drawn with ``self.np_random``;
    ``reset(options={"instance": Instance})`` sets one explicitly.

    ## Episode End
    Terminated at EOS or when the response reaches ``max_response_tokens`` (EOS included);
    ``info`` at the end holds ``prompt``, ``response`` and ``correct``. ``max_response_tokens``
    is the registered ``max_episode_steps``: through ``gymnasium.make`` a response that
    reaches it is also flagged truncated.

    ## Arguments
    ``size`` (default 13): p_max, the largest prime modulus, 5 ≤ p_max ≤ 10,000.
    ``render_mode``: ``"ansi"`` or None.

    ## Tiers
    smoke p_max = 13, standard and full p_max = 97.

    ## Reference
    ResRL (arXiv 2605.00380) and VCPO (arXiv 2602.17616); the task, its format and sizes are
    reconstructed [recon] for a CPU-scale substrate. The scoring Task (``ModLinearTask``) is
    documented in :class:`RLVREnv` (Metrics).

    ## Version History
    * v0: initial release; superseded by v1 (its standard-tier SFT base could not do the task
      and its eval prompts changed with the seed).
    * v1: the env is unchanged (default size from the v1 tiers); the Task adds
      ``corrupt_fraction`` and ``sft_pool_size`` arguments, a fixed-step SFT base per seed group,
      one sealed eval set for every seed with per-prompt units, the collapse rule relative to
      the base, sustained target crossings and measured per-token costs; superseded by v2 (the
      fixed-step subset-sum base scored Avg@16 ~0.22, below the 0.3-0.5 band, RL moved it
      ~+0.03, and a fixed-step base was a lottery across seeds).
    * v2: the env is unchanged (add-scratch standard n = 5); the SFT base is the checked
      checkpoint closest to the centre of a validation-accuracy band (0.3-0.5 at T = 0.6,
      256 validation prompts x 4 samples every 25 steps, stopping at the first check above
      the band; ``sft_band_low/high``, ``sft_check_samples``, ``sft_check_temperature``,
      ``sft_validation_prompts``).
    """

    task_name = "mod_linear"


class AddScratchEnv(RLVREnv):
    """Add-scratch: long addition with a digit-by-digit scratchpad (``papergym/RLVRAddScratch-v0``).

    ## Description
    The prompt ``A4821+9670`` adds two n-digit numbers; the response writes per-digit
    ``<sum digit><carry>`` pairs from the least significant digit, comma-separated, then ``=``
    and the sum. Only the digits after the last ``=`` are verified (the scratchpad is free).

    ## Action Space
    ``Discrete(28)``: a character token id (see :class:`RLVREnv`); EOS ends the response.
    Out-of-range ids raise ``gymnasium.error.InvalidAction``, non-finite or non-integer ones
    ``ValueError``.

    ## Observation Space
    ``MultiDiscrete([28] * ctx)`` int64: ``BOS prompt SEP generated-prefix`` then PAD; ctx = 30
    at n = 4 (prompt bound 2n + 2, response ≤ 4n + 2 tokens).

    ## Rewards
    0 on every step except the last: +1 if the exact verifier accepts the response, else −1.

    ## Starting State
    A training-split prompt (sha256(prompt) mod 10 ∉ {0, 1}) drawn with ``self.np_random``;
    ``reset(options={"instance": Instance})`` sets one explicitly.

    ## Episode End
    Terminated at EOS or when the response reaches ``max_response_tokens`` (EOS included);
    ``info`` at the end holds ``prompt``, ``response`` and ``correct``. ``max_response_tokens``
    is the registered ``max_episode_steps``: through ``gymnasium.make`` a response that
    reaches it is also flagged truncated.

    ## Arguments
    ``size`` (default 4): digits of each addend, 1 ≤ n ≤ 30 (leading digit non-zero).
    ``render_mode``: ``"ansi"`` or None.

    ## Tiers
    v0: smoke n = 4, standard n = 8, full n = 16; v1: 4 / 4 / 8; v2: 4 / 5 / 8.

    ## Reference
    ResRL (arXiv 2605.00380) and VCPO (arXiv 2602.17616); the task, its format and sizes are
    reconstructed [recon] for a CPU-scale substrate. The scoring Task (``AddScratchTask``) is
    documented in :class:`RLVREnv` (Metrics).

    ## Version History
    * v0: initial release; superseded by v1 (its standard-tier SFT base could not do the task
      and its eval prompts changed with the seed).
    * v1: the env is unchanged (default size from the v1 tiers); the Task adds
      ``corrupt_fraction`` and ``sft_pool_size`` arguments, a fixed-step SFT base per seed group,
      one sealed eval set for every seed with per-prompt units, the collapse rule relative to
      the base, sustained target crossings and measured per-token costs; superseded by v2 (the
      fixed-step subset-sum base scored Avg@16 ~0.22, below the 0.3-0.5 band, RL moved it
      ~+0.03, and a fixed-step base was a lottery across seeds).
    * v2: the env is unchanged (add-scratch standard n = 5); the SFT base is the checked
      checkpoint closest to the centre of a validation-accuracy band (0.3-0.5 at T = 0.6,
      256 validation prompts x 4 samples every 25 steps, stopping at the first check above
      the band; ``sft_band_low/high``, ``sft_check_samples``, ``sft_check_temperature``,
      ``sft_validation_prompts``).
    """

    task_name = "add_scratch"


class CountdownTask(RLVRTask):
    __doc__ = RLVREnv.__doc__
    id = "papergym/RLVRCountdown-v0"
    task_name = "countdown"


class SubsetSumTask(RLVRTask):
    __doc__ = RLVREnv.__doc__
    id = "papergym/RLVRSubsetSum-v0"
    task_name = "subset_sum"


class ModLinearTask(RLVRTask):
    __doc__ = RLVREnv.__doc__
    id = "papergym/RLVRModLinear-v0"
    task_name = "mod_linear"


class AddScratchTask(RLVRTask):
    __doc__ = RLVREnv.__doc__
    id = "papergym/RLVRAddScratch-v0"
    task_name = "add_scratch"


# v1: the same token-level envs (registered under the -v1 ids with the v1 tiers) and the v1
# Tasks: one sealed eval set for every seed, per-prompt units, the v1 collapse/target rules.
class CountdownEnvV1(CountdownEnv):
    __doc__ = CountdownEnv.__doc__
    version = 1


class SubsetSumEnvV1(SubsetSumEnv):
    __doc__ = SubsetSumEnv.__doc__
    version = 1


class ModLinearEnvV1(ModLinearEnv):
    __doc__ = ModLinearEnv.__doc__
    version = 1


class AddScratchEnvV1(AddScratchEnv):
    __doc__ = AddScratchEnv.__doc__
    version = 1


class CountdownTaskV1(CountdownTask):
    __doc__ = RLVREnv.__doc__
    id = "papergym/RLVRCountdown-v1"
    fixed_eval = True


class SubsetSumTaskV1(SubsetSumTask):
    __doc__ = RLVREnv.__doc__
    id = "papergym/RLVRSubsetSum-v1"
    fixed_eval = True


class ModLinearTaskV1(ModLinearTask):
    __doc__ = RLVREnv.__doc__
    id = "papergym/RLVRModLinear-v1"
    fixed_eval = True


class AddScratchTaskV1(AddScratchTask):
    __doc__ = RLVREnv.__doc__
    id = "papergym/RLVRAddScratch-v1"
    fixed_eval = True


# v2: the same token-level envs and v1 Tasks; only the registered tiers change (the SFT base is
# the checked checkpoint closest to the centre of a validation-accuracy band, see base_policy).
class CountdownEnvV2(CountdownEnv):
    __doc__ = CountdownEnv.__doc__
    version = 2


class SubsetSumEnvV2(SubsetSumEnv):
    __doc__ = SubsetSumEnv.__doc__
    version = 2


class ModLinearEnvV2(ModLinearEnv):
    __doc__ = ModLinearEnv.__doc__
    version = 2


class AddScratchEnvV2(AddScratchEnv):
    __doc__ = AddScratchEnv.__doc__
    version = 2


class CountdownTaskV2(CountdownTaskV1):
    __doc__ = RLVREnv.__doc__
    id = "papergym/RLVRCountdown-v2"


class SubsetSumTaskV2(SubsetSumTaskV1):
    __doc__ = RLVREnv.__doc__
    id = "papergym/RLVRSubsetSum-v2"


class ModLinearTaskV2(ModLinearTaskV1):
    __doc__ = RLVREnv.__doc__
    id = "papergym/RLVRModLinear-v2"


class AddScratchTaskV2(AddScratchTaskV1):
    __doc__ = RLVREnv.__doc__
    id = "papergym/RLVRAddScratch-v2"
