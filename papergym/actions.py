"""Actions checked at the boundary, against the env's own gymnasium space.

An agent is anyone's code, and an env that silently truncates ``2.7`` to block 2, casts a
complex number to its real part, or crashes deep inside a simulator on a missing key gives
scores nobody can trust. :func:`check_action` validates one action against a space and
returns it in canonical form, or raises :class:`InvalidAction` -- a ``ValueError`` (and a
``gymnasium.error.InvalidAction``) whose message names the env and the field::

    papergym/QAOA2Partition-v0: action['assign'][3] = 2.5 is not an integer

Rules by space (what the contract calls "reject, or document the clipping"):

- ``Box``: real numbers only (no complex, strings, ``None``), exactly the space's shape (or
  the same entries with singleton axes added or dropped: ``[[x, y]]`` for shape ``(2,)``), all
  finite. Bounds are *not* checked here: each env documents whether it clips, projects or
  wraps an out-of-bounds value (and counts it in ``info``). An integer Box wants integers.
- ``Discrete``: one integer in ``[start, start + n)``; an integral float (``3.0``) or a
  one-element array is accepted as that integer, a fractional, non-finite or complex one is not.
- ``MultiDiscrete`` / ``MultiBinary``: the space's shape, integers, each in its range.
- ``Dict``: a mapping with exactly the space's keys (``optional`` names keys an env documents
  as omittable), each checked recursively; ``lenient`` names Box keys whose finiteness the
  env checks itself where it matters (documented, e.g. only in the slots a message uses).
  ``Tuple``: a sequence of the right length.
- any other space: ``space.contains(action)``.

:func:`check_actions` does the same for a PettingZoo ``step(actions)`` dict.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

_REAL_KINDS = "biuf"  # bool, signed, unsigned, float: numbers an action may be made of


class InvalidAction(ValueError, gym.error.InvalidAction):
    """An action outside the env's action space; the message names the env and the field."""


def check_action(space: gym.Space, action: Any, env: str, field: str = "action",
                 optional: Collection[str] = (), lenient: Collection[str] = ()) -> Any:
    """``action`` validated against ``space`` and in canonical form (int, ndarray, dict,
    tuple); raises :class:`InvalidAction` naming ``env`` and ``field`` otherwise."""
    if isinstance(space, spaces.Discrete):
        return _discrete(space, action, env, field)
    if isinstance(space, spaces.Box):
        return _box(space, action, env, field, finite=True)
    if isinstance(space, spaces.MultiDiscrete):
        return _integers(action, space.shape, space.start, space.start + space.nvec, env, field)
    if isinstance(space, spaces.MultiBinary):
        shape = space.shape
        return _integers(action, shape, np.zeros(shape, np.int64), np.full(shape, 2), env, field)
    if isinstance(space, spaces.Dict):
        return _dict(space, action, env, field, optional, lenient)
    if isinstance(space, spaces.Tuple):
        if isinstance(action, (str, bytes)) or not isinstance(action, Sequence | np.ndarray):
            _fail(env, field, f"must be a sequence of {len(space.spaces)}, got {_kind(action)}")
        if len(action) != len(space.spaces):
            _fail(env, field, f"has {len(action)} parts, expected {len(space.spaces)}")
        return tuple(check_action(sub, part, env, f"{field}[{i}]")
                     for i, (sub, part) in enumerate(zip(space.spaces, action)))
    try:
        inside = space.contains(action)
    except Exception:  # noqa: BLE001 - a space that cannot even test the value: reject it
        inside = False
    if not inside:
        _fail(env, field, f"{_short(action)} is not in {space}")
    return action


def check_actions(actions: Any, agents: Iterable[str], space: Callable[[str], gym.Space],
                  env: str, require_all: bool = True, optional: Collection[str] = (),
                  lenient: Collection[str] = ()) -> dict[str, Any]:
    """A PettingZoo ``step(actions)`` argument: a mapping from live agents to actions, each
    checked with :func:`check_action`. ``require_all``: every live agent must act (else an
    absent agent means "does nothing", which the env must document)."""
    live = list(agents)
    if not isinstance(actions, Mapping):
        _fail(env, "actions", f"must be a dict agent -> action, got {_kind(actions)}")
    unknown = [a for a in actions if a not in live]
    if unknown:
        _fail(env, "actions", f"unknown or finished agents {unknown[:5]}; live agents are "
              f"{live[:8]}{' ...' if len(live) > 8 else ''}")
    missing = [a for a in live if a not in actions]
    if require_all and missing:
        _fail(env, "actions", f"no action for agents {missing[:5]}; every live agent acts "
              "each step")
    return {a: check_action(space(a), actions[a], env, f"actions[{a!r}]", optional, lenient)
            for a in live if a in actions}


# ------------------------------------------------------------------------------ helpers


def _fail(env: str, field: str, problem: str) -> None:
    raise InvalidAction(f"{env}: {field} {problem}")


def _kind(value: Any) -> str:
    return "None" if value is None else type(value).__name__


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _as_real_array(action: Any, env: str, field: str) -> np.ndarray:
    if action is None or isinstance(action, (str, bytes, Mapping)):
        _fail(env, field, f"must be numeric, got {_kind(action)}")
    try:
        arr = np.asarray(action)
    except (ValueError, TypeError) as err:  # ragged nesting and the like
        _fail(env, field, f"is not a numeric array ({' '.join(str(err).split())[:80]})")
    if arr.dtype.kind == "c":
        _fail(env, field, "is complex; actions are real numbers")
    if arr.dtype.kind not in _REAL_KINDS:
        _fail(env, field, f"must be numeric, got dtype {arr.dtype} ({_short(action)})")
    return arr


def _fit_shape(arr: np.ndarray, shape: tuple[int, ...], env: str, field: str) -> np.ndarray:
    if arr.shape == shape:
        return arr
    # the same entries with singleton axes added or dropped ([[x, y]] for (2,), x for (1,))
    if arr.size == int(np.prod(shape)) and \
            tuple(d for d in arr.shape if d != 1) == tuple(d for d in shape if d != 1):
        return arr.reshape(shape)
    _fail(env, field, f"has shape {arr.shape}, expected {shape}")
    raise AssertionError  # unreachable


def _integral(arr: np.ndarray, env: str, field: str) -> np.ndarray:
    if arr.dtype.kind == "f":
        if not np.isfinite(arr).all():
            _fail(env, field, f"has non-finite entries ({_short(arr.tolist())})")
        fractional = arr != np.round(arr)
        if fractional.any():
            where = tuple(int(i) for i in np.argwhere(fractional)[0])
            label = field + "".join(f"[{i}]" for i in where)
            _fail(env, label, f"= {arr[where].item()!r} is not an integer")
    return arr.astype(np.int64)


def _discrete(space: spaces.Discrete, action: Any, env: str, field: str) -> int:
    if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
        value = int(action)  # the fast path: a plain index
    else:
        arr = _as_real_array(action, env, field)
        if arr.size != 1:
            _fail(env, field, f"must be one index, got shape {arr.shape}")
        value = int(_integral(arr.reshape(()), env, field))
    low, high = int(space.start), int(space.start + space.n)
    if not low <= value < high:
        _fail(env, field, f"= {value} is outside Discrete({space.n}) (valid: {low}..{high - 1})")
    return value


def _box(space: spaces.Box, action: Any, env: str, field: str, finite: bool) -> np.ndarray:
    arr = _fit_shape(_as_real_array(action, env, field), space.shape, env, field)
    if np.issubdtype(space.dtype, np.integer):
        return _integral(arr, env, field)
    arr = arr.astype(np.float64, copy=False)
    if finite and not np.isfinite(arr).all():
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        label = field + "".join(f"[{i}]" for i in bad)
        _fail(env, label, f"= {arr[bad].item()!r} is non-finite")
    return arr


def _integers(action: Any, shape: tuple[int, ...], low: np.ndarray, high: np.ndarray,
              env: str, field: str) -> np.ndarray:
    arr = _integral(_fit_shape(_as_real_array(action, env, field), shape, env, field), env, field)
    outside = (arr < low) | (arr >= high)
    if outside.any():
        where = tuple(int(i) for i in np.argwhere(outside)[0])
        label = field + "".join(f"[{i}]" for i in where)
        lo, hi = np.broadcast_to(low, shape)[where], np.broadcast_to(high, shape)[where]
        _fail(env, label, f"= {arr[where].item()} is outside {int(lo)}..{int(hi) - 1}")
    return arr


def _dict(space: spaces.Dict, action: Any, env: str, field: str,
          optional: Collection[str], lenient: Collection[str]) -> dict[str, Any]:
    if not isinstance(action, Mapping):
        _fail(env, field, f"must be a dict with keys {list(space.spaces)}, got {_kind(action)}")
    missing = [k for k in space.spaces if k not in action and k not in optional]
    if missing:
        _fail(env, field, f"has no key {missing[0]!r} (keys: {list(space.spaces)})")
    extra = [k for k in action if k not in space.spaces]
    if extra:
        _fail(env, field, f"has unknown key {extra[0]!r} (keys: {list(space.spaces)})")
    out = {}
    for key, sub in space.spaces.items():
        if key not in action:
            continue
        if key in lenient and isinstance(sub, spaces.Box):
            out[key] = _box(sub, action[key], env, f"{field}[{key!r}]", finite=False)
        else:
            out[key] = check_action(sub, action[key], env, f"{field}[{key!r}]")
    return out
