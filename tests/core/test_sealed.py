"""Sealed held-out data: the eval salt, and every registered Task's training view reaching no
held-out item (walking the view's object graph as an agent could)."""

from __future__ import annotations

import functools
import gc
import os
import stat
import types

import numpy as np
import pytest

import papergym
from papergym.problem import (
    EVAL_SEED_OFFSET,
    PUBLIC_SALT_ID,
    EvalResult,
    MetricOutOfBounds,
    Task,
    eval_salt,
    load_or_create_salt,
    salt_id,
    salt_path,
    sealed_seed,
    set_eval_salt,
)
from papergym.registry import problems

SALT = bytes(range(16))


@pytest.fixture
def salted():
    set_eval_salt(SALT)
    try:
        yield SALT
    finally:
        set_eval_salt(None)


def test_public_default_is_the_documented_function_and_the_salt_changes_it(salted):
    set_eval_salt(None)
    public = Task.eval_seeds(3, 5)
    state = np.random.SeedSequence([EVAL_SEED_OFFSET, 3]).generate_state(5)
    assert public == [EVAL_SEED_OFFSET + int(s) % EVAL_SEED_OFFSET for s in state]
    assert sealed_seed(3, 1) == 3 and salt_id(eval_salt()) == PUBLIC_SALT_ID
    set_eval_salt(SALT)
    sealed = Task.eval_seeds(3, 5)
    assert sealed != public and Task.public_eval_seeds(3, 5) == public
    # disjoint from training seeds, and from the public range: a keyed 63-bit stream
    assert all(2 * EVAL_SEED_OFFSET <= s < 2**63 for s in sealed)
    assert sealed == Task.eval_seeds(3, 5) and sealed_seed(3, 1) != 3
    set_eval_salt(bytes(16))
    assert Task.eval_seeds(3, 5) != sealed


def test_salt_file_is_private_created_once_and_never_in_provenance(tmp_path):
    store = tmp_path / "r.sqlite"
    first = load_or_create_salt(store)
    assert len(first) == 16 and load_or_create_salt(store) == first  # a rerun reproduces
    mode = stat.S_IMODE(os.stat(salt_path(store)).st_mode)
    assert mode == 0o600
    assert load_or_create_salt(tmp_path / "other.sqlite") != first
    assert first.hex() not in salt_id(first) and len(salt_id(first)) == 16
    salt_path(tmp_path / "bad.sqlite").write_text("not a salt\n")
    with pytest.raises(ValueError, match="bad.sqlite.salt"):
        load_or_create_salt(tmp_path / "bad.sqlite")


def test_metric_bounds_are_checked_and_the_old_form_stays_valid():
    task = papergym.make_task("papergym/KGQA-v0", tier="smoke")
    assert task.metric_directions()["hits1"] == "max"
    task.check_metric_bounds(EvalResult({"hits1": 1.0, "kg_calls": 7.0}).metrics)
    with pytest.raises(MetricOutOfBounds, match=r"hits1=3 outside \[0, 1\]"):
        task.check_metric_bounds({"hits1": 3.0})
    credit = papergym.make_task("papergym/StrategicCredit-v0", tier="smoke")  # "min" / "max"
    assert credit.metric_directions()["pr_test"] == "min"
    credit.check_metric_bounds({"pr_test": 1e9})


# ----------------------------------------------------------------------------- the walk


def reachable(root: object, limit: int = 2_000_000) -> list[object]:
    """Everything an agent holding ``root`` reaches by attributes, containers, closures and
    bound methods (not through module globals or classes, which hold only code)."""
    seen: dict[int, object] = {}
    stack = [root]
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, (types.ModuleType, type)):
            continue
        seen[id(obj)] = obj
        if len(seen) > limit:
            raise AssertionError("object graph too large to walk")
        if isinstance(obj, (str, bytes, int, float, complex, bool, np.ndarray, np.generic)):
            continue
        if type(obj).__module__.startswith("torch") and hasattr(obj, "dtype"):
            continue  # a tensor: data only
        if isinstance(obj, types.FunctionType):
            stack += [c.cell_contents for c in obj.__closure__ or () if _filled(c)]
            stack += list(obj.__defaults__ or ()) + list((obj.__kwdefaults__ or {}).values())
        elif isinstance(obj, types.MethodType):
            stack += [obj.__self__, obj.__func__]
        elif isinstance(obj, functools.partial):
            stack += [obj.func, *obj.args, *obj.keywords.values()]
        elif isinstance(obj, dict):
            stack += list(obj.keys()) + list(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack += list(obj)
        else:
            stack += [r for r in gc.get_referents(obj)
                      if not isinstance(r, (types.ModuleType, type, types.FrameType))]
    return list(seen.values())


def _filled(cell: types.CellType) -> bool:
    try:
        cell.cell_contents  # noqa: B018
    except ValueError:
        return False
    return True


def held_out_markers(task: Task, seed: int) -> dict[str, object]:
    """Values that only evaluation may hold: its sealed seeds and the family's test items."""
    markers: dict[str, object] = {"eval seeds": set(task.eval_seeds(seed, 256))}
    if task.id == "papergym/QAOA2Partition-v0":
        markers["evaluation instances"] = set(task.instance_names)
    return markers


def violations(view: object, task: Task, seed: int) -> list[str]:
    markers = held_out_markers(task, seed)
    found = []
    for obj in reachable(view):
        if isinstance(obj, Task):
            found.append(f"a Task ({type(obj).__name__})")
        elif isinstance(obj, (int, np.integer)) and not isinstance(obj, bool) \
                and int(obj) in markers["eval seeds"]:
            found.append(f"eval seed {int(obj)}")
        elif isinstance(obj, str) and obj in markers.get("evaluation instances", ()):
            found.append(f"evaluation instance {obj!r}")
        elif getattr(obj, "qid", -1) >= 2 * 10**6 and hasattr(obj, "gold_answers"):
            found.append(f"test question {obj.qid}")  # kgqa: a test question with gold
    return found


@pytest.mark.parametrize("problem_id", [p.id for p in problems()])
def test_train_view_reaches_no_held_out_item(problem_id, salted):
    task = papergym.make_task(problem_id, tier="smoke")
    seed = 3
    view = task.train_view(seed, task.budget)
    found = violations(view, task, seed)
    assert not found, f"{problem_id}: the training view reaches {sorted(set(found))[:5]}"


def test_the_walk_finds_a_leak():
    """The check can fail: a view holding its Task, an eval seed or a test question."""
    task = papergym.make_task("papergym/KGQA-v0", tier="smoke")

    class Leaky:
        def __init__(self) -> None:
            self.helper = functools.partial(print, task.world(0, sealed=True).test[0])
            self.evaluate = task.evaluate
            self.seeds = task.eval_seeds(0, 2)

    found = violations(Leaky(), task, 0)
    assert any(f.startswith("a Task") for f in found)
    assert any(f.startswith("eval seed") for f in found)
    assert any(f.startswith("test question") for f in found)
