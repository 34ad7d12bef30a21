"""Data ships with the project: the MaxCut sets live in the package, checked against their
SHA-256 manifest, and a copy of the repository with nothing beside it builds the qaoa problems."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from papergym import maxcut
from tests.repo_copy import copy_environment, copy_repository

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "papergym" / "data" / "maxcut"


def test_manifest_covers_every_packaged_file_and_matches():
    listed = maxcut._manifest()
    notes = {maxcut.MANIFEST, "SOURCE.md", "LICENSE-instances-source.txt"}
    on_disk = {p.name for p in DATA.iterdir()} - notes
    assert set(listed) == on_disk
    for name, digest in listed.items():
        assert hashlib.sha256((DATA / name).read_bytes()).hexdigest() == digest
    assert "MIT License" in (DATA / "LICENSE-instances-source.txt").read_text()
    sizes = {s: len(maxcut.list_instances(s)) for s in maxcut.SUBSETS}
    assert sizes == {"train_instances_only": 200, "test_instances_only": 50,
                     "generalization_instances_only_1": 93}


def test_a_damaged_archive_is_refused(tmp_path, monkeypatch):
    shutil.copytree(DATA, tmp_path / "maxcut")
    target = tmp_path / "maxcut" / "test_instances_only.zip"
    data = bytearray(target.read_bytes())
    data[len(data) // 2] ^= 0xFF
    target.write_bytes(bytes(data))
    monkeypatch.setattr(maxcut, "_data_dir", lambda: tmp_path / "maxcut")
    for cached in (maxcut._manifest, maxcut._verified_bytes, maxcut._archive, maxcut._members):
        cached.cache_clear()
    try:
        with pytest.raises(ValueError, match="does not match SHA256SUMS"):
            maxcut.load_maxcut("bqp50-1")
        assert maxcut.best_known_cut("gka1b") == 133  # osv.json is intact
    finally:
        for cached in (maxcut._manifest, maxcut._verified_bytes, maxcut._archive, maxcut._members):
            cached.cache_clear()


def test_no_code_path_reads_the_shared_folder():
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True)
    offenders = []
    for name in tracked.stdout.split():
        path = REPO / name
        if path.suffix in {".py", ".md", ".yaml", ".toml", ".cfg", ".txt", ""} and path.is_file():
            text = path.read_text(errors="ignore")
            if "../" + "shared" in text or "PAPERGYM_" + "SHARED" in text:
                offenders.append(name)
    assert offenders == []


_BUILD = textwrap.dedent("""
    import sys
    from pathlib import Path

    import papergym
    from papergym import maxcut
    from papergym.envs.qaoa import instances

    root = Path(sys.argv[1])
    assert Path(papergym.__file__).is_relative_to(root), papergym.__file__
    for pid in ("papergym/QAOA2Partition-v0", "papergym/QAOA2Assign-v0"):
        task = papergym.make_task(pid, tier="standard")
        env = papergym.make(pid, tier="standard")
        env.reset(seed=0)
        assert all(Path(sys.modules[m].__file__).is_relative_to(root)
                   for m in (type(task).__module__, type(env.unwrapped).__module__))
    names = instances.instance_set("std") + instances.instance_set("train")[:3]
    graphs = [instances.get_instance(name) for name in names]
    print(len(graphs), sum(g.n for g in graphs), maxcut.best_known_cut("gka1b"))
""")


def test_a_bare_copy_of_the_repository_builds_both_qaoa_problems(tmp_path):
    root = copy_repository(tmp_path / "bare" / "papergym")  # nothing beside it
    done = subprocess.run([sys.executable, "-c", _BUILD, str(root)], cwd=tmp_path,
                          env=copy_environment(root), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    count, _, gka1b = done.stdout.split()
    assert int(count) == 27 and float(gka1b) == 133
