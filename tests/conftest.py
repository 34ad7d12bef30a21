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
