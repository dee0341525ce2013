"""What Slack said is gone: deleted messages, messages an edit took the last paper link out of, and removed
reactions, remembered for ``KEPT`` so that an event heard out of order, a history read again or an older export
cannot bring them back; and the stored shares a newer copy (a history page, an export) shows such an edit of, for
the edit's event may never have come (``load_outdated_shares``)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

import psycopg

from socialrag.storage.locks import hold_forget_lists

KEPT = timedelta(days=30)  # how long a deletion or a removal is remembered


def record_deleted_message(
    conn: psycopg.Connection, team_id: str, channel_id: str, ts: str, at: datetime | None = None
) -> None:
    """A message (and so its thread) Slack deleted, now or at ``at`` (a deletion carried from another home)."""
    conn.execute(
        """
        INSERT INTO deleted_messages (team_id, channel_id, ts, deleted_at)
        VALUES (%(t)s, %(c)s, %(ts)s, COALESCE(%(at)s::timestamptz, now()))
        ON CONFLICT (team_id, channel_id, ts) DO UPDATE
           SET deleted_at = GREATEST(deleted_messages.deleted_at, EXCLUDED.deleted_at), edited_at = NULL
        """,
        {"t": team_id, "c": channel_id, "ts": ts, "at": at},
    )


def record_unshared_message(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str,
    ts: str,
    edited_at: datetime,
    at: datetime | None = None,
) -> None:
    """A message an edit made at ``edited_at`` left with no paper link (noted now, or at ``at``): a copy of it
    edited before then is older. A message remembered as deleted stays deleted."""
    conn.execute(
        """
        INSERT INTO deleted_messages (team_id, channel_id, ts, deleted_at, edited_at)
        VALUES (%(t)s, %(c)s, %(ts)s, COALESCE(%(at)s::timestamptz, now()), %(e)s)
        ON CONFLICT (team_id, channel_id, ts) DO UPDATE
           SET deleted_at = GREATEST(deleted_messages.deleted_at, EXCLUDED.deleted_at),
               edited_at = GREATEST(deleted_messages.edited_at, EXCLUDED.edited_at)
         WHERE deleted_messages.edited_at IS NOT NULL
        """,
        {"t": team_id, "c": channel_id, "ts": ts, "at": at, "e": edited_at},
    )


def load_gone(
    conn: psycopg.Connection, keys: Sequence[tuple[str, str, str]]
) -> dict[tuple[str, str, str], datetime | None]:
    """Those of these (team, channel, ts) Slack said are gone: None for a deleted message, the edit's time for one
    an edit left with no paper link."""
    if not keys:
        return {}
    rows = conn.execute(
        """
        SELECT d.team_id, d.channel_id, d.ts, d.edited_at
          FROM unnest(%(t)s::text[], %(c)s::text[], %(ts)s::text[]) AS k(team_id, channel_id, ts)
          JOIN deleted_messages d USING (team_id, channel_id, ts)
        """,
        {"t": [k[0] for k in keys], "c": [k[1] for k in keys], "ts": [k[2] for k in keys]},
    ).fetchall()
    return {(r[0], r[1], r[2]): r[3] for r in rows}


def load_deleted(conn: psycopg.Connection, keys: Sequence[tuple[str, str, str]]) -> set[tuple[str, str, str]]:
    """Those of these (team, channel, ts) whose message Slack deleted."""
    return {key for key, edited_at in load_gone(conn, keys).items() if edited_at is None}


def load_outdated_shares(
    conn: psycopg.Connection, copies: Sequence[tuple[str, str, str, datetime, str | None]]
) -> set[tuple[str, str, str]]:
    """Those of these (team, channel, ts, edited at, author) copies whose message is stored as a share (it links a
    paper) by that author that an edit at that time is newer than (stored unedited, or edited earlier), leaving out
    a reply in a stored thread (kept as a reply whatever it links) and PaperPing's own posts."""
    if not copies:
        return set()
    rows = conn.execute(
        """
        SELECT m.team_id, m.channel_id, m.ts
          FROM unnest(%(t)s::text[], %(c)s::text[], %(ts)s::text[], %(e)s::timestamptz[], %(u)s::text[])
               AS k(team_id, channel_id, ts, e, u)
          JOIN messages m USING (team_id, channel_id, ts)
         WHERE (m.edited_at IS NULL OR m.edited_at < k.e)
           AND m.user_id IS NOT DISTINCT FROM k.u
           AND EXISTS (SELECT 1 FROM message_papers mp WHERE mp.message_id = m.id)
           AND NOT (m.is_reply AND EXISTS (SELECT 1 FROM messages r
                                            WHERE r.team_id = m.team_id AND r.channel_id = m.channel_id
                                              AND r.ts = m.thread_ts))
           AND NOT EXISTS (SELECT 1 FROM recommendations p
                            WHERE p.team_id = m.team_id AND p.channel_id = m.channel_id AND p.message_ts = m.ts)
        """,
        {f: [c[i] for c in copies] for i, f in enumerate(("t", "c", "ts", "e", "u"))},
    ).fetchall()
    return {(r[0], r[1], r[2]) for r in rows}


def forget_unshared(conn: psycopg.Connection, keys: Sequence[tuple[str, str, str]]) -> None:
    """These (team, channel, ts) are stored again from a copy edited after the edit that had left them with no
    paper link: that edit is no longer the newest, and the stored copy says what is newer."""
    if keys:
        conn.execute(
            """
            DELETE FROM deleted_messages d
             USING unnest(%(t)s::text[], %(c)s::text[], %(ts)s::text[]) AS k(team_id, channel_id, ts)
             WHERE (d.team_id, d.channel_id, d.ts) = (k.team_id, k.channel_id, k.ts) AND d.edited_at IS NOT NULL
            """,
            {"t": [k[0] for k in keys], "c": [k[1] for k in keys], "ts": [k[2] for k in keys]},
        )


def record_removed_reaction(
    conn: psycopg.Connection, team_id: str, channel_id: str, ts: str, user_id: str, emoji: str, at: datetime
) -> None:
    """A member took a reaction off a message at ``at`` (nothing is written of a member on the forget list)."""
    hold_forget_lists(conn, [team_id])
    conn.execute(
        """
        INSERT INTO removed_reactions (team_id, channel_id, ts, user_id, emoji, removed_at)
        SELECT %(t)s, %(c)s, %(ts)s, %(u)s, %(e)s, %(at)s
         WHERE NOT EXISTS (SELECT 1 FROM forgotten_members WHERE team_id = %(t)s AND user_id = %(u)s)
        ON CONFLICT (team_id, channel_id, ts, user_id, emoji) DO UPDATE
           SET removed_at = GREATEST(removed_reactions.removed_at, EXCLUDED.removed_at)
        """,
        {"t": team_id, "c": channel_id, "ts": ts, "u": user_id, "e": emoji, "at": at},
    )


def removal_stands(
    conn: psycopg.Connection, team_id: str, channel_id: str, ts: str, user_id: str, emoji: str, at: datetime
) -> bool:
    """Whether a reaction added at ``at`` was removed at that time or later (the add was heard late). A removal
    before ``at`` is forgotten: the member reacted again."""
    params = {"t": team_id, "c": channel_id, "ts": ts, "u": user_id, "e": emoji, "at": at}
    key = "team_id = %(t)s AND channel_id = %(c)s AND ts = %(ts)s AND user_id = %(u)s AND emoji = %(e)s"
    conn.execute(f"DELETE FROM removed_reactions WHERE {key} AND removed_at < %(at)s", params)
    return conn.execute(f"SELECT 1 FROM removed_reactions WHERE {key}", params).fetchone() is not None


def load_removed_reactions(
    conn: psycopg.Connection, keys: Sequence[tuple[str, str, str]]
) -> dict[tuple[str, str, str, str, str], datetime]:
    """(team, channel, ts, member, emoji) of the reactions removed from these (team, channel, ts): when."""
    if not keys:
        return {}
    rows = conn.execute(
        """
        SELECT r.team_id, r.channel_id, r.ts, r.user_id, r.emoji, r.removed_at
          FROM unnest(%(t)s::text[], %(c)s::text[], %(ts)s::text[]) AS k(team_id, channel_id, ts)
          JOIN removed_reactions r USING (team_id, channel_id, ts)
        """,
        {"t": [k[0] for k in keys], "c": [k[1] for k in keys], "ts": [k[2] for k in keys]},
    ).fetchall()
    return {(r[0], r[1], r[2], r[3], r[4]): r[5] for r in rows}


def load_every_deletion(
    conn: psycopg.Connection,
) -> tuple[list[tuple[str, str, str, datetime, datetime | None]], list[tuple[str, str, str, str, str, datetime]]]:
    """Every remembered deletion (team, channel, ts, when, and the time of the edit for a message an edit left with
    no paper link) and removal (team, channel, ts, member, emoji, when) of the database, none in one older than
    these tables (nor an edit's time in one older than that column)."""
    if conn.execute("SELECT to_regclass('public.deleted_messages') IS NULL").fetchone() == (True,):
        return [], []
    deleted = conn.execute(
        "SELECT team_id, channel_id, ts, deleted_at, (to_jsonb(d) ->> 'edited_at')::timestamptz"
        "  FROM deleted_messages d ORDER BY 1, 2, 3"
    )
    messages = [(r[0], r[1], r[2], r[3], r[4]) for r in deleted.fetchall()]
    removed = conn.execute(
        "SELECT team_id, channel_id, ts, user_id, emoji, removed_at FROM removed_reactions ORDER BY 1, 2, 3, 4, 5"
    )
    return messages, [(r[0], r[1], r[2], r[3], r[4], r[5]) for r in removed.fetchall()]


def prune_deletions(conn: psycopg.Connection, before: datetime) -> int:
    """Forget the deletions and removals older than ``before``; returns how many rows went."""
    params = {"b": before}
    gone = conn.execute("DELETE FROM deleted_messages WHERE deleted_at < %(b)s", params).rowcount
    return gone + conn.execute("DELETE FROM removed_reactions WHERE removed_at < %(b)s", params).rowcount


def load_purges(conn: psycopg.Connection) -> list[tuple[str, datetime]]:
    """Every workspace ``paperping purge`` deleted and when it last did (none in a database older than the table)."""
    if conn.execute("SELECT to_regclass('public.purged_teams') IS NULL").fetchone() == (True,):
        return []
    rows = conn.execute("SELECT team_id, purged_at FROM purged_teams ORDER BY 1").fetchall()
    return [(r[0], r[1]) for r in rows]
