"""continual problems: the stream's protocol, the benchmark's sanity, the problem-side metrics."""

from __future__ import annotations

import gc

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import papergym
from papergym import cache
from papergym import datasets as D
from papergym.envs.continual import core as C
from papergym.envs.continual.task import TUNING_SEED, ContinualView, TaskData, backbone_entry
from papergym.problem import BudgetExceeded

PLAIN = "papergym/ContinualLoRA-v1"
HARD = "papergym/ContinualLoRAHard-v1"


def view_of(problem=PLAIN, seed=0, **kwargs):
    task = papergym.make_task(problem, tier="smoke", **kwargs)
    budget = task.budget
    with threadpool_limits(1):
        return task, task.train_view(seed, budget), budget


def zero_stream(view):
    for _ in range(view.num_tasks):
        view.next_task()
        view.submit([np.zeros(s) for s in view.adapted_shapes])
    return view.finish()


def test_image_transforms_are_the_named_maps():
    X, _ = D.load_digits()
    X = X[:20]
    img = X.reshape(-1, 8, 8)
    assert np.array_equal(D.rotate90(D.rotate90(D.rotate90(D.rotate90(X)))), X)
    assert np.array_equal(D.rotate90(X).reshape(-1, 8, 8)[:, 0, :], img[:, :, -1])  # counter-clockwise
    assert np.array_equal(D.transpose_images(X).reshape(-1, 8, 8), img.transpose(0, 2, 1))
    assert np.allclose(D.invert(D.invert(X)), X)
    shifted = D.shift_images(X, 0, 2).reshape(-1, 8, 8)
    assert np.array_equal(shifted[:, :, 2:], img[:, :, :-2]) and not shifted[:, :, :2].any()
    blurred = D.box_blur3(np.eye(1, 64, 27)).reshape(8, 8)  # one pixel at (3, 3)
    assert np.allclose(blurred[2:5, 2:5], 1 / 9) and blurred.sum() == pytest.approx(1.0)
    perm = D.pixel_permutation(64, np.random.default_rng(0))
    assert np.array_equal(D.permute_pixels(X, perm)[:, np.argsort(perm)], X)
    assert list(D.remap_labels(np.arange(10), 3)) == [3, 4, 5, 6, 7, 8, 9, 0, 1, 2]
    with pytest.raises(ValueError, match="square"):
        D.rotate90(np.zeros((2, 10)))


def test_backbone_is_accurate_and_the_shifts_are_real():
    task, view, _ = view_of()
    backbone = cache.get(backbone_entry(0, 128, version=1))
    assert backbone.clean_accuracy >= 0.9
    zero = [np.zeros(s) for s in backbone.adapted_shapes()]
    for split in C.build_stream(0, C.TASKS, hard=False, version=1):
        acc = C.accuracy(backbone.weights, backbone.biases, zero, split.X_test, split.y_test)
        assert acc <= backbone.clean_accuracy - 0.2, split.name  # every shift costs accuracy
    # every task uses the same base images (2:1 train / test), and Hard remaps T2 and T4 only
    plain, hard = C.build_stream(0, C.TASKS, False, 1), C.build_stream(0, C.TASKS, True, 1)
    for p, h in zip(plain, hard):
        assert abs(len(p.y_train) - 2 * len(p.y_test)) <= 10
        assert np.array_equal(p.X_test, h.X_test)
        assert np.array_equal(h.y_test, (p.y_test + 3) % 10) == (p.name in C.HARD_REMAP)


def test_v1_helpers_are_the_named_maps():
    X, _ = D.load_digits()
    img = X[:20].reshape(-1, 8, 8)
    assert np.array_equal(D.mirror_images(X[:20], "lr").reshape(-1, 8, 8), img[:, :, ::-1])
    assert np.array_equal(D.mirror_images(X[:20], "tb").reshape(-1, 8, 8), img[:, ::-1, :])
    top = D.invert_half(X[:20], "top").reshape(-1, 8, 8)
    assert np.allclose(top[:, :4], 1 - img[:, :4]) and np.array_equal(top[:, 4:], img[:, 4:])
    perm = D.partial_pixel_permutation(64, 24, np.random.default_rng(0))
    assert sorted(perm) == list(range(64)) and np.sum(perm != np.arange(64)) <= 24
    assert np.sum(perm != np.arange(64)) >= 20  # a random 24-cycle structure leaves few fixed
    with pytest.raises(ValueError, match="half"):
        D.invert_half(X[:2], "middle")


def test_v1_pretraining_domains_are_not_stream_tasks_and_every_task_starts_above_chance():
    X, _ = C.clean_stream_split(0)[:2]
    pretrain = [f(X) for f in C.PRETRAIN_DOMAINS_V1.values()]
    for name in C.TASKS:
        shifted = C.transform(name, X, 0, version=1)
        assert all(np.abs(shifted - p).max() > 0.1 for p in pretrain), name  # disjoint
    backbone = cache.get(backbone_entry(0, 128, version=1))
    assert backbone.clean_accuracy >= 0.9
    task = papergym.make_task("papergym/ContinualLoRA-v1", tier="smoke", tasks=5)
    _, view = task, task.train_view(0, task.budget)
    metrics = task.evaluate(zero_stream(view), 0).metrics
    starts = [C.accuracy(backbone.weights, backbone.biases,
                         [np.zeros(s) for s in backbone.adapted_shapes()], sp.X_test, sp.y_test)
              for sp in C.build_stream(0, C.TASKS, False, version=1)]
    assert min(starts) >= 0.2 and metrics["start_accuracy"] == pytest.approx(np.mean(starts))
    assert metrics["mfn"] == pytest.approx(metrics["start_accuracy"])  # the frozen backbone
    # v0's backbone, pretrained on clean digits only, starts at chance (the reason for v1)
    v0 = cache.get(backbone_entry(0, 128))
    v0_starts = [C.accuracy(v0.weights, v0.biases, [np.zeros(s) for s in v0.adapted_shapes()],
                            sp.X_test, sp.y_test) for sp in C.build_stream(0, C.TASKS, False)]
    assert np.mean(v0_starts) < 0.2 < np.mean(starts)


def test_budget_order_and_closing_are_enforced():
    task, view, budget = view_of()
    with pytest.raises(RuntimeError, match="next_task"):
        view.submit([np.zeros(s) for s in view.adapted_shapes])
    data = view.next_task()
    assert isinstance(data, TaskData) and data.index == 0 and data.name == "T1"
    with pytest.raises(RuntimeError, match="submit"):
        view.next_task()  # one task at a time
    for _ in range(view.epochs):
        assert len(data.batches.epoch()) == data.batches.batches_per_epoch
    with pytest.raises(BudgetExceeded):
        data.batches.epoch()
    data.gradient_data(), data.gradient_data()
    with pytest.raises(BudgetExceeded):
        data.gradient_data()
    with pytest.raises(ValueError, match="shape"):
        view.submit([np.zeros((3, 3))] * 3)
    with pytest.raises(FloatingPointError):
        view.submit([np.full(s, np.nan) for s in view.adapted_shapes])
    with pytest.raises(PermissionError, match="reference"):
        view.submit([np.zeros(s) for s in view.adapted_shapes], task_specific=True)
    view.submit([np.zeros(s) for s in view.adapted_shapes])
    with pytest.raises(RuntimeError, match="closed"):
        data.batches.epoch()  # a closed task's data are no longer given
    with pytest.raises(RuntimeError, match="closed"):
        data.gradient_data()
    with pytest.raises(RuntimeError, match="submitted"):
        view.finish()
    with pytest.raises(TypeError, match="receipt"):
        task.evaluate("continual-stream:0:3", 0)  # a guessed receipt before finishing
    assert budget.used["epochs_task0"] == view.epochs


def test_the_view_holds_no_test_item():
    task, view, _ = view_of(problem=HARD)
    tests = {s.X_test.tobytes() for s in C.build_stream(0, view.tasks, True, version=1)}
    rows = {row.tobytes() for s in C.build_stream(0, view.tasks, True, version=1) for row in s.X_test}
    seen, stack = set(), [view]
    while stack:  # walk the view's object graph as an agent could
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, np.ndarray) and obj.ndim == 2 and obj.shape[1] == 64:
            assert obj.tobytes() not in tests and not any(r.tobytes() in rows for r in obj[:5])
        stack.extend(r for r in gc.get_referents(obj) if not isinstance(r, type))


def test_the_problem_scores_the_submitted_updates_without_task_identity():
    task, view, _ = view_of()
    receipt = zero_stream(view)
    with pytest.raises(RuntimeError, match="all submitted"):
        view.next_task()  # nothing of the learner runs at test: the problem predicts itself
    frozen = task.evaluate(receipt, 0).metrics
    assert frozen["bwt"] == 0 and frozen["fwt"] == 0 and "top1_share" not in frozen
    backbone = cache.get(backbone_entry(0, 128, version=1))
    splits = C.build_stream(0, view.tasks, False, version=1)
    zero = [np.zeros(s) for s in backbone.adapted_shapes()]
    direct = np.mean([C.accuracy(backbone.weights, backbone.biases, zero, s.X_test, s.y_test)
                      for s in splits])
    assert frozen["mfn"] == pytest.approx(direct)
    # a rank-r update with equal singular values is flat; the metrics are the problem's own
    rng = np.random.default_rng(0)
    task, view, _ = view_of()
    for _ in range(view.num_tasks):
        view.next_task()
        ups = []
        for out, inp in view.adapted_shapes:
            U, _ = np.linalg.qr(rng.normal(size=(out, 4)))
            V, _ = np.linalg.qr(rng.normal(size=(inp, 4)))
            ups.append(0.05 * U @ V.T)
        view.submit(ups)
    m = task.evaluate(view.finish(), 0).metrics
    assert m["top1_share"] == pytest.approx(0.25, abs=1e-9) and m["flatness"] == pytest.approx(1.0, abs=1e-9)
    with pytest.raises(TypeError, match="receipt"):
        task.evaluate({"weights": 1}, 0)


def test_task_specific_updates_are_a_reference_privilege():
    task = papergym.make_task(PLAIN, tier="smoke")
    task.set_agent_role("reference")
    budget = task.budget
    view = task.train_view(0, budget)
    for _ in range(view.num_tasks):
        view.next_task()
        view.submit([np.zeros(s) for s in view.adapted_shapes], task_specific=True)
    task.evaluate(view.finish(), 0)
    assert task.privileged_used


def test_transfer_metrics_follow_the_definitions():
    a = np.array([[0.1, 0.2, 0.3], [0.9, 0.4, 0.3], [0.7, 0.8, 0.5], [0.6, 0.7, 0.9]])
    m = C.transfer_metrics(a)
    assert m["mfn"] == pytest.approx((0.6 + 0.7 + 0.9) / 3)
    assert m["maa"] == pytest.approx((0.9 + (0.7 + 0.8) / 2 + (0.6 + 0.7 + 0.9) / 3) / 3)
    assert m["bwt"] == pytest.approx(((0.6 - 0.9) + (0.7 - 0.8)) / 2)
    assert m["fwt"] == pytest.approx(((0.4 - 0.2) + (0.5 - 0.3)) / 2)
    assert m["zero_shot"] == pytest.approx((0.4 + 0.5) / 2)
    assert C.balance(np.array([1.0, 0.0, 0.0])) == pytest.approx((1.0, 0.0))


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="order"):
        papergym.make_task(PLAIN, tier="smoke", order="sideways")
    with pytest.raises(ValueError, match="tasks"):
        papergym.make_task(PLAIN, tier="smoke", tasks=6)
    with pytest.raises(ValueError, match="rank"):
        papergym.make_task(PLAIN, tier="smoke", rank=40)


def test_tuning_runs_on_its_own_stream_and_cannot_recurse():
    task, view, budget = view_of(tuning_runs=1)
    calls = []

    def fit(v):
        calls.append(v.seed)
        with pytest.raises(PermissionError):
            v.validation_score(fit, {"run": "again"})
        return zero_stream(v)

    score = view.validation_score(fit, {"run": "zero-stream-test"})
    assert calls == [TUNING_SEED] and 0 <= score <= 1
    assert isinstance(view, ContinualView) and budget.used["tuning_runs"] == 1
    with pytest.raises(BudgetExceeded):
        view.validation_score(fit, {"run": "zero-stream-test"})
