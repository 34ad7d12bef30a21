"""The sandbox's fast wire format: the common messages of the agent RPC as raw bytes.

Almost every message between a problem process and its agent process
(:mod:`papergym.isolation`) is a policy call or an env step: a tuple of a few integers, a
name, a small numpy array or two, a float, two bools and a small dict. Pickling such a tuple
through a persistent-id pickler costs more than the pipe it crosses (a pickler object per
message, a Python callback per object, numpy's reduction per array). This module writes
exactly those values as tagged raw bytes and reads them back with a parser that builds
nothing but plain values, so the problem process decodes agent bytes without running any
code of the agent's choosing.

What it carries, and nothing else (``encode`` returns ``None`` for anything more and the
caller pickles the message as before):

- ``None``, ``bool``, ``int`` (64-bit), ``float``, ``str``, ``bytes`` of exactly those types
  (a subclass, an enum or a numpy float64 is not a ``float`` here);
- ``tuple``, ``list`` and ``dict`` (keys ``str`` or ``int``) of them, nested at most
  ``MAX_DEPTH`` deep, with no object twice (pickle would share it; a copy would not);
- numpy arrays (exact ``numpy.ndarray``) and numpy scalars of a native-byte-order bool,
  integer, float or complex dtype (``DTYPES``), at most ``MAX_NDIM`` dimensions and
  ``MAX_ARRAY_BYTES`` bytes, sent as their C-order bytes and read back as a new writable
  C-contiguous array: the same value, dtype and shape the pickled path gives.

Layout: ``MAGIC`` (a byte no pickle starts with), then one value. A value is a tag byte and
its payload, little-endian: ``N``/``T``/``F``; ``i`` int64; ``f`` float64; ``s``/``b`` u32
length and UTF-8 or raw bytes; ``(``/``[`` u32 count and the items; ``{`` u32 count and the
key/value pairs; ``a`` u8 dtype code, u8 ndim, ndim x int64 shape, then the data; ``g`` u8
dtype code and the scalar's bytes. The reader checks every tag, dtype code, dimension count,
shape, length and count against these limits and against the bytes that are left, and that
nothing follows the value; a message that fails any check raises :class:`WireError`.
"""

from __future__ import annotations

import math
import struct
from typing import Any

import numpy as np

MAGIC = 0xFA  # first byte of a fast message; every pickle (protocol 2+) starts with 0x80
MAX_DEPTH = 32  # containers nested deeper cross pickled
MAX_NDIM = 32
MAX_ARRAY_BYTES = 64 << 20  # one array, at most (larger ones cross pickled)

# The dtypes an array may have on the wire, by code: plain numbers in native byte order.
# No object, string, void, datetime or structured dtype has a code, so none can be named.
DTYPES: tuple[np.dtype, ...] = tuple(np.dtype(code) for code in (
    "?", "i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8", "c8", "c16"))
_DTYPE_CODE = {dtype: code for code, dtype in enumerate(DTYPES)}
_SCALAR_CODE = {dtype.type: code for code, dtype in enumerate(DTYPES)}

_INT, _FLOAT = struct.Struct("<bq"), struct.Struct("<bd")
_LENGTH = struct.Struct("<bI")
_SCALAR = struct.Struct("<bB")
_ARRAY_HEADS = [struct.Struct(f"<bBB{n}q") for n in range(MAX_NDIM + 1)]
_I64, _F64, _U32 = struct.Struct("<q"), struct.Struct("<d"), struct.Struct("<I")
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1
_T_NONE, _T_TRUE, _T_FALSE = b"N", b"T", b"F"
_HEADER = bytes([MAGIC])
_NO_ITEMS = bytes(4)  # a container's u32 count of 0
_EMPTY_DICT = b"{" + _NO_ITEMS


class WireError(ValueError):
    """A fast message that breaks the format (a bad tag, dtype code, shape or length)."""


class _Unsupported(Exception):  # noqa: N818 - internal signal: pickle this message instead
    pass


def encode(message: Any, pinned: frozenset[int] | set[int] = frozenset()) -> bytes | None:
    """``message`` as fast-wire bytes, or ``None`` if it holds anything but the values above
    (or an object whose id is in ``pinned``: one that must cross as a reference)."""
    out = [_HEADER]
    try:
        _put(out, message, 0, set(), pinned)
    except _Unsupported:
        return None
    return b"".join(out)


def _put(out: list[bytes], value: Any, depth: int, seen: set[int],
         pinned: frozenset[int] | set[int]) -> None:
    t = type(value)
    if t is int:
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise _Unsupported
        out.append(_INT.pack(105, value))  # b"i"
    elif value is None:
        out.append(_T_NONE)
    elif t is bool:
        out.append(_T_TRUE if value else _T_FALSE)
    elif t is float:
        out.append(_FLOAT.pack(102, value))  # b"f"
    elif t is np.ndarray:
        _put_array(out, value, seen, pinned)
    elif t is tuple or t is list:
        if depth >= MAX_DEPTH or id(value) in pinned or t is list and id(value) in seen:
            raise _Unsupported
        if t is list:
            seen.add(id(value))
        out.append(_LENGTH.pack(40 if t is tuple else 91, len(value)))  # b"(" or b"["
        for item in value:  # the common items inline: a message is mostly a flat tuple
            kind = type(item)
            if item is None:
                out.append(_T_NONE)
            elif kind is int and _INT64_MIN <= item <= _INT64_MAX:
                out.append(_INT.pack(105, item))
            elif kind is bool:
                out.append(_T_TRUE if item else _T_FALSE)
            elif kind is float:
                out.append(_FLOAT.pack(102, item))
            elif kind is np.ndarray:
                _put_array(out, item, seen, pinned)
            elif kind is dict and not item and id(item) not in seen and id(item) not in pinned:
                seen.add(id(item))  # a call's empty kwargs, an env step's empty info
                out.append(_EMPTY_DICT)
            else:
                _put(out, item, depth + 1, seen, pinned)
    elif t is str:
        try:
            data = value.encode()
        except UnicodeEncodeError:  # lone surrogates: pickle carries them
            raise _Unsupported from None
        out.append(_LENGTH.pack(115, len(data)))  # b"s"
        out.append(data)
    elif t is dict:
        if depth >= MAX_DEPTH or id(value) in seen or id(value) in pinned:
            raise _Unsupported
        seen.add(id(value))
        out.append(_LENGTH.pack(123, len(value)))  # b"{"
        for key, item in value.items():
            if type(key) is not str and type(key) is not int:
                raise _Unsupported
            _put(out, key, depth + 1, seen, pinned)
            _put(out, item, depth + 1, seen, pinned)
    elif t is bytes:
        out.append(_LENGTH.pack(98, len(value)))  # b"b"
        out.append(value)
    else:
        code = _SCALAR_CODE.get(t)  # numpy scalars are in native byte order
        if code is None:
            raise _Unsupported
        out.append(_SCALAR.pack(103, code))  # b"g"
        out.append(value.tobytes())


def _put_array(out: list[bytes], value: np.ndarray, seen: set[int],
               pinned: frozenset[int] | set[int]) -> None:
    code = _DTYPE_CODE.get(value.dtype)
    ndim = value.ndim
    if code is None or ndim > MAX_NDIM or value.nbytes > MAX_ARRAY_BYTES \
            or id(value) in seen or id(value) in pinned:
        raise _Unsupported
    seen.add(id(value))
    out.append(_ARRAY_HEADS[ndim].pack(97, code, ndim, *value.shape))  # b"a"
    out.append(value.tobytes())


def decode(data: bytes) -> Any:
    """The value of a fast message (``data`` starts with ``MAGIC``); :class:`WireError` if
    it breaks the format or a limit."""
    if not isinstance(data, bytes) or not data or data[0] != MAGIC:
        raise WireError("not a fast message")
    try:
        value, end = _get(data, 1, 0)
    except WireError:
        raise
    except (struct.error, IndexError, ValueError, UnicodeDecodeError, OverflowError) as err:
        raise WireError(f"malformed fast message: {err}") from None
    if end != len(data):
        raise WireError(f"{len(data) - end} bytes after the value")
    return value


def _get(data: bytes, pos: int, depth: int) -> tuple[Any, int]:
    tag = data[pos]
    pos += 1
    if tag == 40 or tag == 91 or tag == 123:  # ( [ {: a message is a tuple of containers
        if depth >= MAX_DEPTH:
            raise WireError(f"containers nested deeper than {MAX_DEPTH}")
        count = _U32.unpack_from(data, pos)[0]
        pos += 4
        if count > len(data) - pos:  # every item takes at least one byte
            raise WireError(f"a container of {count} items in {len(data) - pos} bytes")
        if tag == 123:
            mapping = {}
            for _ in range(count):
                key, pos = _get(data, pos, depth + 1)
                if type(key) is not str and type(key) is not int:
                    raise WireError(f"a dict key of type {type(key).__name__}")
                mapping[key], pos = _get(data, pos, depth + 1)
            return mapping, pos
        items = []
        for _ in range(count):  # the common items inline, as in _put
            item_tag = data[pos]
            if item_tag == 105:
                items.append(_I64.unpack_from(data, pos + 1)[0])
                pos += 9
            elif item_tag == 78:
                items.append(None)
                pos += 1
            elif item_tag == 70 or item_tag == 84:
                items.append(item_tag == 84)
                pos += 1
            elif item_tag == 102:
                items.append(_F64.unpack_from(data, pos + 1)[0])
                pos += 9
            elif item_tag == 97:
                item, pos = _get_array(data, pos + 1)
                items.append(item)
            elif item_tag == 123 and data[pos + 1:pos + 5] == _NO_ITEMS:
                items.append({})
                pos += 5
            else:
                item, pos = _get(data, pos, depth + 1)
                items.append(item)
        return (tuple(items) if tag == 40 else items), pos
    if tag == 105:  # i
        return _I64.unpack_from(data, pos)[0], pos + 8
    if tag == 78:  # N
        return None, pos
    if tag == 84:  # T
        return True, pos
    if tag == 70:  # F
        return False, pos
    if tag == 102:  # f
        return _F64.unpack_from(data, pos)[0], pos + 8
    if tag == 97:  # a
        return _get_array(data, pos)
    if tag == 115 or tag == 98:  # s b
        size = _U32.unpack_from(data, pos)[0]
        pos += 4
        if size > len(data) - pos:
            raise WireError(f"a string of {size} bytes in {len(data) - pos}")
        raw = data[pos:pos + size]
        return (raw.decode() if tag == 115 else raw), pos + size
    if tag == 103:  # g
        dtype = _dtype(data[pos])
        pos += 1
        if dtype.itemsize > len(data) - pos:
            raise WireError("a truncated scalar")
        return np.frombuffer(data, dtype, 1, pos)[0], pos + dtype.itemsize
    raise WireError(f"unknown tag {tag:#04x}")


def _dtype(code: int) -> np.dtype:
    if code >= len(DTYPES):
        raise WireError(f"dtype code {code} is not one of the {len(DTYPES)} plain number "
                        "dtypes (object, string and structured arrays never cross raw)")
    return DTYPES[code]


def _get_array(data: bytes, pos: int) -> tuple[np.ndarray, int]:
    code, ndim = data[pos], data[pos + 1]
    dtype = DTYPES[code] if code < len(DTYPES) else _dtype(code)
    if ndim > MAX_NDIM:
        raise WireError(f"an array of {ndim} dimensions (at most {MAX_NDIM})")
    shape = _ARRAY_HEADS[ndim].unpack_from(data, pos - 1)[3:]
    pos += 2 + 8 * ndim
    if ndim and min(shape) < 0:
        raise WireError(f"a negative array dimension in {shape}")
    nbytes = math.prod(shape) * dtype.itemsize
    if nbytes > MAX_ARRAY_BYTES:
        raise WireError(f"an array of {nbytes} bytes (at most {MAX_ARRAY_BYTES})")
    if nbytes > len(data) - pos:
        raise WireError(f"an array of {nbytes} bytes with {len(data) - pos} left")
    if nbytes == 0:
        return np.empty(shape, dtype), pos
    flat = np.frombuffer(data, dtype, nbytes // dtype.itemsize, pos)
    return (flat.copy() if ndim == 1 else flat.reshape(shape).copy()), pos + nbytes
