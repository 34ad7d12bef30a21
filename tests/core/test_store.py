"""The results store under concurrent use: what one connection commits stays visible to
other processes while more connections of the same process come and go."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

from papergym.leaderboard.store import Row, Store


def _row(key: str) -> Row:
    return Row(key=key, benchmark="b", section="s", tier="smoke", problem_id="p",
               problem_kwargs={}, agent="a", agent_id="f/a", agent_role="baseline",
               agent_config={}, seed=0, status="ok", metrics={"m": 1.0})


def _count_elsewhere(path) -> int:
    """Open the store read-write in another process, count, close (a progress poll). Were
    the writer's locks lost, this close would checkpoint and delete the WAL under it."""
    code = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
            "print(c.execute('SELECT count(*) FROM trials').fetchone()[0]); c.close()")
    return int(subprocess.run([sys.executable, "-c", code, str(path)], check=True,
                              capture_output=True, text=True).stdout)


def test_rows_stay_visible_when_a_second_store_opens_in_the_same_process(tmp_path):
    path = tmp_path / "s.sqlite"
    writer = Store(path)
    writer.put(_row("k0"))
    heartbeat = Store(path)  # as the runner's claims heartbeat opens one
    assert _count_elsewhere(path) == 1
    for i in range(1, 4):
        writer.put(_row(f"k{i}"))
        assert _count_elsewhere(path) == i + 1  # each commit seen by a fresh connection
    heartbeat.close()
    writer.close()
    assert sqlite3.connect(path).execute("SELECT count(*) FROM trials").fetchone()[0] == 4
