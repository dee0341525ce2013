"""A restore keeps forgotten members forgotten: a backup taken before a member's forget-me is restored with
forget-me applied again for everyone on the forget list of the home it replaces."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from bot.cli import main
from socialrag import storage
from socialrag.db import Database
from tests.db.test_privacy_tables import T, _lab

pytestmark = pytest.mark.slow  # pg_dump and pg_restore


def test_a_restore_does_not_bring_back_a_member_forgotten_since_the_backup(
    db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _lab(db)
    monkeypatch.setenv("DATABASE_URL", db.conninfo)
    monkeypatch.setenv("PAPERPING_OFFLINE", "1")
    monkeypatch.setenv("PAPERPING_HOME", str(tmp_path / "home"))
    assert main(["backup", str(tmp_path / "nightly.dump")]) == 0
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
