"""Per-token costs of the rlvr v1 standard tier, for the modelled asynchronous wall time.

VCPO's modelled time (``RLVRTask``: synchronous N·(T_gen + T_train), pipelined
N·max(T_gen, T_train) + k·T_gen) needs c_gen = CPU seconds per generated token and c_train =
CPU seconds per trained token. This script measures both on this machine for the v1 standard
policy (GPT d = 64 x 2 layers, subset-sum n = 5): it generates batches of 16 prompts x G = 8 with
the KV cache (what the view does per update) and runs the GRPO update on them (recompute pass,
forward + backward, AdamW step: what a learner does per update), one thread, CPU time
(``time.process_time``, so a loaded machine slows it less than wall time would). The values
frozen in ``papergym/envs/rlvr/__init__.py`` (``C_GEN``, ``C_TRAIN``) come from this output.

    nice -n 10 .venv/bin/python benchmarks/perf/rlvr_token_costs.py [repeats]
"""

from __future__ import annotations

import sys
import time

import torch

import papergym
from papergym.agents.rlvr._common import group_advantages, policy_logprobs, ppo_clip_token_loss


def main(repeats: int = 10) -> None:
    torch.set_num_threads(1)
    task = papergym.make_task("papergym/RLVRSubsetSum-v1", tier="standard")
    from papergym.tinylm.gpt import GPT

    policy = GPT(task.model_config, generator=torch.Generator().manual_seed(0))
    view = task.train_view(0, papergym.Budget(responses=10**9))
    optimizer = torch.optim.AdamW(policy.parameters(), lr=1e-4)
    gen_s = train_s = 0.0
    gen_tokens = train_tokens = 0
    for _ in range(repeats):
        prompts = view.sample_prompts(16)
        start = time.process_time()
        batch = view.rollout(policy, prompts, 8)
        gen_s += time.process_time() - start
        gen_tokens += int(batch.mask.sum())
        start = time.process_time()
        with torch.no_grad():
            old, _ = policy_logprobs(policy, batch.tokens, batch.mask)
        adv = group_advantages(batch.rewards, batch.groups)[:, None] * batch.mask
        logp, _ = policy_logprobs(policy, batch.tokens, batch.mask)
        loss = ppo_clip_token_loss(logp, old, adv, batch.mask)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        train_s += time.process_time() - start
        train_tokens += int(batch.mask.sum())
    c_gen, c_train = gen_s / gen_tokens, train_s / train_tokens
    print(f"c_gen   = {c_gen:.3e} CPU-s per generated token ({gen_tokens} tokens)")
    print(f"c_train = {c_train:.3e} CPU-s per trained token ({train_tokens} tokens)")
    print(f"c_train / c_gen = {c_train / c_gen:.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
