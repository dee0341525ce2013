"""What PaperPing adds beside its posts: replies with context on members' shares (``share_replies``), and
members' personal picks (who gets them when, which papers went, what each member engaged with)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import psycopg


@dataclass(frozen=True)
class WaitingReply:
    team_id: str
    channel_id: str
    message_ts: str
    created_at: datetime


def want_share_reply(conn: psycopg.Connection, team_id: str, channel_id: str, ts: str) -> bool:
    """A member's share in a channel with context on: one row per message, whatever Slack sends again. True
    when it is new."""
    return (
        conn.execute(
            """
            INSERT INTO share_replies (team_id, channel_id, message_ts) VALUES (%(t)s, %(c)s, %(ts)s)
            ON CONFLICT DO NOTHING
            """,
            {"t": team_id, "c": channel_id, "ts": ts},
        ).rowcount
        == 1
    )


def load_waiting_replies(conn: psycopg.Connection, limit: int = 20) -> list[WaitingReply]:
    rows = conn.execute(
        """
        SELECT team_id, channel_id, message_ts, created_at FROM share_replies
         WHERE status = 'waiting' ORDER BY created_at LIMIT %(n)s
        """,
        {"n": limit},
    ).fetchall()
    return [WaitingReply(*r) for r in rows]


def claim_share_reply(conn: psycopg.Connection, team_id: str, channel_id: str, ts: str, now: datetime) -> bool:
    """Take a waiting share to reply to, unless another process took it or the channel got a reply in the last
    minute (at most one a minute per channel). A claimed share is never claimed again: a reply may be lost to
    a crash, never sent twice."""
    return (
        conn.execute(
            """
            UPDATE share_replies SET status = 'sending', done_at = %(now)s
             WHERE team_id = %(t)s AND channel_id = %(c)s AND message_ts = %(ts)s AND status = 'waiting'
               AND NOT EXISTS (
                   SELECT 1 FROM share_replies o
                    WHERE o.team_id = %(t)s AND o.channel_id = %(c)s AND o.status IN ('replied', 'sending')
                      AND o.done_at > %(since)s)
            """,
            {"t": team_id, "c": channel_id, "ts": ts, "now": now, "since": now - timedelta(minutes=1)},
        ).rowcount
        == 1
    )


def finish_share_reply(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str,
    ts: str,
    *,
    status: str,
    now: datetime,
    reply_ts: str | None = None,
    reason: str | None = None,
) -> None:
    conn.execute(
        """
        UPDATE share_replies SET status = %(s)s, reply_ts = %(r)s, reason = %(why)s, done_at = %(now)s
         WHERE team_id = %(t)s AND channel_id = %(c)s AND message_ts = %(ts)s
        """,
        {"s": status, "r": reply_ts, "why": reason, "now": now, "t": team_id, "c": channel_id, "ts": ts},
    )


def give_up_stale_replies(conn: psycopg.Connection, before: datetime) -> int:
    """Shares whose papers were never looked up in time, or whose reply a dead process was sending: silent."""
    return conn.execute(
        """
        UPDATE share_replies SET status = 'silent', reason = 'not ready in time', done_at = now()
         WHERE (status = 'waiting' AND created_at < %(b)s) OR (status = 'sending' AND done_at < %(b)s)
        """,
        {"b": before},
    ).rowcount


def load_share_reply(conn: psycopg.Connection, team_id: str, channel_id: str, ts: str) -> tuple[str, str | None] | None:
    row = conn.execute(
        "SELECT status, reason FROM share_replies WHERE team_id = %(t)s AND channel_id = %(c)s AND message_ts = %(ts)s",
        {"t": team_id, "c": channel_id, "ts": ts},
    ).fetchone()
    return (row[0], row[1]) if row else None


# personal picks


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
    for paper_id, channel_id in picks:
        conn.execute(
            """
            INSERT INTO personal_picks (team_id, user_id, paper_id, channel_id, sent_at)
            VALUES (%(t)s, %(u)s, %(p)s, %(c)s, %(at)s) ON CONFLICT DO NOTHING
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
