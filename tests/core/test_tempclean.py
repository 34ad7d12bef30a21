"""The sweep of a trial's uid from the shared temp folders (papergym/tempclean.py): only that
uid's entries go, nothing is followed, and a killed problem process is cleaned up before its
pid, hence its agent's uid, can be given to another trial."""

from __future__ import annotations

import os
import signal
import stat
import time
from pathlib import Path

import pytest

from papergym.isolation import AGENT_UID_BASE
from papergym.tempclean import reclaim_killed_trial, remove_files_of, shared_temp_folders

as_root = pytest.mark.skipif(os.geteuid() != 0, reason="files of other uids need root to make")
UID, OTHER = AGENT_UID_BASE + 7, AGENT_UID_BASE + 8  # never a live problem process's pid


def _make(path: Path, uid: int, folder: bool = False) -> Path:
    if folder:
        path.mkdir()
    else:
        path.write_bytes(b"x")
    os.lchown(path, uid, uid)
    return path


@as_root
def test_only_the_uids_entries_go_and_nothing_is_followed(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o1777)
    outside = tmp_path / "outside"  # reached only through a symlink: must stay whole
    outside.mkdir()
    target = _make(outside / "victim", UID)
    _make(shared / "file", UID)
    tree = _make(shared / "tree", UID, folder=True)
    _make(_make(tree / "deep", UID, folder=True) / "file", UID)
    mixed = _make(shared / "mixed", UID, folder=True)
    _make(mixed / "theirs", OTHER)
    _make(mixed / "ours", UID)
    link = shared / "link"
    link.symlink_to(outside)
    os.lchown(link, UID, UID)
    public = _make(shared / "public", OTHER, folder=True)  # theirs but o+x: the uid wrote below
    public.chmod(0o777)
    _make(public / "ours", UID)
    private = _make(shared / "private", OTHER, folder=True)  # theirs, 0700: never entered
    private.chmod(0o700)
    _make(private / "planted", UID)

    removed = remove_files_of(UID, [str(shared)], keep=[])

    left = sorted(str(p.relative_to(shared)) for p in shared.rglob("*"))
    assert left == ["mixed", "mixed/theirs", "private", "private/planted", "public"]
    assert target.exists()  # the symlink itself went, not what it points at
    assert removed == 7  # file, tree/deep/file, tree/deep, tree, mixed/ours, link, public/ours


@as_root
def test_a_kept_folder_is_not_entered(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o1777)
    report = shared / "report"
    report.mkdir(mode=0o777)
    _make(report / "result.json", UID)
    _make(shared / "stray", UID)
    assert remove_files_of(UID, [str(shared)], keep=[str(report)]) == 1
    assert (report / "result.json").exists() and not (shared / "stray").exists()


def test_root_is_never_swept():
    with pytest.raises(ValueError, match="root"):
        remove_files_of(0, [])


def test_the_shared_folders_are_the_world_writable_temp_candidates():
    folders = shared_temp_folders()
    assert "/tmp" in folders  # sticky 1777 on every Linux
    assert all(os.stat(f).st_mode & stat.S_IWOTH for f in folders)
    assert len({os.stat(f).st_ino for f in folders}) == len(folders)


@as_root
def test_a_killed_problem_process_is_cleaned_before_its_pid_is_freed():
    """A problem process SIGKILLed mid-trial, whose agent left a daemon running as its uid that
    keeps writing to /tmp: the runner kills the daemon and removes its files, and only then
    reaps the process."""
    ready_r, ready_w = os.pipe()
    problem = os.fork()
    if problem == 0:  # the problem process: its agent's uid is AGENT_UID_BASE + its pid
        uid = AGENT_UID_BASE + os.getpid()
        if os.fork() == 0:  # the agent's daemon, in a session of its own
            os.setsid()
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            path = f"/tmp/papergym-tempclean-{os.getppid()}"
            os.write(ready_w, b"x")
            while True:
                with open(path, "a") as handle:
                    handle.write("x")
                time.sleep(0.01)
        time.sleep(600)
        os._exit(0)
    os.close(ready_w)
    assert os.read(ready_r, 1) == b"x"
    os.close(ready_r)
    leftover = Path(f"/tmp/papergym-tempclean-{problem}")
    for _ in range(200):
        if leftover.exists():
            break
        time.sleep(0.01)
    assert leftover.stat().st_uid == AGENT_UID_BASE + problem
    os.kill(problem, signal.SIGKILL)
    assert reclaim_killed_trial(problem) >= 1
    time.sleep(0.1)  # a surviving daemon would write the file again
    assert not leftover.exists()
    _, status = os.waitpid(problem, 0)  # still ours to reap: the pid was held throughout
    assert os.WTERMSIG(status) == signal.SIGKILL
