"""The group's top list counted in the database: what counts and as what, who engaged, the order, and a year of a
large channel read as the few rows of its first papers, not as its every reaction."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from socialrag.db import Database
from socialrag.report import load_top_list

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)


def channel(conn: psycopg.Connection, papers: int) -> list[int]:
    """A team, its channel C1 with a bot among its members, and ``papers`` papers; their ids."""
    conn.execute("INSERT INTO teams (team_id) VALUES ('T1')")
    conn.execute("INSERT INTO channels (team_id, channel_id, name) VALUES ('T1', 'C1', 'lab')")
    conn.execute("INSERT INTO members (team_id, user_id, display_name, is_bot) VALUES ('T1', 'UBOT', 'bot', true)")
    rows = conn.execute(
        "INSERT INTO papers (title) SELECT 'Paper ' || g FROM generate_series(1, %s) g RETURNING id", (papers,)
    ).fetchall()
    return sorted(r[0] for r in rows)


def share(conn: psycopg.Connection, paper: int, user: str, ts: str, thread_ts: str | None = None) -> int:
    """A message linking ``paper`` (a reply when ``thread_ts`` is given), an hour before now."""
    row = conn.execute(
        "INSERT INTO messages (team_id, channel_id, ts, thread_ts, user_id, text, posted_at) "
        "VALUES ('T1', 'C1', %s, %s, %s, 'a link', %s) RETURNING id",
        (ts, thread_ts, user, NOW - timedelta(hours=1)),
    ).fetchone()
    assert row is not None
    if thread_ts is None:
        conn.execute(
            "INSERT INTO message_papers (message_id, paper_id, team_id, channel_id, url) "
            "VALUES (%s, %s, 'T1', 'C1', 'https://x')",
            (row[0], paper),
        )
    return int(row[0])


def react(conn: psycopg.Connection, message: int, user: str, emoji: str) -> None:
    conn.execute(
        "INSERT INTO reactions (message_id, team_id, channel_id, user_id, emoji, reacted_at) "
        "VALUES (%s, 'T1', 'C1', %s, %s, %s)",
        (message, user, emoji, NOW - timedelta(minutes=30)),
    )


def test_what_counts_as_what_who_engaged_and_the_order(db: Database) -> None:
    with db.connection() as conn:
        p5, p7, p9 = channel(conn, 3)
        a = share(conn, p7, "U2", "1.1")
        share(conn, p7, "U4", "1.2")  # a re-share
        share(conn, p7, "U4", "1.3", thread_ts="1.1")
        react(conn, a, "U3", "+1")
        react(conn, a, "U1", "-1")  # a negative reaction is not engagement worth listing
        b = share(conn, p9, "U3", "2.1")
        share(conn, p9, "U2", "2.2", thread_ts="2.1")
        react(conn, b, "U1", "bookmark")
        c = share(conn, p5, "U1", "3.1")
        conn.execute("INSERT INTO saved_papers VALUES ('T1', 'C1', %s, 'U4', %s)", (p5, NOW - timedelta(days=2)))
        react(conn, c, "U4", "fire")
        react(conn, c, "UBOT", "+1")  # bots are not counted
        react(conn, c, "U2", "eyes")  # this channel reads :eyes: as negative
        conn.execute(
            "INSERT INTO emoji_sentiments (team_id, channel_id, emoji, sentiment) VALUES ('T1', 'C1', 'eyes', "
            "'negative')"
        )
        top = load_top_list(conn, "T1", "C1", "week", NOW)
    assert [p.paper_id for p in top.papers] == [p7, p9, p5], "5 and 9 tie on 3; 9 has more members"
    first, second, third = top.papers
    assert first.counts == {"share": 2, "reply": 1, "reaction": 1} and first.members == ("U4", "U2", "U3")
    assert second.counts == {"share": 1, "reply": 1, "save": 1} and second.members == ("U1", "U2", "U3")
    assert third.counts == {"share": 1, "reaction": 1, "save": 1} and third.members == ("U4", "U1")


class CountingCursor(psycopg.Cursor[Any]):
    """A cursor that counts the rows it hands back."""

    fetched = 0

    def fetchone(self) -> Any:
        row = super().fetchone()
        CountingCursor.fetched += row is not None
        return row

    def fetchmany(self, size: int = 0) -> list[Any]:
        rows = super().fetchmany(size)
        CountingCursor.fetched += len(rows)
        return rows

    def fetchall(self) -> list[Any]:
        rows = super().fetchall()
        CountingCursor.fetched += len(rows)
        return rows


def test_a_year_of_a_large_channel_is_read_as_a_few_counted_rows(db: Database) -> None:
    """9,450 reactions of 300 members on 20 papers: what comes back from the database is the ten papers' rows and
    the emoji in use, not the reactions; the counts are those of every reaction all the same."""
    with db.connection() as conn:
        ids = channel(conn, 20)
        messages = [share(conn, p, "U0", f"{i}.0") for i, p in enumerate(ids)]
        conn.execute(
            """
            INSERT INTO reactions (message_id, team_id, channel_id, user_id, emoji, reacted_at)
            SELECT m, 'T1', 'C1', 'U' || u, e, %(at)s
              FROM unnest(%(m)s::bigint[]) WITH ORDINALITY AS s(m, k), generate_series(1, 300) u,
                   unnest(ARRAY['+1', 'fire', '-1']) e
             WHERE u <= 15 * k
            """,
            {"m": messages, "at": NOW - timedelta(days=100)},
        )
        assert conn.execute("SELECT count(*) FROM reactions").fetchone() == (9_450,)
        conn.cursor_factory = CountingCursor
        top = load_top_list(conn, "T1", "C1", "year", NOW)
    assert CountingCursor.fetched < 100, f"{CountingCursor.fetched} rows read for a list of ten papers"
    assert [p.paper_id for p in top.papers] == ids[::-1][:10], "the paper with the most reactions first"
    # the last paper: 300 members each with +1 and fire (their -1 counts for nothing), and its share
    assert top.papers[0].counts == {"share": 1, "reaction": 600} and len(top.papers[0].members) == 301
    assert top.papers[0].members[:3] == ("U1", "U10", "U100") and top.papers[0].members[-1] == "U0", (
        "the most engaged first, then by id"
    )
