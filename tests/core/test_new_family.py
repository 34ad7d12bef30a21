"""`papergym new-family NAME` writes a family that passes `papergym check`, the registry-wide
tests and its own tests straight away, in a copy of the repository."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from papergym.newfamily import new_family
from tests.repo_copy import copy_environment, copy_repository

CLI = "import sys; from papergym.cli import main; sys.exit(main())"


def test_a_generated_family_passes_check_and_its_own_tests(tmp_path):
    root = copy_repository(tmp_path / "repo")
    env = copy_environment(root)

    def run(*argv: str, timeout: int = 300) -> subprocess.CompletedProcess:
        return subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=timeout)

    made = run(sys.executable, "-c", CLI, "new-family", "lab_reach")
    assert made.returncode == 0, made.stderr
    assert "benchmarks/specs/lab_reach.yaml" in made.stdout
    checked = run(sys.executable, "-c", CLI, "check", "papergym/LabReach-v0", "--steps", "50")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "(env, default): PASS" in checked.stdout and "(env, smoke): PASS" in checked.stdout
    tests = ["tests/envs/test_lab_reach.py", "tests/agents/test_lab_reach.py"]
    lint = run(str(Path(sys.executable).parent / "ruff"), "check", "envs/lab_reach", "agents/lab_reach",
               "benchmarks", *tests)
    assert lint.returncode == 0, lint.stdout
    tested = run(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests,
                 "tests/envs/test_registered.py", "-k", "lab_reach or LabReach")
    assert tested.returncode == 0, tested.stdout[-4000:]
    assert "\n10 passed" in tested.stdout  # 5 of the family's own, 5 registry-wide


def test_new_family_refuses_a_bad_name_or_an_existing_family(tmp_path):
    for folder in ("envs", "agents", "benchmarks/specs", "tests"):
        (tmp_path / folder).mkdir(parents=True)
    with pytest.raises(ValueError, match="lowercase Python identifier"):
        new_family("Bad-Name", tmp_path)
    written = new_family("fresh_one", tmp_path)
    assert len(written) == 8 and all(p.is_file() for p in written)
    with pytest.raises(FileExistsError, match="exists already"):
        new_family("fresh_one", tmp_path)
    with pytest.raises(FileNotFoundError, match="not a papergym repository"):
        new_family("other", tmp_path / "envs")
