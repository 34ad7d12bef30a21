"""Shared fixtures: the harness's own toy benchmark (tests/fixtures/), loaded once."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
TOY_SPEC = FIXTURES / "toy.yaml"


@pytest.fixture(scope="session")
def toy_spec():
    from papergym.benchmarks.runner import import_spec_modules
    from papergym.benchmarks.spec import load_spec

    spec = load_spec(TOY_SPEC)
    import_spec_modules(spec, TOY_SPEC)
    return spec


@pytest.fixture(scope="session", autouse=True)
def _session_cache(tmp_path_factory):
    """Tests never read or write the user's cache: one papergym.cache folder per test run,
    shared by the xdist workers of that run (the entry lock keeps one build per key)."""
    import os

    if os.environ.get("PAPERGYM_CACHE_DIR"):
        yield
        return
    base = tmp_path_factory.getbasetemp()
    root = (base.parent if base.name.startswith("popen-gw") else base) / "papergym-cache"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PAPERGYM_CACHE_DIR", str(root))
        yield


@pytest.fixture(scope="session", autouse=True)
def _one_math_thread():
    """One torch and BLAS thread per test process, as in the runner's trial workers
    (``limit_threads``): the suite's xdist workers share the machine's cores, and results
    that depend on reduction order are the ones the leaderboard gets."""
    import torch  # noqa: F401  (loaded first, so limit_threads resizes its pool too)

    from papergym.benchmarks.executors import limit_threads

    limit_threads()
    yield
