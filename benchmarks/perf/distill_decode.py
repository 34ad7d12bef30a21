"""Decode cost of the distill students against the teacher, measured in one run (CPU, one thread).

For each mixer kind of ``papergym.tinylm.linearized`` (teacher-sized, d = 64 x 2 layers, context
256) it decodes n tokens one at a time on the recurrent state and prints the seconds per token
and the decode-state bytes at n, each as a ratio to the softmax (teacher) student in the same
run. Timings belong here, never in tests or claims.

    .venv/bin/python benchmarks/perf/distill_decode.py [n]
"""

from __future__ import annotations

import sys
import time

import torch

from papergym.tinylm.gpt import GPT, GPTConfig
from papergym.tinylm.linearized import KINDS, LinearizedGPT, MixerConfig


def main(n: int = 256) -> None:
    torch.set_num_threads(1)
    cfg = GPTConfig(vocab_size=50, d_model=64, n_layer=2, n_head=2, ctx=max(n, 64))
    teacher = GPT(cfg, generator=torch.Generator().manual_seed(0))
    tokens = torch.randint(0, 50, (1, n), generator=torch.Generator().manual_seed(1))
    rows = {}
    for kind in KINDS:
        model = LinearizedGPT.from_teacher(teacher.state_dict(), cfg, MixerConfig(kind=kind, window=n // 8))
        start = time.perf_counter()
        _, states = model.decode(tokens)
        rows[kind] = ((time.perf_counter() - start) / n, sum(s.nbytes() for s in states))
    base_t, base_b = rows["softmax"]
    print(f"{'mixer':>8} {'s/token':>10} {'x teacher':>10} {'state bytes':>12} {'x teacher':>10}")
    for kind, (t, b) in rows.items():
        print(f"{kind:>8} {t:10.2e} {t / base_t:10.2f} {b:12d} {b / base_b:10.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 256)
