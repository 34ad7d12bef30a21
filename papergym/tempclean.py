"""What a trial's agent leaves in the shared temp folders, removed when its trial ends.

With the runner as root an agent process runs as a uid of its own
(:func:`papergym.isolation.unprivileged_ids`: ``AGENT_UID_BASE`` + the problem process's pid)
with a private TMPDIR, but it can still write into any world-writable folder: ``/tmp``,
``/var/tmp``, ``/dev/shm`` where no private one could be mounted. Every file and folder there
owned by that uid is the trial's own, so :func:`remove_files_of` removes them once no process
of the uid is left. Two rules keep that safe:

- nothing is followed: folders are opened relative to their parent's descriptor with
  ``O_NOFOLLOW`` and checked to be the entry just listed, so a symlink or a folder swapped in
  by another user between the listing and the open never leads the walk elsewhere;
- only the uid's own entries go; a folder of the uid that holds another user's entry stays,
  with that entry.

A folder the operator hands agents on purpose (a world-writable report folder, as the attack
tests use) is kept whole by naming it in ``$PAPERGYM_KEEP_AGENT_FILES`` (``os.pathsep``
separated), read by the harness, never by the agent, whose environment is its own.

The uid is the trial's alone only while its problem process's pid is held: the cleanup runs
in the problem process itself (:meth:`papergym.isolation.AgentProcess.close`), or, for a
problem process killed before it could, in the runner before it reaps that process
(:func:`reclaim_killed_trial`), so a later trial given the same pid, hence the same uid,
never loses its files.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile

__all__ = ["KEEP_ENV", "kill_processes_of", "reclaim_killed_trial", "remove_files_of", "shared_temp_folders"]

_EXTRA_SHARED = ("/tmp", "/var/tmp", "/usr/tmp", "/dev/shm")
KEEP_ENV = "PAPERGYM_KEEP_AGENT_FILES"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def shared_temp_folders() -> list[str]:
    """The world-writable folders an agent could leave files in: every folder
    :mod:`tempfile` could pick here (``TMPDIR``/``TEMP``/``TMP``, ``/tmp``, ``/var/tmp``,
    ``/usr/tmp``, the working folder) and ``/dev/shm``, each once (by device and inode)."""
    candidates = [*tempfile._candidate_tempdir_list(), *_EXTRA_SHARED]  # type: ignore[attr-defined]
    folders: list[str] = []
    seen: set[tuple[int, int]] = set()
    for path in candidates:
        try:
            info = os.stat(path)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode) and info.st_mode & stat.S_IWOTH \
                and (info.st_dev, info.st_ino) not in seen:
            seen.add((info.st_dev, info.st_ino))
            folders.append(path)
    return folders


def remove_files_of(uid: int, folders: list[str] | None = None,
                    keep: list[str] | None = None) -> int:
    """Remove every file and folder owned by ``uid`` under ``folders`` (default:
    :func:`shared_temp_folders`), at any depth the uid could have reached, except inside the
    folders ``keep`` (default: ``$PAPERGYM_KEEP_AGENT_FILES``); return how many entries were
    removed. No process of ``uid`` may be running (it could write while we walk), and ``uid``
    must be nobody else's (see the module's docstring)."""
    if uid == 0:
        raise ValueError("remove_files_of(0): root's files are never a trial's leftovers")
    if keep is None:
        keep = [p for p in os.environ.get(KEEP_ENV, "").split(os.pathsep) if p]
    removed = 0
    visited: set[tuple[int, int]] = set()  # folders walked, or kept: never entered (again)
    for folder in keep:
        with contextlib.suppress(OSError):
            info = os.stat(folder)
            visited.add((info.st_dev, info.st_ino))
    for folder in shared_temp_folders() if folders is None else folders:
        try:
            fd = os.open(folder, _DIR_FLAGS)
        except OSError:
            continue
        try:
            info = os.fstat(fd)
            if (info.st_dev, info.st_ino) not in visited:
                visited.add((info.st_dev, info.st_ino))
                removed += _clean(fd, uid, visited)
        finally:
            os.close(fd)
    return removed


def _clean(dir_fd: int, uid: int, visited: set[tuple[int, int]]) -> int:
    """Remove ``uid``'s entries in the folder open as ``dir_fd``, descending into every
    sub-folder the uid could have entered (its own, or one searchable by others)."""
    removed = 0
    try:
        names = os.listdir(dir_fd)
    except OSError:
        return 0
    for name in names:
        try:
            info = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            continue
        own = info.st_uid == uid
        if not stat.S_ISDIR(info.st_mode):
            if own:
                with contextlib.suppress(OSError):
                    os.unlink(name, dir_fd=dir_fd)
                    removed += 1
            continue
        if not (own or info.st_mode & stat.S_IXOTH) or (info.st_dev, info.st_ino) in visited:
            continue  # the uid could not have written below it, or a bind-mount loop
        try:
            child = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
        except OSError:
            continue
        try:
            opened = os.fstat(child)
            if (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
                continue  # swapped since the listing: not the folder we looked at
            visited.add((opened.st_dev, opened.st_ino))
            removed += _clean(child, uid, visited)
        finally:
            os.close(child)
        if own:
            with contextlib.suppress(OSError):  # not empty: another user's entry stays
                os.rmdir(name, dir_fd=dir_fd)
                removed += 1
    return removed


def kill_processes_of(uid: int) -> None:
    """SIGKILL every process running as ``uid`` (root only): a child takes the uid and calls
    ``kill(-1)``, which reaches exactly the processes that uid may signal, its own, in one
    atomic pass (a process forking meanwhile cannot slip through)."""
    if uid == 0:
        raise ValueError("kill_processes_of(0) would kill the whole machine")
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            with contextlib.suppress(ProcessLookupError):
                os.kill(-1, 9)
            code = 0
        finally:
            os._exit(code)
    os.waitpid(pid, 0)


def reclaim_killed_trial(problem_pid: int) -> int:
    """In the runner, for a problem process that died (or was killed) before its own cleanup:
    wait for it to end without reaping it (its pid, hence its agent's uid, stays taken), kill
    whatever its agent left running, and remove the agent's files from the shared temp
    folders. The caller reaps the process afterwards. Returns the entries removed; 0 when the
    runner is not root (no per-trial uid: see docs/contract.md)."""
    from papergym.isolation import AGENT_UID_BASE

    if os.geteuid() != 0:
        return 0
    with contextlib.suppress(ChildProcessError):
        os.waitid(os.P_PID, problem_pid, os.WEXITED | os.WNOWAIT)
    uid = AGENT_UID_BASE + problem_pid
    kill_processes_of(uid)
    return remove_files_of(uid)
