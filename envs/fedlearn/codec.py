"""Message encoding and exact bit counting for FedRounds-v0 (both directions).

A message is a dict with ``n`` vector slots of length p plus up to 4 scalars (the action
dict of a client, or the downlink dict of a server)::

    {"codec": int[n] in {0, 1, 2}, "values": float[n, p], "support": {0,1}[n, p],
     "scale": float[n] >= 0, "used": {0,1}[n], "scalars": float[4], "n_scalars": 0..4}

The receiver sees only what the bits carry:

| codec | decoded slot | bits per slot |
|---|---|---|
| 0 dense | float32(values) | 32 p |
| 1 sparse | float32(values) * support | nnz (32 + ceil(log2 p)) |
| 2 scaled sign | float32(scale) * sign(values), sign(0) = +1 | 32 + p |
| scalars | the first n_scalars entries, float32 | 32 each |

Unused slots cost 0 bits and decode to zeros. :func:`encode` validates a message (shape,
dtype, finiteness of used slots) and returns its :class:`Payload` and its bit count; the
payload is what the other side receives (decode(encode(message)) by construction).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from papergym.actions import InvalidAction  # a ValueError; the one bad-action type

DENSE, SPARSE, SIGN = 0, 1, 2
CODECS = (DENSE, SPARSE, SIGN)
NUM_SCALARS = 4
FLOAT_BITS = 32


@dataclass(frozen=True)
class Payload:
    """What the receiver decodes: float32 slots (unused slots are zeros) and scalars."""

    slots: np.ndarray  # (n, p) float32
    used: np.ndarray  # (n,) bool
    scalars: np.ndarray  # (n_scalars,) float32

    def vector(self, slot: int) -> np.ndarray:
        """Slot ``slot`` as float64 (what an algorithm computes with)."""
        return self.slots[slot].astype(np.float64)


def index_bits(p: int) -> int:
    return max(1, math.ceil(math.log2(p)))


def slot_bits(codec: int, p: int, nnz: int = 0) -> int:
    if codec == DENSE:
        return FLOAT_BITS * p
    if codec == SPARSE:
        return nnz * (FLOAT_BITS + index_bits(p))
    if codec == SIGN:
        return FLOAT_BITS + p
    raise InvalidAction(f"unknown codec {codec}; codecs are 0 dense, 1 sparse, 2 scaled sign")


def empty_message(n_slots: int, p: int) -> dict:
    """A message that sends nothing (0 bits)."""
    return {
        "codec": np.zeros(n_slots, dtype=np.int64),
        "values": np.zeros((n_slots, p), dtype=np.float32),
        "support": np.zeros((n_slots, p), dtype=np.int8),
        "scale": np.zeros(n_slots, dtype=np.float32),
        "used": np.zeros(n_slots, dtype=np.int8),
        "scalars": np.zeros(NUM_SCALARS, dtype=np.float32),
        "n_scalars": 0,
    }


def build_message(n_slots: int, p: int, slots=(), scalars=()) -> dict:
    """A message from ``slots``: each ``(codec, values, support_or_None, scale)``."""
    if len(slots) > n_slots:
        raise ValueError(f"{len(slots)} slots given, the message has {n_slots}")
    if len(scalars) > NUM_SCALARS:
        raise ValueError(f"at most {NUM_SCALARS} scalars, got {len(scalars)}")
    message = empty_message(n_slots, p)
    for i, (codec, values, support, scale) in enumerate(slots):
        message["codec"][i] = codec
        message["values"][i] = values
        if support is not None:
            message["support"][i] = support
        message["scale"][i] = scale
        message["used"][i] = 1
    message["scalars"][: len(scalars)] = scalars
    message["n_scalars"] = len(scalars)
    return message


def dense(values) -> tuple:
    return (DENSE, values, None, 0.0)


def _array(message: dict, key: str, shape: tuple, who: str, kind: str) -> np.ndarray:
    if key not in message:
        raise InvalidAction(f"{who}: message has no {key!r} entry")
    arr = np.asarray(message[key])
    if arr.shape != shape:
        raise InvalidAction(f"{who}: {key!r} has shape {arr.shape}, expected {shape}")
    if kind == "float" and not (np.issubdtype(arr.dtype, np.floating)
                                or np.issubdtype(arr.dtype, np.integer)):
        raise InvalidAction(f"{who}: {key!r} has dtype {arr.dtype}, expected float32")
    if kind == "int" and not (np.issubdtype(arr.dtype, np.integer) or arr.dtype == bool):
        raise InvalidAction(f"{who}: {key!r} has dtype {arr.dtype}, expected an integer dtype")
    return arr


def encode(message: dict, n_slots: int, p: int, who: str = "message") -> tuple[Payload, int]:
    """Validate ``message``; return the decoded payload the receiver sees and its bits."""
    if not isinstance(message, dict):
        raise InvalidAction(f"{who}: expected a dict message, got {type(message).__name__}")
    used = _array(message, "used", (n_slots,), who, "int")
    if np.any((used != 0) & (used != 1)):
        raise InvalidAction(f"{who}: 'used' must be 0/1, got {used}")
    codecs = _array(message, "codec", (n_slots,), who, "int")
    if not np.isin(codecs, list(CODECS)).all():  # outside the action space, used slot or not
        raise InvalidAction(f"{who}: codecs must be 0, 1 or 2, got {codecs}")
    n_scalars = int(np.asarray(message.get("n_scalars", 0)))
    if not 0 <= n_scalars <= NUM_SCALARS:
        raise InvalidAction(f"{who}: n_scalars must be in 0..{NUM_SCALARS}, got {n_scalars}")
    scalars = _array(message, "scalars", (NUM_SCALARS,), who, "float")[:n_scalars]
    if not np.all(np.isfinite(scalars)):
        raise InvalidAction(f"{who}: non-finite scalar in {scalars}")
    bits = FLOAT_BITS * n_scalars
    slots = np.zeros((n_slots, p), dtype=np.float32)
    used_mask = used.astype(bool)
    if used_mask.any():
        values = _array(message, "values", (n_slots, p), who, "float")
        support = _array(message, "support", (n_slots, p), who, "int")
        scale = _array(message, "scale", (n_slots,), who, "float")
        for i in np.flatnonzero(used_mask):
            codec = int(codecs[i])
            if codec not in CODECS:
                raise InvalidAction(f"{who}: slot {i} has codec {codec}; codecs are 0, 1, 2")
            row = values[i].astype(np.float32)
            if codec == DENSE:
                if not np.all(np.isfinite(row)):
                    raise InvalidAction(f"{who}: non-finite value in used dense slot {i}")
                slots[i] = row
                bits += slot_bits(DENSE, p)
            elif codec == SPARSE:
                keep = support[i] != 0
                if not np.all(np.isfinite(row[keep])):
                    raise InvalidAction(f"{who}: non-finite value in used sparse slot {i}")
                slots[i][keep] = row[keep]
                bits += slot_bits(SPARSE, p, int(keep.sum()))
            else:
                s = np.float32(scale[i])
                if not (np.isfinite(s) and s >= 0) or np.isnan(row).any():
                    raise InvalidAction(f"{who}: sign slot {i} needs a finite scale >= 0 "
                                        f"and non-NaN values, got scale {scale[i]}")
                slots[i] = np.where(row >= 0, s, -s)
                bits += slot_bits(SIGN, p)
    return Payload(slots, used_mask.copy(), scalars.astype(np.float32).copy()), int(bits)
