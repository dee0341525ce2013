"""``paperping restore`` reads the file it was given once, into a copy only PaperPing's user reads, and checks and
restores that copy: whoever can still write the file (the colleague who copied it over, another user of a shared
folder) cannot change it after the check and have ``pg_restore`` run, as a superuser, what the check never saw."""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

import psycopg
import pytest

from bot.cli import main
from socialrag.db import Database
from tests.db.test_restore_safety import SETVAL, TARGET, _rewrite, _tampered, _untouched_server
from tests.db.test_restore_safety import target as target  # the fixture: a home holding a channel

pytestmark = pytest.mark.slow


def _swap_once_checking(server: str, good: Path, hostile: Path, done: threading.Event) -> None:
    """Write ``hostile`` over ``good`` in place once the restore has read the file for its check and builds the
    reference it compares it with (its scratch database exists)."""
    deadline = time.monotonic() + 120
    with psycopg.connect(server, autocommit=True) as conn:
        while time.monotonic() < deadline:
            found = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (f"{TARGET}_checking",)).fetchone()
            if found:
                with good.open("r+b") as fh:  # the same file, as its owner would write it
                    fh.write(hostile.read_bytes())
                done.set()
                return
            time.sleep(0.005)


def test_a_file_changed_after_the_check_is_not_what_is_restored(
    db: Database, pg_server_uri: str, target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = _tampered(db, tmp_path / "good.dump")
    hostile = tmp_path / "hostile.dump"
    shutil.copyfile(good, hostile)
    shutil.copyfile(good.with_name("good.dump.json"), hostile.with_name("hostile.dump.json"))
    _rewrite(hostile, SETVAL, "CREATE ROLE planted_swap SUPERUSER;".ljust(len(SETVAL) - 1) + "\n")
    assert hostile.stat().st_size == good.stat().st_size
    swapped = threading.Event()
    swapper = threading.Thread(target=_swap_once_checking, args=(pg_server_uri, good, hostile, swapped))
    swapper.start()
    try:
        code = main(["restore", str(good), "--force"])
        swapper.join()
        assert swapped.is_set()  # the file was changed while the restore ran
        assert good.read_bytes() == hostile.read_bytes()
        assert code == 0, capsys.readouterr().err
        with psycopg.connect(target) as conn:
            assert conn.execute("SELECT channel_id FROM channels").fetchall() == [("C1",)]
        with psycopg.connect(pg_server_uri) as conn:  # what the check saw is what ran
            assert conn.execute("SELECT count(*) FROM pg_roles WHERE rolname LIKE 'planted%'").fetchone() == (0,)
    finally:
        swapper.join()
        with psycopg.connect(pg_server_uri, autocommit=True) as conn:
            conn.execute("DROP ROLE IF EXISTS planted_swap")
    with psycopg.connect(pg_server_uri) as conn:
        left = conn.execute("SELECT datname FROM pg_database WHERE datname LIKE 'pp_restore_target_%'").fetchall()
    assert left == []
    _untouched_server(pg_server_uri)


def test_a_pipe_or_folder_in_the_files_place_is_refused_without_waiting(
    pg_server_uri: str, target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Opening a named pipe for reading waits for a writer: the copy never waits on one, nor reads a folder."""
    pipe, folder = tmp_path / "pipe.dump", tmp_path / "folder.dump"
    os.mkfifo(pipe)
    folder.mkdir()
    for path in (pipe, folder):
        assert main(["restore", str(path), "--force"]) == 2
        assert f"no backup file at {path}" in capsys.readouterr().err
    with psycopg.connect(target) as conn:
        assert conn.execute("SELECT channel_id FROM channels").fetchall() == [("CKEEP",)]
    _untouched_server(pg_server_uri)
