"""Members' personal picks: who gets them when, which papers went, and what each member engaged with."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import psycopg

from socialrag.storage.locks import hold_forget_lists


def load_picks_due(conn: psycopg.Connection, now: datetime, limit: int = 20) -> list[tuple[str, str]]:
    rows = conn.execute(
        """
        SELECT team_id, user_id FROM member_settings
         WHERE picks_enabled AND (picks_next_at IS NULL OR picks_next_at <= %(now)s)
         ORDER BY picks_next_at NULLS FIRST LIMIT %(n)s
        """,
        {"now": now, "n": limit},
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


def load_member_engagement(
    conn: psycopg.Connection, team_id: str, user_id: str, channel_ids: Sequence[str]
) -> list[tuple[str, int, str]]:
    """(channel, paper, how) for every paper the member shared (``share``), reacted to or clicked (the emoji or
    button name) or saved with ``/paperping save`` (``saved``) in these channels."""
    rows = conn.execute(
        """
        SELECT m.channel_id, mp.paper_id, 'share' FROM messages m JOIN message_papers mp ON mp.message_id = m.id
         WHERE m.team_id = %(t)s AND m.user_id = %(u)s AND m.channel_id = ANY(%(cs)s)
        UNION ALL
        SELECT r.channel_id, mp.paper_id, r.emoji
          FROM reactions r JOIN message_papers mp ON mp.message_id = r.message_id
         WHERE r.team_id = %(t)s AND r.user_id = %(u)s AND r.channel_id = ANY(%(cs)s)
        UNION ALL
        SELECT s.channel_id, s.paper_id, 'saved' FROM saved_papers s
         WHERE s.team_id = %(t)s AND s.user_id = %(u)s AND s.channel_id = ANY(%(cs)s)
        """,
        {"t": team_id, "u": user_id, "cs": list(channel_ids)},
    ).fetchall()
    return [(r[0], r[1], r[2]) for r in rows]


def load_picks_sent(conn: psycopg.Connection, team_id: str, user_id: str) -> set[int]:
    rows = conn.execute(
        "SELECT paper_id FROM personal_picks WHERE team_id = %(t)s AND user_id = %(u)s", {"t": team_id, "u": user_id}
    ).fetchall()
    return {r[0] for r in rows}


def record_picks_sent(
    conn: psycopg.Connection, team_id: str, user_id: str, picks: Sequence[tuple[int, str]], at: datetime
) -> None:
    """The picks a member was sent, for a member not forgotten; a paper gone meanwhile (merged into another,
    deleted) is left out."""
    hold_forget_lists(conn, [team_id])
    for paper_id, channel_id in picks:
        conn.execute(
            """
            INSERT INTO personal_picks (team_id, user_id, paper_id, channel_id, sent_at)
            SELECT %(t)s, %(u)s, %(p)s, %(c)s, %(at)s
             WHERE NOT EXISTS (SELECT 1 FROM forgotten_members WHERE team_id = %(t)s AND user_id = %(u)s)
               AND EXISTS (SELECT 1 FROM papers WHERE id = %(p)s)
            ON CONFLICT DO NOTHING
            """,
            {"t": team_id, "u": user_id, "p": paper_id, "c": channel_id, "at": at},
        )


def claim_picks(conn: psycopg.Connection, team_id: str, user_id: str, now: datetime, next_at: datetime) -> bool:
    """Take a member's due picks (no other process sends them), the next ones due at ``next_at``."""
    return (
        conn.execute(
            """
            UPDATE member_settings SET picks_next_at = %(next)s
             WHERE team_id = %(t)s AND user_id = %(u)s AND picks_enabled
               AND (picks_next_at IS NULL OR picks_next_at <= %(now)s)
            """,
            {"t": team_id, "u": user_id, "now": now, "next": next_at},
        ).rowcount
        == 1
    )
