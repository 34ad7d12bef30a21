"""Worlds held outside every object an agent is handed.

A training view, a sandbox and an episode need the knowledge graph to answer metered calls, but
an agent holds them, so none of them may hold the graph: each keeps a :class:`WorldKey` (an
integer) and looks the world up here per call. Walking any of them, private attributes, closures
and containers included, reaches no :class:`~papergym.envs.kgqa.sandbox.World` and no KG. The
entry is dropped when its key is collected.
"""

from __future__ import annotations

import itertools
import weakref
from typing import Any

_WORLDS: dict[int, Any] = {}
_NEXT = itertools.count()


class WorldKey:
    """An opaque handle on a world kept in this module (one per holder)."""

    __slots__ = ("__weakref__", "_id")

    def __init__(self, world: Any) -> None:
        self._id = next(_NEXT)
        _WORLDS[self._id] = world
        weakref.finalize(self, _WORLDS.pop, self._id, None)

    def __repr__(self) -> str:
        return f"WorldKey({self._id})"


def world_of(key: WorldKey) -> Any:
    """The world behind ``key`` (for the problem's own code)."""
    return _WORLDS[key._id]
