"""A restore stopped between its two renames (the home renamed to ``NAME_replaced``, the restored copy not yet
renamed to ``NAME``) leaves no database ``NAME``. The next start puts ``NAME_replaced`` back as the home rather than
make an empty one, and the next restore does the same first: it reads that home's forget list rather than drop it
as a leftover and bring back who asked to be forgotten."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from bot.cli import main
from socialrag import storage
from socialrag.cli.archive import backup_database
from socialrag.db import Database, ensure_database
from socialrag.pgtools import with_dbname
from tests.db.test_privacy_tables import T, _lab
from tests.support.pghomes import restore_target

pytestmark = pytest.mark.slow

TARGET = "pp_restore_halfway"


@pytest.fixture
def home(pg_server_uri: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The lab's home (``_lab``), backed up to ``nightly.dump``; then U1 asks to be forgotten, and a restore stops
    between its renames: the home is ``NAME_replaced`` and there is no ``NAME``."""
    with restore_target(pg_server_uri, TARGET, tmp_path / "home", monkeypatch) as url:
        ensure_database(pg_server_uri, TARGET)
        db = Database(url)
        db.migrate()
        _lab(db)
        backup_database(url, tmp_path / "nightly.dump")
        with db.connection() as conn:
            storage.privacy.forget_member(conn, T, "U1")
        db.close()
        with psycopg.connect(pg_server_uri, autocommit=True) as conn:
            conn.execute(f'ALTER DATABASE "{TARGET}" RENAME TO "{TARGET}_replaced"')
        yield url


def _databases(server: str) -> list[str]:
    with psycopg.connect(server) as conn:
        rows = conn.execute("SELECT datname FROM pg_database WHERE datname LIKE %s ORDER BY 1", (f"{TARGET}%",))
        return [row[0] for row in rows.fetchall()]


def test_the_next_restore_reads_the_forget_list_of_the_home_a_stopped_one_left(
    pg_server_uri: str, home: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["restore", str(tmp_path / "nightly.dump"), "--force"]) == 0, capsys.readouterr().err
    with psycopg.connect(home) as conn:
        messages = conn.execute("SELECT count(*) FROM messages WHERE user_id = 'U1'").fetchone()
        listed = conn.execute("SELECT user_id FROM forgotten_members").fetchall()
    assert messages == (0,) and listed == [("U1",)]
    assert "forget-me applied again for the 1 member on the replaced home's forget list" in capsys.readouterr().out
    assert _databases(pg_server_uri) == [TARGET]


def test_a_start_puts_back_the_home_a_stopped_restore_left_rather_than_make_an_empty_one(
    pg_server_uri: str, home: str
) -> None:
    ensure_database(pg_server_uri, TARGET)
    assert _databases(pg_server_uri) == [TARGET]
    with psycopg.connect(with_dbname(pg_server_uri, TARGET)) as conn:
        assert conn.execute("SELECT count(*) FROM channels").fetchone() == (2,)
        assert conn.execute("SELECT user_id FROM forgotten_members").fetchall() == [("U1",)]
