"""Compressors for fedlearn agents: identity, top-k and scaled sign (both biased).

Each compressor maps a float64 vector v to (what the receiver decodes, the message slot).
The decoded vector replicates the env's codec bit for bit (float32 values), so a client
that mirrors the server's state (error feedback, EF21) stays exactly in sync with it.

- identity: dense float32(v), 32p bits.
- top-k: keeps exactly k = max(1, ceil(ratio p)) largest-magnitude entries; contractive with
  ||C(v) - v||^2 <= (1 - k/p) ||v||^2.
- scaled sign: C(v) = (||v||_1 / p) sign(v); ||C(v) - v||^2 = ||v||^2 - ||v||_1^2 / p.
"""

from __future__ import annotations

import math

import numpy as np

from papergym.envs.fedlearn import codec


class Identity:
    name = "identity"

    def __call__(self, v: np.ndarray) -> tuple[np.ndarray, tuple]:
        wire = np.asarray(v, dtype=np.float32)
        return wire.astype(np.float64), (codec.DENSE, wire, None, 0.0)

    def compress(self, v: np.ndarray) -> np.ndarray:
        return np.array(v, dtype=np.float64)


class TopK:
    name = "topk"

    def __init__(self, ratio: float) -> None:
        if not 0 < ratio <= 1:
            raise ValueError(f"top-k ratio must be in (0, 1], got {ratio}")
        self.ratio = float(ratio)

    def k(self, p: int) -> int:
        return max(1, math.ceil(self.ratio * p))

    def support(self, v: np.ndarray) -> np.ndarray:
        k = self.k(len(v))
        mask = np.zeros(len(v), dtype=np.int8)
        mask[np.argpartition(np.abs(v), len(v) - k)[len(v) - k:]] = 1
        return mask

    def compress(self, v: np.ndarray) -> np.ndarray:
        return np.where(self.support(v) == 1, v, 0.0)

    def __call__(self, v: np.ndarray) -> tuple[np.ndarray, tuple]:
        mask = self.support(v)
        wire = np.asarray(v, dtype=np.float32)
        decoded = np.where(mask == 1, wire, np.float32(0)).astype(np.float64)
        return decoded, (codec.SPARSE, wire, mask, 0.0)


class ScaledSign:
    name = "sign"

    def compress(self, v: np.ndarray) -> np.ndarray:
        return (np.abs(v).sum() / len(v)) * np.where(v >= 0, 1.0, -1.0)

    def __call__(self, v: np.ndarray) -> tuple[np.ndarray, tuple]:
        scale = np.float32(np.abs(v).sum() / len(v))
        decoded = np.where(v >= 0, scale, -scale).astype(np.float64)
        return decoded, (codec.SIGN, np.asarray(v, dtype=np.float32), None, float(scale))


def make_compressor(name: str, ratio: float = 1.0):
    """'topk' at ratio 1 is the identity (a dense slot is cheaper than a full sparse one)."""
    if name == "identity" or (name == "topk" and ratio >= 1.0):
        return Identity()
    if name == "topk":
        return TopK(ratio)
    if name == "sign":
        return ScaledSign()
    raise ValueError(f"unknown compressor {name!r}; choose identity, topk or sign")
