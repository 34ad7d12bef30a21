"""Shared pieces of the attack tests (test_attacks.py, test_attacks_round2.py)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from papergym.tempclean import KEEP_ENV


@pytest.fixture
def attack_dir(monkeypatch):
    """A world-writable folder where cheating agents report what they saw."""
    folder = Path(tempfile.mkdtemp(prefix="papergym-attack-"))
    os.chmod(folder, 0o777)  # the agent process may run as another user
    monkeypatch.setenv("PAPERGYM_ATTACK_DIR", str(folder))
    monkeypatch.setenv(KEEP_ENV, str(folder))  # what agents report there outlives the trial
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def honest(rows, cheat):
    """The cheat is stopped: failed, or exactly the zero policy's score."""
    zero, row = rows["zero"], rows[cheat]
    assert zero.ok and zero.metrics["return"] < -0.1
    return (not row.ok) or row.metrics == zero.metrics
