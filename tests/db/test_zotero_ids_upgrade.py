"""A home from before Zotero group ids were read as numbers (migration 0044): a channel that bound `04242` sends to
group 4242 again after the upgrade, one workspace holds each number, and a paper added to a library under either
form is not added again."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from socialrag import storage
from socialrag.db import Database, _with_dbname
from socialrag.migrate import apply_migrations
from socialrag.models import Channel

SQL = Path(__file__).resolve().parents[2] / "sql"
AT = datetime(2026, 5, 1, tzinfo=UTC)


@pytest.fixture
def before_0044(pg_server_uri: str, tmp_path: Path) -> Iterator[Database]:
    """A database with every migration before 0044 applied."""
    name = f"pp_zotero_{os.getpid()}"
    with psycopg.connect(pg_server_uri, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    older = tmp_path / "sql"
    older.mkdir()
    for path in SQL.glob("*.sql"):
        if int(path.name[:4]) < 44:
            shutil.copy(path, older / path.name)
    db = Database(_with_dbname(pg_server_uri, name))
    with psycopg.connect(db.conninfo, autocommit=True) as conn:
        apply_migrations(conn, older)
    yield db
    db.close()
    with psycopg.connect(pg_server_uri, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def bind(conn: psycopg.Connection, team: str, channel: str, group: str, at: datetime) -> None:
    storage.workspaces.upsert_team(conn, team)
    storage.workspaces.upsert_channel(conn, Channel(team, channel, channel.lower()))
    storage.settings.upsert_channel_setting(conn, team, channel, zotero_group_id=group)
    conn.execute("INSERT INTO zotero_groups (group_id, team_id, bound_at) VALUES (%s, %s, %s)", (group, team, at))


def test_bindings_with_leading_zeros_are_written_as_their_numbers(before_0044: Database) -> None:
    with before_0044.connection() as conn:
        bind(conn, "TA", "C1", "04242", AT)  # bound first, in the form Zotero reads as 4242
        bind(conn, "TB", "C2", "4242", AT + timedelta(days=1))  # the number itself: its holder
        bind(conn, "TA", "C3", "0777", AT)
        bind(conn, "TB", "C4", "00777", AT + timedelta(days=2))  # a later form of 777: the earlier keeps it
        (paper,) = conn.execute("INSERT INTO papers (title) VALUES ('A paper') RETURNING id").fetchone()
        conn.execute(
            """
            INSERT INTO zotero_items (team_id, channel_id, paper_id, group_id, item_key, pushed_at) VALUES
              ('TA', 'C1', %(p)s, '04242', 'ABCD2345', %(at)s), ('TA', 'C1', %(p)s, '4242', NULL, NULL),
              ('TA', 'C3', %(p)s, '0777', NULL, NULL)
            """,
            {"p": paper, "at": AT},
        )
    assert before_0044.migrate()[0] == 44  # and the migrations after it, as an upgrade runs them
    with before_0044.connection() as conn:
        owners = dict(conn.execute("SELECT group_id, team_id FROM zotero_groups").fetchall())
        bound = dict(conn.execute("SELECT channel_id, zotero_group_id FROM channel_settings").fetchall())
        items = conn.execute("SELECT channel_id, group_id, item_key FROM zotero_items ORDER BY channel_id").fetchall()
    assert owners == {"4242": "TB", "777": "TA"}, owners
    assert bound == {"C1": "4242", "C2": "4242", "C3": "777", "C4": "777"}, bound
    assert items == [("C1", "4242", "ABCD2345"), ("C3", "777", None)], "the paper added once stays added"
