"""The Ray executor on a local 2-CPU Ray: same rows as local, resume across executors,
killed workers and hung trials recorded as failures."""

from __future__ import annotations

import shutil

import pytest
import yaml

from papergym.benchmarks.runner import run_benchmark
from papergym.benchmarks.spec import load_spec
from papergym.leaderboard.store import Store
from papergym.problem import salt_path
from tests.conftest import FIXTURES, TOY_SPEC

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_rows_equal_local_and_resume_across_executors(local_ray, toy_spec, tmp_path):
    local, mixed = tmp_path / "local.sqlite", tmp_path / "mixed.sqlite"
    run_benchmark(toy_spec, "smoke", store=local, workers=2, spec_path=TOY_SPEC)
    shutil.copy(salt_path(local), salt_path(mixed))  # the same sealed held-out draws
    first = run_benchmark(toy_spec, "smoke", store=mixed, workers=2, agents=["greedy", "zero"],
                          spec_path=TOY_SPEC)
    rest = run_benchmark(toy_spec, "smoke", store=mixed, workers=2, executor="ray",
                         spec_path=TOY_SPEC)
    assert first.ran == 12 and rest.skipped == 12 and rest.ran == 12 and rest.failed == 0
    with Store(local) as a, Store(mixed) as b:
        assert {r.key: r.metrics for r in a.all()} == {r.key: r.metrics for r in b.all()}


def test_killed_worker_and_hang_are_failed_rows(local_ray, tmp_path):
    data = yaml.safe_load(TOY_SPEC.read_text())
    data["imports"] = [str(FIXTURES / "toy_problem.py")]
    data["problems"][0]["agents"] = ["greedy", "kills_worker", "hang"]
    data["problems"][0]["tiers"]["smoke"] = {"seeds": 1, "timeout_s": 15, "grid": {"horizon": [8]}}
    data["claims"] = []
    path = tmp_path / "faults.yaml"
    path.write_text(yaml.safe_dump(data))
    spec = load_spec(path)
    store = tmp_path / "faults.sqlite"
    # No retry here, so the killed worker's trial fails fast (Ray's default here is one retry).
    summary = run_benchmark(spec, "smoke", store=store, workers=2, executor="ray", spec_path=path,
                            executor_options={"max_retries": 0})
    assert summary.ran == 3 and summary.failed == 2
    with Store(store) as db:
        errors = {r.agent: r.error for r in db.all() if not r.ok}
    assert "worker died" in errors["kills_worker"]
    assert "TimeoutError" in errors["hang"]
