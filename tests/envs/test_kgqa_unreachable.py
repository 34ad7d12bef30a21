"""KGQA: no attribute of the training view, its sandboxes or its episodes reaches the knowledge
graph, private attributes, properties, closures and containers included."""

from __future__ import annotations

import gc
import types

import numpy as np
import pytest

import papergym
from papergym.envs.kgqa.graph import KG
from papergym.envs.kgqa.sandbox import World

LEAVES = (str, bytes, int, float, complex, bool, type(None), np.ndarray, np.generic)


def reach(root: object, limit: int = 300_000) -> list[object]:
    """Every object reachable from ``root`` by gc referents (instance dicts, slots, containers,
    closures, bound methods) and by reading every attribute name ``dir`` lists, private and
    properties included; modules and classes hold only code and are not entered."""
    seen: dict[int, object] = {}
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, (types.ModuleType, type, types.FrameType)):
            continue
        seen[id(obj)] = obj
        assert len(seen) < limit, "object graph too large to walk"
        if isinstance(obj, LEAVES):
            continue
        if isinstance(obj, types.FunctionType):  # closures and defaults, not module globals
            stack += [c.cell_contents for c in obj.__closure__ or () if _filled(c)]
            stack += list(obj.__defaults__ or ()) + list((obj.__kwdefaults__ or {}).values())
            continue
        if isinstance(obj, types.MethodType):
            stack += [obj.__self__, obj.__func__]
            continue
        if isinstance(obj, (types.BuiltinFunctionType, types.CodeType)):
            continue
        stack += [r for r in gc.get_referents(obj) if not isinstance(r, types.FunctionType)
                  or r.__closure__]
        if isinstance(obj, (dict, list, tuple, set, frozenset)):
            continue
        for name in dir(obj):
            if name.startswith("__") and name.endswith("__"):
                continue
            try:
                stack.append(getattr(obj, name))
            except Exception:  # noqa: BLE001 - a property that refuses is not a path
                continue
    return list(seen.values())


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:
        return False
    return True


def leaks(root: object) -> list[str]:
    return sorted({type(o).__name__ for o in reach(root) if isinstance(o, (KG, World))})


@pytest.mark.parametrize("problem_id", ["papergym/KGQA-v0", "papergym/KGQA-v1", "papergym/KGQA-v2"])
def test_view_sandbox_episode_and_batch_reach_no_kg(problem_id):
    task = papergym.make_task(problem_id, tier="smoke")
    view = task.train_view(0, task.budget)
    q = view.train[0]
    sandbox, episode, batch = view.sandbox(q), view.episode(q), view.episodes(view.train[:3])
    episode.step(int(np.flatnonzero(episode.observation()["action_mask"])[0]))  # a used one
    for root in (view, sandbox, episode, batch):
        assert not leaks(root), (type(root).__name__, leaks(root))
    # and they still work through the vault
    assert view.relation_names and sandbox.expand(0) is not None


def test_the_walk_finds_a_private_world():
    task = papergym.make_task("papergym/KGQA-v1", tier="smoke")
    view = task.train_view(0, task.budget)

    class Leaky:
        def __init__(self) -> None:
            self._hidden = {"w": view._w()}

    class Slotted:
        __slots__ = ("_kg",)

        def __init__(self) -> None:
            self._kg = view._w().kg

    assert "World" in leaks(Leaky()) and "KG" in leaks(Slotted())
    grab = (lambda kg: lambda: kg)(view._w().kg)  # a closure
    assert "KG" in leaks(grab)
