"""Cost constants of the accelerator-memory simulator and the batch compute time.

Every constant is [recon] (derived below for an 8B-class model with grouped KV heads in fp16 on
one PCIe-4.0 accelerator); results store them with every row, and only signs are comparable
with the paper's measurements. The batch cost model is the spec's:

    compute_t = c_prefill * sum_a (new_a + rec_a)
                + sum_{j=1}^{max out} [c_step + c_ctx * sum_{a: out_a >= j} (len_a + new_a + j)
                                        + c_lora * |{a: out_a >= j}|]
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np


@dataclass(frozen=True)
class CostModel:
    """Sizes (bytes), bandwidth (bytes/s) and compute costs (s); see the module docstring."""

    kv_bytes_per_token: float = 131_072.0  # 2 (K, V) x 32 layers x 8 KV heads x 128 dims x 2 B
    lora_bytes_per_rank: float = 2_097_152.0  # 2 * d * n_layers * n_mod * 2 B, d = 4096, 4 modules
    b_h2d: float = 25e9  # PCIe 4.0 x16, effective
    c_prefill: float = 8.0e-5  # 2 * 8e9 FLOP per token at ~200 TFLOP/s
    c_step: float = 1.0e-2  # ~16 GB of weights read per decode step at ~1.6 TB/s
    c_ctx: float = 8.2e-8  # 131,072 B of KV read per context token per decode step
    c_lora: float = 1.0e-4  # per distinct adapter per decode step (a guess)
    max_kv_tokens: int = 4096  # agents summarize older memory: the prefix length is capped

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            if not np.isfinite(value) or value < 0:
                raise ValueError(f"CostModel.{name} must be finite and >= 0, got {value!r}")
        if self.b_h2d <= 0:
            raise ValueError(f"CostModel.b_h2d must be > 0, got {self.b_h2d!r}")

    def as_dict(self) -> dict[str, float]:
        return {k: float(v) for k, v in asdict(self).items()}

    def adapter_bytes(self, rank: np.ndarray) -> np.ndarray:
        """s_L = 2 r d n_layers n_mod bytes (r = 16: 32 MiB)."""
        return self.lora_bytes_per_rank * np.asarray(rank, dtype=np.float64)

    def compute_time(self, length: np.ndarray, new: np.ndarray, out: np.ndarray,
                     recomputed: np.ndarray | None = None) -> float:
        """The batch compute time of one tick (module docstring); arrays over the served agents."""
        length = np.asarray(length, dtype=np.float64)
        new = np.asarray(new, dtype=np.float64)
        out = np.asarray(out, dtype=np.int64)
        if out.size == 0:
            return 0.0
        prefill_tokens = new.sum() + (0.0 if recomputed is None else float(np.sum(recomputed)))
        max_out = int(out.max())
        # n_j = |{a: out_a >= j}| and base_j = sum_{a: out_a >= j} (len_a + new_a), j = 1..max_out,
        # as reversed cumulative sums of per-length counts
        counts = np.bincount(out, minlength=max_out + 1)[1:]
        bases = np.bincount(out, weights=length + new, minlength=max_out + 1)[1:]
        n_j = np.cumsum(counts[::-1])[::-1]
        base_j = np.cumsum(bases[::-1])[::-1]
        j = np.arange(1, max_out + 1, dtype=np.float64)
        decode = max_out * self.c_step + self.c_ctx * float(np.sum(base_j + j * n_j)) \
            + self.c_lora * float(np.sum(n_j))
        return self.c_prefill * float(prefill_tokens) + decode
