"""Replies with context on members' shares (``share_replies``): which shares want one, which wait, who sends
each, and when one is given up."""

from __future__ import annotations

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


def load_waiting_replies(conn: psycopg.Connection, limit: int = 20, per_channel: int = 3) -> list[WaitingReply]:
    """The ``limit`` shares waiting longest, at most ``per_channel`` of each channel (which gets one reply a minute):
    a burst of shares in one channel never holds back another's."""
    rows = conn.execute(
        """
        SELECT team_id, channel_id, message_ts, created_at FROM (
            SELECT team_id, channel_id, message_ts, created_at,
                   row_number() OVER (PARTITION BY team_id, channel_id ORDER BY created_at, message_ts) AS place
              FROM share_replies WHERE status = 'waiting') w
         WHERE place <= %(k)s ORDER BY created_at, message_ts LIMIT %(n)s
        """,
        {"n": limit, "k": per_channel},
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
