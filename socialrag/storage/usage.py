"""Queries of what members may ask for how often: cooldowns on costly requests, the LLM calls made for each
member and each channel in an hour, and the papers each member put first in the index queue in an hour. Kept in
Postgres, so every process of ``paperping run`` counts alike. A member on the workspace's forget list is counted
under one key the workspace's forgotten members share (``FORGOTTEN``): their requests stay bounded, and no count
holds their id."""

from __future__ import annotations

from datetime import datetime, timedelta

import psycopg

from socialrag.storage.locks import hold_forget_lists

FORGOTTEN = "(forgotten)"  # the counts of the members on a workspace's forget list (no Slack id has parentheses)


def counted_as(conn: psycopg.Connection, team_id: str, user_id: str) -> str:
    """The key a member's cooldowns and counts are kept under in the workspace: their id, or ``FORGOTTEN`` while
    they are on its forget list ("" stays "": the workspace's or a channel's own count)."""
    if not user_id:
        return user_id
    row = conn.execute(
        "SELECT 1 FROM forgotten_members WHERE team_id = %(t)s AND user_id = %(u)s", {"t": team_id, "u": user_id}
    ).fetchone()
    return FORGOTTEN if row else user_id


def hand_over_limits(conn: psycopg.Connection, team_id: str, user_id: str, *, forgotten: bool) -> None:
    """A member going onto the workspace's forget list (``forgotten``) or off it: the cooldowns and hourly counts of
    the key they were counted under pass to the one they are counted under next (``FORGOTTEN``, or their id),
    keeping the later end and the larger count of the two, so that `forget-me` and `remember-me` never start a
    member's limits afresh. The key left behind keeps its rows (forget-me deletes the member's own)."""
    params = {"t": team_id, "from": user_id if forgotten else FORGOTTEN, "to": FORGOTTEN if forgotten else user_id}
    conn.execute(
        """
        INSERT INTO member_cooldowns (team_id, user_id, kind, until)
        SELECT team_id, %(to)s, kind, until FROM member_cooldowns WHERE team_id = %(t)s AND user_id = %(from)s
        ON CONFLICT (team_id, user_id, kind) DO UPDATE SET until = GREATEST(member_cooldowns.until, EXCLUDED.until)
        """,
        params,
    )
    conn.execute(
        """
        INSERT INTO llm_usage AS u (team_id, kind, channel_id, user_id, hour, calls)
        SELECT team_id, kind, channel_id, %(to)s, hour, calls FROM llm_usage
         WHERE team_id = %(t)s AND user_id = %(from)s
        ON CONFLICT (team_id, kind, channel_id, user_id, hour) DO UPDATE SET calls = GREATEST(u.calls, EXCLUDED.calls)
        """,
        params,
    )


def take_cooldown(
    conn: psycopg.Connection, team_id: str, user_id: str, kind: str, now: datetime, length: timedelta
) -> datetime | None:
    """Start the member's cooldown on ``kind`` (None: taken, go ahead), or the moment the running one ends."""
    user_id = counted_as(conn, team_id, user_id)
    row = conn.execute(
        """
        INSERT INTO member_cooldowns (team_id, user_id, kind, until) VALUES (%(t)s, %(u)s, %(k)s, %(until)s)
        ON CONFLICT (team_id, user_id, kind) DO UPDATE SET until = EXCLUDED.until
         WHERE member_cooldowns.until <= %(now)s
        RETURNING until
        """,
        {"t": team_id, "u": user_id, "k": kind, "until": now + length, "now": now},
    ).fetchone()
    if row is not None:
        return None
    held = conn.execute(
        "SELECT until FROM member_cooldowns WHERE team_id = %(t)s AND user_id = %(u)s AND kind = %(k)s",
        {"t": team_id, "u": user_id, "k": kind},
    ).fetchone()
    return held[0] if held else None


def take_llm_call(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str | None,
    user_id: str,
    now: datetime,
    *,
    per_member: int,
    per_channel: int,
    kind: str = "llm",
) -> str | None:
    """Count one LLM call (or one of ``kind``) for the member and the channel this hour (``channel_id`` None: for
    the member only); None when both were under their caps, else which cap is reached ("member" or "channel"),
    and nothing is counted."""
    hour = now.replace(minute=0, second=0, microsecond=0)
    try:
        with conn.transaction():  # a savepoint: a cap reached undoes the count made before it
            for scope, channel, user, cap in _scopes(conn, team_id, channel_id, user_id, per_member, per_channel):
                if not _count_one(conn, team_id, kind, channel, user, hour, cap):
                    raise _CapReached(scope)
    except _CapReached as reached:
        return reached.scope
    return None


def hourly_cap_reached(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str | None,
    user_id: str,
    kind: str,
    now: datetime,
    *,
    per_member: int,
    per_channel: int,
) -> str | None:
    """Which cap ``take_llm_call(..., kind=kind)`` would refuse on now ("member" or "channel"), or None; counts
    nothing."""
    hour = now.replace(minute=0, second=0, microsecond=0)
    for scope, channel, user, cap in _scopes(conn, team_id, channel_id, user_id, per_member, per_channel):
        row = conn.execute(
            """
            SELECT calls FROM llm_usage
             WHERE team_id = %(t)s AND kind = %(k)s AND channel_id = %(c)s AND user_id = %(u)s AND hour = %(h)s
            """,
            {"t": team_id, "k": kind, "c": channel, "u": user, "h": hour},
        ).fetchone()
        if (row[0] if row else 0) >= cap:
            return scope
    return None


def _scopes(
    conn: psycopg.Connection, team_id: str, channel_id: str | None, user_id: str, per_member: int, per_channel: int
) -> list[tuple[str, str, str, int]]:
    """(scope, channel, member, cap) of each count a call makes: the member's, then the channel's."""
    scopes = [("member", "", counted_as(conn, team_id, user_id), per_member)]
    if channel_id is not None:
        scopes.append(("channel", channel_id, "", per_channel))
    return scopes


def take_member_hourly(
    conn: psycopg.Connection, team_id: str, user_id: str, kind: str, now: datetime, cap: int
) -> bool:
    """Count one more of the member's ``kind`` this hour (True), unless ``cap`` are counted already (False, and
    nothing is counted). Counted per workspace: the same id in another workspace has its own count."""
    hour = now.replace(minute=0, second=0, microsecond=0)
    return _count_one(conn, team_id, kind, "", counted_as(conn, team_id, user_id), hour, cap)


def _count_one(
    conn: psycopg.Connection, team_id: str, kind: str, channel_id: str, user_id: str, hour: datetime, cap: int
) -> bool:
    row = conn.execute(
        """
        INSERT INTO llm_usage AS u (team_id, kind, channel_id, user_id, hour, calls)
        SELECT %(t)s, %(k)s, %(c)s, %(u)s, %(h)s, 1 WHERE %(cap)s > 0
        ON CONFLICT (team_id, kind, channel_id, user_id, hour) DO UPDATE SET calls = u.calls + 1
         WHERE u.calls < %(cap)s
        RETURNING calls
        """,
        {"t": team_id, "k": kind, "c": channel_id, "u": user_id, "h": hour, "cap": cap},
    ).fetchone()
    return row is not None


def prune_llm_usage(conn: psycopg.Connection, before: datetime) -> int:
    """Drop the counts (LLM calls and lookups) of hours before ``before`` (they limit nothing any more)."""
    return conn.execute("DELETE FROM llm_usage WHERE hour < %(b)s", {"b": before}).rowcount


class _CapReached(Exception):
    def __init__(self, scope: str) -> None:
        super().__init__(scope)
        self.scope = scope


def record_answer_feedback(
    conn: psycopg.Connection,
    team_id: str,
    answer_channel_id: str,
    answer_ts: str,
    user_id: str,
    about_channel_id: str | None,
    helpful: bool,
    at: datetime,
) -> bool:
    """A member's mark on one of PaperPing's answers; a second click replaces their first. False: nothing is kept,
    the member is on the workspace's forget list."""
    hold_forget_lists(conn, [team_id])
    return (
        conn.execute(
            """
        INSERT INTO answer_feedback
               (team_id, answer_channel_id, answer_ts, user_id, about_channel_id, helpful, marked_at)
        SELECT %(t)s, %(c)s, %(ts)s, %(u)s, %(about)s, %(h)s, %(at)s
         WHERE NOT EXISTS (SELECT 1 FROM forgotten_members WHERE team_id = %(t)s AND user_id = %(u)s)
        ON CONFLICT (team_id, answer_channel_id, answer_ts, user_id) DO UPDATE
           SET helpful = EXCLUDED.helpful, marked_at = EXCLUDED.marked_at
        """,
            {
                "t": team_id,
                "c": answer_channel_id,
                "ts": answer_ts,
                "u": user_id,
                "about": about_channel_id,
                "h": helpful,
                "at": at,
            },
        ).rowcount
        > 0
    )


def load_answer_feedback(
    conn: psycopg.Connection, team_id: str, about_channel_id: str | None, since: datetime
) -> tuple[int, int]:
    """(helpful, not helpful) marks since ``since`` on answers about one channel (None: answers over several)."""
    row = conn.execute(
        """
        SELECT count(*) FILTER (WHERE helpful), count(*) FILTER (WHERE NOT helpful) FROM answer_feedback
         WHERE team_id = %(t)s AND about_channel_id IS NOT DISTINCT FROM %(about)s AND marked_at >= %(since)s
        """,
        {"t": team_id, "about": about_channel_id, "since": since},
    ).fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def add_announcement_line(
    conn: psycopg.Connection, team_id: str, channel_id: str, user_id: str, line: str, since: datetime, most: int
) -> tuple[str, list[str]] | None:
    """Add ``line`` to the member's announcement in the channel first posted at ``since`` or later, while it lists
    fewer than ``most``: (its ts, all its lines now), None when there is none to add to. One statement, so that
    two changes added at once both stay."""
    row = conn.execute(
        """
        UPDATE announcements SET lines = array_append(lines, %(line)s)
         WHERE team_id = %(t)s AND channel_id = %(c)s AND user_id = %(u)s AND posted_at >= %(since)s
           AND cardinality(lines) < %(most)s
        RETURNING ts, lines
        """,
        {"t": team_id, "c": channel_id, "u": user_id, "line": line, "since": since, "most": most},
    ).fetchone()
    return (row[0], list(row[1])) if row else None


def load_announcement_lines(
    conn: psycopg.Connection, team_id: str, channel_id: str, user_id: str, ts: str
) -> list[str] | None:
    """The lines of the member's announcement ``ts`` in the channel; None when their announcement is another now."""
    row = conn.execute(
        "SELECT lines FROM announcements WHERE team_id = %(t)s AND channel_id = %(c)s AND user_id = %(u)s"
        " AND ts = %(ts)s",
        {"t": team_id, "c": channel_id, "u": user_id, "ts": ts},
    ).fetchone()
    return list(row[0]) if row else None


def record_announcement(
    conn: psycopg.Connection, team_id: str, channel_id: str, user_id: str, ts: str, lines: list[str], at: datetime
) -> None:
    """The member's announcement in the channel is now the message ``ts`` saying ``lines`` (posted at ``at``; an
    edit of the same message keeps its first time). Nothing is kept of a channel PaperPing has no row of, nor of a
    member on the workspace's forget list (each of their changes is a message of its own)."""
    conn.execute(
        """
        INSERT INTO announcements (team_id, channel_id, user_id, ts, lines, posted_at)
        SELECT %(t)s, %(c)s, %(u)s, %(ts)s, %(lines)s, %(at)s
         WHERE EXISTS (SELECT 1 FROM channels WHERE team_id = %(t)s AND channel_id = %(c)s)
           AND NOT EXISTS (SELECT 1 FROM forgotten_members WHERE team_id = %(t)s AND user_id = %(u)s)
        ON CONFLICT (team_id, channel_id, user_id) DO UPDATE
           SET lines = EXCLUDED.lines,
               posted_at = CASE WHEN announcements.ts = EXCLUDED.ts THEN announcements.posted_at
                                ELSE EXCLUDED.posted_at END,
               ts = EXCLUDED.ts
        """,
        {"t": team_id, "c": channel_id, "u": user_id, "ts": ts, "lines": lines, "at": at},
    )
