"""A restore keeps forgotten members forgotten: a backup taken before a member's forget-me is restored with
forget-me applied again for everyone on the forget list of the home it replaces."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import psycopg
import pytest

from bot.cli import main
from socialrag import storage
from socialrag.db import Database
from socialrag.knowledge import live
from socialrag.knowledge.intake import index_messages
from socialrag.models import Message, PaperRef
from tests.db.test_privacy_tables import AT, T, _lab

KNOWN = PaperRef("arxiv", "1706.03762", "https://arxiv.org/abs/1706.03762")

pytestmark = pytest.mark.slow  # pg_dump and pg_restore


def _nightly_backup(db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lab's home (``_lab``), backed up to ``nightly.dump`` by the CLI, as an admin's nightly job would."""
    _lab(db)
    monkeypatch.setenv("DATABASE_URL", db.conninfo)
    monkeypatch.setenv("PAPERPING_OFFLINE", "1")
    monkeypatch.setenv("PAPERPING_HOME", str(tmp_path / "home"))
    assert main(["backup", str(tmp_path / "nightly.dump")]) == 0


def test_a_restore_does_not_bring_back_a_member_forgotten_since_the_backup(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _nightly_backup(db, tmp_path, monkeypatch)
    with db.connection() as conn:
        for member in ("U1", "U2"):  # both ask to be forgotten after last night's backup
            storage.privacy.forget_member(conn, T, member)
    db.close()  # a restore waits for nobody else to use the home
    capsys.readouterr()
    assert main(["restore", str(tmp_path / "nightly.dump"), "--force"]) == 0  # the admin rolls the home back
    said = capsys.readouterr().out
    assert "forget-me applied again for the 2 members on the replaced home's forget list (2 asked after" in said
    with psycopg.connect(db.conninfo) as conn:
        messages = conn.execute("SELECT count(*) FROM messages WHERE user_id IN ('U1', 'U2')").fetchone()
        members = conn.execute("SELECT count(*) FROM members WHERE team_id = %s", (T,)).fetchone()
        listed = conn.execute("SELECT user_id FROM forgotten_members ORDER BY 1").fetchall()
        elsewhere = conn.execute("SELECT count(*) FROM messages WHERE team_id <> %s", (T,)).fetchone()
    assert messages == (0,) and members == (0,) and listed == [("U1",), ("U2",)]
    assert elsewhere == (1,), "another workspace's rows are restored as they were"


def test_a_restore_keeps_messages_deleted_and_reactions_removed_since_the_backup(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _nightly_backup(db, tmp_path, monkeypatch)
    removed_at = datetime(2031, 1, 1, tzinfo=UTC)
    with db.connection() as conn:  # after the backup, U2 deletes their share and takes their reaction off U1's
        live.record_deletion(conn, T, "C1", "2.000001")
        live.record_reaction(conn, T, "C1", "1.000001", "U2", "+1", added=False, at=removed_at)
        assert conn.execute("SELECT count(*) FROM reactions").fetchone() == (0,)
    db.close()
    capsys.readouterr()
    assert main(["restore", str(tmp_path / "nightly.dump"), "--force"]) == 0
    said = capsys.readouterr().out
    assert "1 message deleted in Slack since this backup stay deleted (2 stored messages and replies" in said
    assert "forget-me applied again" not in said  # nobody is on the forget list
    with psycopg.connect(db.conninfo) as conn:
        kept = conn.execute("SELECT ts FROM messages WHERE team_id = %s ORDER BY ts", (T,)).fetchall()
        reactions = conn.execute("SELECT count(*) FROM reactions").fetchone()
        deletions = conn.execute("SELECT ts FROM deleted_messages ORDER BY ts").fetchall()
        removal = conn.execute("SELECT removed_at FROM removed_reactions").fetchall()
        elsewhere = conn.execute("SELECT count(*) FROM messages WHERE team_id <> %s", (T,)).fetchone()
    assert kept == [("1.000001",), ("1.000002",)], "the deleted share and its thread stay gone"
    assert reactions == (0,) and (removed_at,) in removal
    assert deletions == [("0.000009",), ("2.000001",)], (
        "remembered, so a history read or an export cannot bring it back"
    )
    assert elsewhere == (1,)
    # the deletion is still known to the restored home: an older export of the channel does not re-add it
    with psycopg.connect(db.conninfo) as conn:
        assert storage.deletions.load_deleted(conn, [(T, "C1", "2.000001")]) == {(T, "C1", "2.000001")}


def test_a_restore_keeps_out_a_link_edited_out_since_the_backup(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """U1 edits their share after the backup to take its link out: the restored home does not share it, and an
    older copy of it (the backup's own text, in an export) does not bring it back."""
    _nightly_backup(db, tmp_path, monkeypatch)
    edited_at = datetime(2031, 1, 1, tzinfo=UTC)
    share = Message(T, "C1", "1.000001", "U1", "<https://arxiv.org/abs/1706.03762>", AT, papers=(KNOWN,))
    with db.connection() as conn:
        live.record_edit(conn, replace(share, text="wrong link, sorry", papers=(), edited_at=edited_at))
    db.close()
    capsys.readouterr()
    assert main(["restore", str(tmp_path / "nightly.dump"), "--force"]) == 0
    assert "1 share whose paper link was edited out since this backup stay out" in capsys.readouterr().out
    with psycopg.connect(db.conninfo) as conn:
        index_messages(conn, [share])  # the share as it was before the edit
        kept = conn.execute("SELECT ts FROM messages WHERE team_id = %s ORDER BY ts", (T,)).fetchall()
        marks = conn.execute("SELECT ts, edited_at FROM deleted_messages ORDER BY ts").fetchall()
    assert kept == [("2.000001",), ("2.000002",)], "the share and its thread stay out"
    assert marks == [("0.000009", None), ("1.000001", edited_at)]


def _forget_once_checking(db: Database, member: str, done: threading.Event) -> None:
    """``forget-me`` heard by the home, as a ``paperping run`` still serving would, once the restore has read the
    forget list and checks the file (its scratch database exists); the connection closes at once."""
    deadline = time.monotonic() + 120
    with psycopg.connect(db.conninfo, autocommit=True) as conn:
        name = conn.execute("SELECT current_database()").fetchone()[0]  # type: ignore[index]
        while time.monotonic() < deadline:
            if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (f"{name}_checking",)).fetchone():
                storage.privacy.forget_member(conn, T, member)
                done.set()
                return
            time.sleep(0.005)


def test_a_member_forgotten_while_the_restore_runs_stays_forgotten(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The forget list is read before the file is checked and restored; a member forgotten after that read, and
    before the copy replaces the home (the service stopped only then), is forgotten in the copy too."""
    _nightly_backup(db, tmp_path, monkeypatch)
    with db.connection() as conn:
        storage.privacy.forget_member(conn, T, "U2")  # before the restore starts
    db.close()
    heard = threading.Event()
    forgetting = threading.Thread(target=_forget_once_checking, args=(db, "U1", heard))
    forgetting.start()
    try:
        code = main(["restore", str(tmp_path / "nightly.dump"), "--force"])
    finally:
        forgetting.join()
    assert heard.is_set()
    captured = capsys.readouterr()
    assert code == 0, captured.err
    with psycopg.connect(db.conninfo) as conn:
        messages = conn.execute("SELECT count(*) FROM messages WHERE user_id IN ('U1', 'U2')").fetchone()
        listed = conn.execute("SELECT user_id FROM forgotten_members ORDER BY 1").fetchall()
    assert messages == (0,) and listed == [("U1",), ("U2",)]
    assert "forget-me applied again for the 2 members on the replaced home's forget list (2 asked after" in captured.out


def test_a_restore_does_not_bring_back_a_workspace_purged_since_the_backup(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _nightly_backup(db, tmp_path, monkeypatch)
    db.close()
    assert main(["purge", "--team", T, "--yes"]) == 0  # the workspace uninstalled; the admin deletes its data
    capsys.readouterr()
    assert main(["restore", str(tmp_path / "nightly.dump"), "--force"]) == 0  # then rolls the home back
    assert "1 workspace purged since this backup deleted again" in capsys.readouterr().out
    with psycopg.connect(db.conninfo) as conn:
        left = conn.execute("SELECT count(*) FROM messages WHERE team_id = %s", (T,)).fetchone()
        members = conn.execute("SELECT count(*) FROM members WHERE team_id = %s", (T,)).fetchone()
        installed = conn.execute("SELECT count(*) FROM installations WHERE team_id = %s", (T,)).fetchone()
        elsewhere = conn.execute("SELECT count(*) FROM messages WHERE team_id <> %s", (T,)).fetchone()
    assert left == members == installed == (0,), "the purged workspace's messages, members and token stay gone"
    assert elsewhere == (1,), "another workspace's rows are restored as they were"
    assert main(["backup", str(tmp_path / "after.dump")]) == 0  # a backup that knows of the purge
    capsys.readouterr()
    assert main(["restore", str(tmp_path / "after.dump"), "--force"]) == 0
    assert "purged since" not in capsys.readouterr().out, "a purge the backup knows of is not done again"
