"""The sandbox's raw wire format (papergym/wire.py): what it carries, what it leaves to
pickle, and the malformed bytes its reader refuses."""

from __future__ import annotations

import enum
import struct

import numpy as np
import pytest

from papergym import wire

OBS = np.linspace(-1, 1, 8, dtype=np.float32)


def _same(a, b) -> bool:
    """Equal values of the same types, dtypes and shapes, all the way down."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float) and a != a:
        return b != b
    return a == b


@pytest.mark.parametrize("message", [
    (0, 7, 1, -3, None, (OBS,), {}),  # a policy call
    (1, 7, OBS * np.float32(0.5)),  # its answer
    (0, 8, 2, 12, "step", (np.int64(3),), {"seed": None, "options": {"x": 1.5}}),
    (1, 8, (OBS, 0.0, False, True, {"TimeLimit.truncated": True, "cost": np.float32(2)})),
    (1, 9, [np.zeros((2, 0, 3), np.uint8), np.arange(6, dtype=np.complex128).reshape(2, 3),
            np.array(True), np.ones((4, 3), np.float16).T, b"\x00raw", "naïve ✓",
            -(1 << 63), (1 << 63) - 1, float("nan"), float("-inf"), {3: "int key"}]),
])
def test_plain_messages_round_trip_exactly(message):
    data = wire.encode(message)
    assert data is not None and data[0] == wire.MAGIC
    back = wire.decode(data)
    assert _same(back, message)


def test_arrays_arrive_as_new_writable_c_contiguous_copies():
    column = np.arange(12, dtype=np.float64).reshape(3, 4)[:, 1]  # a strided view
    back = wire.decode(wire.encode((column,)))[0]
    assert back.flags.c_contiguous and back.flags.writeable and back.flags.owndata
    back[0] = -1.0  # writing the copy leaves the sender's array alone
    assert column[0] == 1.0 and np.array_equal(back[1:], [5.0, 9.0])


def test_numpy_scalars_keep_their_type():
    values = (np.float32(1.5), np.int8(-2), np.bool_(True), np.uint64(2**64 - 1),
              np.complex64(1 - 2j), np.float64(0.1))
    back = wire.decode(wire.encode(values))
    assert [type(v) for v in back] == [type(v) for v in values]
    assert back == values


class _Colour(enum.IntEnum):
    RED = 1


class _Array(np.ndarray):
    pass


@pytest.mark.parametrize("value", [
    np.array([object()], dtype=object),  # object dtype: would need pickle to rebuild
    np.zeros(3, dtype=[("a", "f4"), ("b", "i2")]),  # structured
    np.zeros(3, dtype=">f4"),  # not native byte order
    np.array(["ab"]),  # unicode
    np.zeros(2, dtype="datetime64[s]"),
    np.zeros(3).view(_Array),  # a subclass
    np.zeros((1,) * 33),  # more dimensions than MAX_NDIM
    1 << 64,  # beyond int64
    _Colour.RED,  # an int subclass
    "lone \udc80 surrogate",
    {1.5: "float key"},
    object(),
])
def test_anything_else_is_left_to_pickle(value):
    assert wire.encode((1, 1, value)) is None


def test_shared_and_pinned_objects_are_left_to_pickle():
    shared = np.zeros(3)
    assert wire.encode((shared, shared)) is None  # pickle decodes one object; a copy would not
    inner = [1, 2]
    assert wire.encode(([inner], {"again": inner})) is None
    assert wire.encode((OBS,), pinned={id(OBS)}) is None
    assert wire.encode((1, 1)) is not None


def test_nesting_and_size_limits_on_the_sending_side(monkeypatch):
    nested: object = 1
    for _ in range(wire.MAX_DEPTH + 1):
        nested = [nested]
    assert wire.encode(nested) is None
    monkeypatch.setattr(wire, "MAX_ARRAY_BYTES", 64)
    assert wire.encode((np.zeros(8),)) is not None and wire.encode((np.zeros(9),)) is None


# -- the reader: every malformed message is refused with WireError --------------------------


def _array_header(dtype_code: int, shape: tuple[int, ...]) -> bytes:
    return struct.pack(f"<BbBB{len(shape)}q", wire.MAGIC, ord("a"), dtype_code, len(shape),
                       *shape)


def test_the_reader_refuses_a_dtype_code_outside_the_table():
    assert len(wire.DTYPES) == 14 and all(not d.hasobject for d in wire.DTYPES)
    for code in (len(wire.DTYPES), 17, 255):  # no code names object, string or void dtypes
        with pytest.raises(wire.WireError, match="plain number dtypes"):
            wire.decode(_array_header(code, (1,)) + bytes(8))


@pytest.mark.parametrize(("shape", "payload", "match"), [
    ((3,), bytes(11), "12 bytes with 11 left"),  # short data
    ((3,), bytes(13), "1 bytes after the value"),  # extra data
    ((1 << 40,), bytes(8), "at most"),  # claims more than the limit
    ((1 << 31, 1 << 31, 1 << 31), b"", "at most"),  # shape product overflowing int64
    ((-1, 4), bytes(16), "negative"),
])
def test_the_reader_checks_an_arrays_size_against_its_shape(shape, payload, match):
    with pytest.raises(wire.WireError, match=match):
        wire.decode(_array_header(wire.DTYPES.index(np.dtype("f4")), shape) + payload)


def test_the_reader_refuses_too_many_dimensions():
    data = struct.pack("<BbBB", wire.MAGIC, ord("a"), 0, wire.MAX_NDIM + 1) + bytes(8 * 40)
    with pytest.raises(wire.WireError, match="dimensions"):
        wire.decode(data)


@pytest.mark.parametrize(("data", "match"), [
    (b"", "not a fast message"),
    (b"\x80\x05N.", "not a fast message"),  # a pickle is not read here
    (bytes([wire.MAGIC]), "malformed"),  # no value
    (bytes([wire.MAGIC]) + b"Z", "unknown tag"),
    (bytes([wire.MAGIC]) + b"i\x01\x02", "malformed"),  # a truncated int
    (bytes([wire.MAGIC]) + b"NN", "1 bytes after"),
    (bytes([wire.MAGIC]) + b"(" + struct.pack("<I", 1 << 30) + b"N", "items in 1 bytes"),
    (bytes([wire.MAGIC]) + b"s" + struct.pack("<I", 5) + b"abc", "string of 5 bytes"),
    (bytes([wire.MAGIC]) + b"s" + struct.pack("<I", 2) + b"\xff\xfe", "malformed"),
    (bytes([wire.MAGIC]) + b"{" + struct.pack("<I", 1) + b"(" + struct.pack("<I", 0) + b"N",
     "dict key of type tuple"),
    (bytes([wire.MAGIC]) + b"g" + bytes([11]) + bytes(4), "truncated scalar"),
])
def test_the_reader_refuses_malformed_bytes(data, match):
    with pytest.raises(wire.WireError, match=match):
        wire.decode(data)


def test_the_reader_refuses_nesting_past_the_limit():
    data = bytes([wire.MAGIC]) + (b"[" + struct.pack("<I", 1)) * (wire.MAX_DEPTH + 1) + b"N"
    with pytest.raises(wire.WireError, match="nested deeper"):
        wire.decode(data)
    ok = bytes([wire.MAGIC]) + (b"[" + struct.pack("<I", 1)) * wire.MAX_DEPTH + b"N"
    assert wire.decode(ok) is not None
