"""A copy of the repository with nothing beside it, and the environment that imports papergym
from that copy (not from the installed one): what a user's fresh clone sees."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# Runs at interpreter start (sitecustomize): a finder placed first on sys.meta_path maps the
# package's namespaces onto the copy's folders, as setup.py does, shadowing the installed copy.
_BOOT = '''
import importlib.abc, importlib.util, os, sys
from pathlib import Path

_ROOT = Path(os.environ["PAPERGYM_TEST_COPY"])
_FOLDERS = {"papergym": "papergym", "papergym.envs": "envs", "papergym.agents": "agents",
            "papergym.benchmarks": "benchmarks", "papergym.leaderboard": "leaderboard"}


class _CopyFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name in _FOLDERS:
            folder = _ROOT / _FOLDERS[name]
            return importlib.util.spec_from_file_location(
                name, folder / "__init__.py", submodule_search_locations=[str(folder)])
        return None


sys.meta_path.insert(0, _CopyFinder())
'''


def copy_repository(dest: Path) -> Path:
    """Copy the files git would commit (tracked, and new files not ignored) into ``dest``."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, capture_output=True, text=True, check=True).stdout
    for name in filter(None, listed.split("\n")):
        if (REPO / name).is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(REPO / name, dest / name)
    return dest


def copy_environment(root: Path) -> dict[str, str]:
    """os.environ for a subprocess importing papergym from ``root`` only."""
    boot = root.parent / f".{root.name}-boot"
    boot.mkdir(exist_ok=True)
    (boot / "sitecustomize.py").write_text(_BOOT)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAPERGYM")}
    env.update(PAPERGYM_TEST_COPY=str(root), PAPERGYM_CACHE="off", PYTHONPATH=str(boot),
               PYTHONDONTWRITEBYTECODE="1")
    return env
