"""The channel's reading list: papers saved with the post's button or a :bookmark: reaction (read from the
reactions, so they leave the list with the reaction, its message or the member's forget-me), or with
`/paperping save LINK` (``saved_papers``); `/paperping unsave LINK` takes a paper off for every save made
before it (``reading_list_removals``). And what of the list went to the channel's Zotero library."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime

import psycopg

from socialrag.storage.locks import hold_forget_lists


@dataclass(frozen=True)
class SavedPaper:
    paper_id: int
    title: str | None
    url: str | None  # the link it was shared or saved with, when there is one
    savers: tuple[str, ...]  # who saved it, first saver first
    saved_at: datetime  # the latest save


_SAVES = """
    WITH saves AS (
        SELECT mp.paper_id, x.user_id, x.reacted_at AS saved_at, mp.url
          FROM reactions x JOIN message_papers mp ON mp.message_id = x.message_id
         WHERE x.team_id = %(t)s AND x.channel_id = %(c)s AND x.emoji = ANY(%(e)s::text[])
        UNION ALL
        SELECT paper_id, user_id, saved_at, NULL FROM saved_papers WHERE team_id = %(t)s AND channel_id = %(c)s
    ), kept AS (
        SELECT s.* FROM saves s
          LEFT JOIN reading_list_removals r
            ON r.team_id = %(t)s AND r.channel_id = %(c)s AND r.paper_id = s.paper_id
          LEFT JOIN reading_list_unsaves u
            ON u.team_id = %(t)s AND u.channel_id = %(c)s AND u.paper_id = s.paper_id AND u.user_id = s.user_id
         WHERE (r.removed_at IS NULL OR s.saved_at > r.removed_at)
           AND (u.removed_at IS NULL OR s.saved_at > u.removed_at)
    )
"""


def load_reading_list(
    conn: psycopg.Connection, team_id: str, channel_id: str, emoji: Collection[str], *, limit: int, offset: int = 0
) -> tuple[list[SavedPaper], int]:
    """A page of the channel's list, newest save first, and how many papers the whole list holds."""
    params = {"t": team_id, "c": channel_id, "e": list(emoji), "n": limit, "o": offset}
    rows = conn.execute(
        _SAVES
        + """
        SELECT k.paper_id, p.title, (array_agg(k.url ORDER BY k.url IS NULL, k.saved_at))[1],
               array_agg(k.user_id ORDER BY k.saved_at), max(k.saved_at), count(*) OVER ()
          FROM kept k JOIN papers p ON p.id = k.paper_id
         GROUP BY k.paper_id, p.title
         ORDER BY max(k.saved_at) DESC, k.paper_id
         LIMIT %(n)s OFFSET %(o)s
        """,
        params,
    ).fetchall()
    papers = [SavedPaper(r[0], r[1], r[2], tuple(dict.fromkeys(r[3])), r[4]) for r in rows]
    if rows:
        return papers, int(rows[0][5])
    return papers, count_reading_list(conn, team_id, channel_id, emoji)


def count_reading_list(conn: psycopg.Connection, team_id: str, channel_id: str, emoji: Collection[str]) -> int:
    """How many papers the channel's list holds (counted, nothing of them read)."""
    total = conn.execute(
        _SAVES + "SELECT count(DISTINCT paper_id) FROM kept", {"t": team_id, "c": channel_id, "e": list(emoji)}
    ).fetchone()
    return int(total[0]) if total else 0


def load_saved_ids(
    conn: psycopg.Connection, team_id: str, channel_id: str, emoji: Collection[str], *, newest: int | None = None
) -> list[int]:
    """Every paper on the channel's list, oldest save first (for an export or a Zotero library); with ``newest``,
    only that many, those saved last as `/paperping list` orders them (its first pages), still oldest save first."""
    rows = conn.execute(
        _SAVES
        + """
        SELECT paper_id FROM (
            SELECT paper_id, min(saved_at) AS first_saved FROM kept GROUP BY paper_id
             ORDER BY max(saved_at) DESC, paper_id LIMIT %(n)s
        ) listed ORDER BY first_saved, paper_id
        """,
        {"t": team_id, "c": channel_id, "e": list(emoji), "n": newest},
    ).fetchall()
    return [int(r[0]) for r in rows]


def save_paper(
    conn: psycopg.Connection, team_id: str, channel_id: str, paper_id: int, user_id: str, at: datetime
) -> bool:
    """`/paperping save`: the member saves a paper on the channel's list. False if they had saved it already."""
    hold_forget_lists(conn, [team_id])
    return (
        conn.execute(
            """
            INSERT INTO saved_papers (team_id, channel_id, paper_id, user_id, saved_at)
            SELECT %(t)s, %(c)s, %(p)s, %(u)s, %(at)s
             WHERE NOT EXISTS (SELECT 1 FROM forgotten_members WHERE team_id = %(t)s AND user_id = %(u)s)
            ON CONFLICT (team_id, channel_id, paper_id, user_id) DO UPDATE SET saved_at = EXCLUDED.saved_at
            """,
            {"t": team_id, "c": channel_id, "p": paper_id, "u": user_id, "at": at},
        ).rowcount
        > 0
    )


def unsave_paper(
    conn: psycopg.Connection, team_id: str, channel_id: str, paper_id: int, user_id: str, at: datetime
) -> bool:
    """A member's `/paperping unsave`: their own saves of the paper (their command, Save click or bookmark) up to
    ``at`` no longer count; others' keep it on the list. False: nothing is kept, the member is on the workspace's
    forget list (they have no save here to take back)."""
    hold_forget_lists(conn, [team_id])
    return (
        conn.execute(
            """
            INSERT INTO reading_list_unsaves (team_id, channel_id, paper_id, user_id, removed_at)
            SELECT %(t)s, %(c)s, %(p)s, %(u)s, %(at)s
             WHERE NOT EXISTS (SELECT 1 FROM forgotten_members WHERE team_id = %(t)s AND user_id = %(u)s)
            ON CONFLICT (team_id, channel_id, paper_id, user_id) DO UPDATE SET removed_at = EXCLUDED.removed_at
            """,
            {"t": team_id, "c": channel_id, "p": paper_id, "u": user_id, "at": at},
        ).rowcount
        > 0
    )


def load_savers(
    conn: psycopg.Connection, team_id: str, channel_id: str, paper_id: int, emoji: Collection[str]
) -> set[str]:
    """Who has the paper on the channel's list now."""
    rows = conn.execute(
        _SAVES + "SELECT DISTINCT user_id FROM kept WHERE paper_id = %(p)s",
        {"t": team_id, "c": channel_id, "e": list(emoji), "p": paper_id},
    ).fetchall()
    return {r[0] for r in rows}


def remove_paper(conn: psycopg.Connection, team_id: str, channel_id: str, paper_id: int, at: datetime) -> None:
    """`/paperping unsave LINK all` (a steward's): off the list for every save made up to ``at`` (a later save puts
    it back)."""
    conn.execute(
        """
        INSERT INTO reading_list_removals (team_id, channel_id, paper_id, removed_at)
        VALUES (%(t)s, %(c)s, %(p)s, %(at)s)
        ON CONFLICT (team_id, channel_id, paper_id) DO UPDATE SET removed_at = EXCLUDED.removed_at
        """,
        {"t": team_id, "c": channel_id, "p": paper_id, "at": at},
    )
    conn.execute(
        "DELETE FROM saved_papers WHERE team_id = %(t)s AND channel_id = %(c)s AND paper_id = %(p)s",
        {"t": team_id, "c": channel_id, "p": paper_id},
    )


def load_zotero_channels(conn: psycopg.Connection) -> list[tuple[str, str, str, str | None]]:
    """(team, channel, group id, collection key) of every channel PaperPing is active in that sends its list to a
    Zotero library its own workspace holds (``zotero_groups``): a channel it left, or a group another workspace
    holds, gets nothing sent."""
    rows = conn.execute(
        """
        SELECT s.team_id, s.channel_id, s.zotero_group_id, s.zotero_collection FROM channel_settings s
          JOIN zotero_groups g ON g.group_id = s.zotero_group_id AND g.team_id = s.team_id
         WHERE s.zotero_group_id IS NOT NULL AND s.active ORDER BY s.team_id, s.channel_id
        """
    ).fetchall()
    return [(r[0], r[1], r[2], r[3]) for r in rows]


def bind_zotero_group(conn: psycopg.Connection, team_id: str, group_id: str) -> str:
    """The workspace a Zotero group library belongs to: ``team_id`` when it binds it first, else the one that
    did."""
    conn.execute(
        "INSERT INTO zotero_groups (group_id, team_id) VALUES (%(g)s, %(t)s) ON CONFLICT (group_id) DO NOTHING",
        {"g": group_id, "t": team_id},
    )
    return load_zotero_group_owner(conn, group_id) or team_id


def load_zotero_group_owner(conn: psycopg.Connection, group_id: str) -> str | None:
    """The workspace that holds a Zotero group library (None: none bound it)."""
    row = conn.execute("SELECT team_id FROM zotero_groups WHERE group_id = %(g)s", {"g": group_id}).fetchone()
    return str(row[0]) if row else None


def move_zotero_group(conn: psycopg.Connection, group_id: str, team_id: str) -> str | None:
    """The operator gives a group library to another workspace; returns the one that held it (None: none)."""
    before = load_zotero_group_owner(conn, group_id)
    conn.execute(
        """
        INSERT INTO zotero_groups (group_id, team_id) VALUES (%(g)s, %(t)s)
        ON CONFLICT (group_id) DO UPDATE SET team_id = EXCLUDED.team_id, bound_at = now()
        """,
        {"g": group_id, "t": team_id},
    )
    return before


def load_zotero_done(conn: psycopg.Connection, team_id: str, channel_id: str, group_id: str, now: datetime) -> set[int]:
    """Papers of the channel not to send to this library now: sent already, or waiting to retry."""
    rows = conn.execute(
        """
        SELECT paper_id FROM zotero_items
         WHERE team_id = %(t)s AND channel_id = %(c)s AND group_id = %(g)s
           AND (pushed_at IS NOT NULL OR retry_at > %(now)s)
        """,
        {"t": team_id, "c": channel_id, "g": group_id, "now": now},
    ).fetchall()
    return {int(r[0]) for r in rows}


def record_zotero_result(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str,
    group_id: str,
    paper_id: int,
    *,
    item_key: str | None,
    error: str | None,
    now: datetime,
    retry_at: datetime | None,
) -> None:
    """One paper sent to the library (its item key), or why not and when to try again."""
    conn.execute(
        """
        INSERT INTO zotero_items (team_id, channel_id, paper_id, group_id, item_key, pushed_at, failures, retry_at,
                                  last_error)
        VALUES (%(t)s, %(c)s, %(p)s, %(g)s, %(k)s, CASE WHEN %(k)s::text IS NULL THEN NULL ELSE %(now)s END,
                CASE WHEN %(k)s::text IS NULL THEN 1 ELSE 0 END, %(retry)s, %(e)s)
        ON CONFLICT (team_id, channel_id, paper_id, group_id) DO UPDATE
           SET item_key = EXCLUDED.item_key, pushed_at = EXCLUDED.pushed_at, retry_at = EXCLUDED.retry_at,
               last_error = EXCLUDED.last_error,
               failures = CASE WHEN EXCLUDED.item_key IS NULL THEN zotero_items.failures + 1 ELSE 0 END
        """,
        {
            "t": team_id,
            "c": channel_id,
            "p": paper_id,
            "g": group_id,
            "k": item_key,
            "e": error,
            "now": now,
            "retry": retry_at,
        },
    )


def load_zotero_state(conn: psycopg.Connection, team_id: str, channel_id: str, group_id: str) -> tuple[int, str | None]:
    """(papers sent to this library, the latest error) for `status`."""
    row = conn.execute(
        """
        SELECT count(*) FILTER (WHERE pushed_at IS NOT NULL),
               (SELECT last_error FROM zotero_items WHERE team_id = %(t)s AND channel_id = %(c)s AND group_id = %(g)s
                   AND pushed_at IS NULL AND last_error IS NOT NULL ORDER BY retry_at DESC NULLS LAST LIMIT 1)
          FROM zotero_items WHERE team_id = %(t)s AND channel_id = %(c)s AND group_id = %(g)s
        """,
        {"t": team_id, "c": channel_id, "g": group_id},
    ).fetchone()
    return (int(row[0]), row[1]) if row else (0, None)


def load_zotero_failures(conn: psycopg.Connection, team_id: str, channel_id: str, group_id: str) -> dict[int, int]:
    """How many times in a row each paper failed to go to this library."""
    rows = conn.execute(
        "SELECT paper_id, failures FROM zotero_items WHERE team_id = %(t)s AND channel_id = %(c)s AND group_id = %(g)s",
        {"t": team_id, "c": channel_id, "g": group_id},
    ).fetchall()
    return {int(r[0]): int(r[1]) for r in rows}
