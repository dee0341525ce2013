"""Queries of the channel report (shares, replies, reactions and PaperPing's posts of one channel in a period),
of App Home's month so far, and of the monthly reports due. ``socialrag.report`` draws what they return."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from socialrag.storage.context_rows import MEMBER_SHARE

# a channel's monthly report still to send in the month from %(m)s: asked for, not stopped, and neither posted nor
# begun that month (a fixed condition)
_TO_SEND = """report_monthly AND active AND report_stopped_reason IS NULL
           AND (report_last_at IS NULL OR report_last_at < %(m)s)
           AND (report_uploading_at IS NULL OR report_uploading_at < %(m)s)"""


def claim_monthly_reports_due(
    conn: psycopg.Connection, month_start: datetime, now: datetime, lease: timedelta, limit: int = 20
) -> list[tuple[str, str]]:
    """Claim the monthly reports due (channels that asked, not yet posted or begun this month, not stopped, not
    waiting to retry, not claimed by another worker whose claim still holds) until ``now + lease``."""
    rows = conn.execute(
        f"""
        UPDATE channel_settings s SET report_claimed_until = %(until)s
          FROM (SELECT team_id, channel_id FROM channel_settings
                 WHERE {_TO_SEND}
                   AND (report_retry_at IS NULL OR report_retry_at <= %(now)s)
                   AND (report_claimed_until IS NULL OR report_claimed_until < %(now)s)
                 ORDER BY team_id, channel_id LIMIT %(n)s FOR UPDATE SKIP LOCKED) due
         WHERE (s.team_id, s.channel_id) = (due.team_id, due.channel_id)
        RETURNING s.team_id, s.channel_id
        """,
        {"m": month_start, "now": now, "until": now + lease, "n": limit},
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


def start_report_upload(
    conn: psycopg.Connection, team_id: str, channel_id: str, month_start: datetime, now: datetime
) -> bool:
    """The compare-and-set before the monthly report's upload: True for the one worker that may upload it this
    month. False when another began it (its claim may have run out while it waited on Slack), it was posted,
    or the channel no longer wants it."""
    cur = conn.execute(
        f"""
        UPDATE channel_settings SET report_uploading_at = %(now)s
         WHERE team_id = %(t)s AND channel_id = %(c)s AND {_TO_SEND}
        """,
        {"t": team_id, "c": channel_id, "m": month_start, "now": now},
    )
    return cur.rowcount == 1


def cancel_report_upload(conn: psycopg.Connection, team_id: str, channel_id: str) -> None:
    """Slack answered that nothing reached the channel: the month's report may be tried again."""
    conn.execute(
        "UPDATE channel_settings SET report_uploading_at = NULL WHERE team_id = %(t)s AND channel_id = %(c)s",
        {"t": team_id, "c": channel_id},
    )


def record_report_unconfirmed(conn: psycopg.Connection, team_id: str, channel_id: str) -> None:
    """The upload may be in the channel: the month's report stays begun (never sent twice), its claim ends."""
    conn.execute(
        """
        UPDATE channel_settings SET report_claimed_until = NULL, report_retry_at = NULL, report_failures = 0
         WHERE team_id = %(t)s AND channel_id = %(c)s
        """,
        {"t": team_id, "c": channel_id},
    )


def record_report_posted(conn: psycopg.Connection, team_id: str, channel_id: str, at: datetime) -> None:
    conn.execute(
        """
        UPDATE channel_settings SET report_last_at = %(at)s, report_claimed_until = NULL, report_retry_at = NULL,
               report_failures = 0, report_uploading_at = NULL WHERE team_id = %(t)s AND channel_id = %(c)s
        """,
        {"at": at, "t": team_id, "c": channel_id},
    )


def record_report_failure(
    conn: psycopg.Connection, team_id: str, channel_id: str, reason: str, *, permanent: bool, retry_at: datetime
) -> int:
    """A failed monthly report: stopped with its reason when it cannot heal, else retried at ``retry_at``.
    Returns how many times in a row it failed."""
    row = conn.execute(
        """
        UPDATE channel_settings
           SET report_failures = report_failures + 1, report_claimed_until = NULL,
               report_retry_at = CASE WHEN %(p)s THEN NULL ELSE %(retry)s END,
               report_stopped_reason = CASE WHEN %(p)s THEN %(r)s ELSE report_stopped_reason END
         WHERE team_id = %(t)s AND channel_id = %(c)s RETURNING report_failures
        """,
        {"t": team_id, "c": channel_id, "p": permanent, "r": reason[:300], "retry": retry_at},
    ).fetchone()
    return int(row[0]) if row else 0


@dataclass(frozen=True)
class ShareRow:
    at: datetime
    user_id: str | None
    paper_id: int
    message_id: int
    by_paperping: bool


@dataclass(frozen=True)
class EventRow:
    at: datetime
    user_id: str | None
    message_id: int  # the message reacted to, or the thread's first message (-1 if it is not stored)
    emoji: str | None = None  # reactions only


@dataclass(frozen=True)
class PostRow:
    """One of PaperPing's posts with what it drew."""

    posted_at: datetime
    paper_id: int | None
    title: str | None
    style: str
    reactions: dict[str, int]
    replies: int
    length: str | None = None  # the explanation length it was written to (None: before lengths were kept)


_IN_WINDOW = "(%(since)s::timestamptz IS NULL OR {col} >= %(since)s) AND {col} < %(until)s"


def load_report_shares(conn: psycopg.Connection, window: dict[str, Any], bots: set[str]) -> list[ShareRow]:
    rows = conn.execute(
        f"""
        SELECT DISTINCT ON (m.id, mp.paper_id) m.posted_at, m.user_id, mp.paper_id, m.id, {MEMBER_SHARE}
          FROM message_papers mp JOIN messages m ON m.id = mp.message_id
         WHERE mp.team_id = %(t)s AND mp.channel_id = %(c)s AND NOT m.is_reply
           AND {_IN_WINDOW.format(col="m.posted_at")}
        """,
        window,
    ).fetchall()
    # PaperPing's own posts and digest items are its shares, whether or not its user is among the members
    shares = (ShareRow(r[0], r[1], r[2], r[3], r[1] in bots or not r[4]) for r in rows)
    return sorted(shares, key=lambda s: (s.at, s.message_id))


def load_report_replies(conn: psycopg.Connection, window: dict[str, Any]) -> list[EventRow]:
    rows = conn.execute(
        f"""
        SELECT m.posted_at, m.user_id, COALESCE(root.id, -1) FROM messages m
          LEFT JOIN messages root
                 ON (root.team_id, root.channel_id, root.ts) = (m.team_id, m.channel_id, m.thread_ts)
         WHERE m.team_id = %(t)s AND m.channel_id = %(c)s AND m.is_reply AND {_IN_WINDOW.format(col="m.posted_at")}
         ORDER BY m.posted_at
        """,
        window,
    ).fetchall()
    return [EventRow(r[0], r[1], r[2]) for r in rows]


def load_report_reactions(conn: psycopg.Connection, window: dict[str, Any]) -> list[EventRow]:
    rows = conn.execute(
        f"""
        SELECT reacted_at, user_id, message_id, emoji FROM reactions
         WHERE team_id = %(t)s AND channel_id = %(c)s AND {_IN_WINDOW.format(col="reacted_at")}
         ORDER BY reacted_at
        """,
        window,
    ).fetchall()
    return [EventRow(r[0], r[1], r[2], r[3]) for r in rows]


def load_report_posts(conn: psycopg.Connection, window: dict[str, Any]) -> list[PostRow]:
    rows = conn.execute(
        f"""
        SELECT r.posted_at, r.paper_id, p.title, r.style,
               (SELECT jsonb_object_agg(x.emoji, x.n) FROM (
                    SELECT x.emoji, count(*) AS n FROM messages m JOIN reactions x ON x.message_id = m.id
                     WHERE m.team_id = r.team_id AND m.channel_id = r.channel_id AND m.ts = r.message_ts
                     GROUP BY x.emoji) x),
               (SELECT count(*) FROM messages m WHERE m.team_id = r.team_id AND m.channel_id = r.channel_id
                   AND m.thread_ts = r.message_ts AND m.is_reply),
               r.explanation_length
          FROM recommendations r LEFT JOIN papers p ON p.id = r.paper_id
         WHERE r.team_id = %(t)s AND r.channel_id = %(c)s AND r.status = 'posted' AND r.deleted_at IS NULL
           AND {_IN_WINDOW.format(col="r.posted_at")}
         ORDER BY r.posted_at
        """,
        window,
    ).fetchall()
    return [PostRow(r[0], r[1], r[2], r[3], dict(r[4] or {}), int(r[5]), r[6]) for r in rows]


def load_report_channel_facts(
    conn: psycopg.Connection, window: dict[str, Any]
) -> tuple[str | None, str, str | None, set[str]]:
    """The channel's name, frequency and step-down reason, and the workspace's bots."""
    row = conn.execute(
        """
        SELECT c.name, s.frequency, s.step_down_reason FROM channels c
          LEFT JOIN channel_settings s ON (s.team_id, s.channel_id) = (c.team_id, c.channel_id)
         WHERE c.team_id = %(t)s AND c.channel_id = %(c)s
        """,
        window,
    ).fetchone()
    bots = {
        r[0] for r in conn.execute("SELECT user_id FROM members WHERE team_id = %(t)s AND is_bot", window).fetchall()
    }
    name, frequency, reason = row if row else (None, None, None)
    return name, frequency or "every-other-day", reason, bots


@dataclass(frozen=True)
class Headline:
    """The month so far, for App Home: papers members shared, PaperPing's posts and how many drew an answer."""

    shared: int
    posts: int
    answered: int


def load_headline(conn: psycopg.Connection, team_id: str, channel_id: str, now: datetime) -> Headline:
    start = now.astimezone(UTC).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    row = conn.execute(
        f"""
        SELECT
          (SELECT count(DISTINCT mp.paper_id) FROM message_papers mp JOIN messages m ON m.id = mp.message_id
             LEFT JOIN members u ON u.team_id = m.team_id AND u.user_id = m.user_id
            WHERE mp.team_id = %(t)s AND mp.channel_id = %(c)s AND m.posted_at >= %(s)s AND m.posted_at < %(n)s
              AND {MEMBER_SHARE} AND NOT COALESCE(u.is_bot, false)),
          (SELECT count(*) FROM recommendations r WHERE r.team_id = %(t)s AND r.channel_id = %(c)s
              AND r.status = 'posted' AND r.deleted_at IS NULL AND r.posted_at >= %(s)s AND r.posted_at < %(n)s),
          (SELECT count(*) FROM recommendations r WHERE r.team_id = %(t)s AND r.channel_id = %(c)s
              AND r.status = 'posted' AND r.deleted_at IS NULL AND r.posted_at >= %(s)s AND r.posted_at < %(n)s
              AND EXISTS (SELECT 1 FROM messages m WHERE m.team_id = r.team_id AND m.channel_id = r.channel_id
                             AND (m.thread_ts = r.message_ts AND m.is_reply
                                  OR m.ts = r.message_ts AND EXISTS (SELECT 1 FROM reactions x
                                                                      WHERE x.message_id = m.id))))
        """,
        {"t": team_id, "c": channel_id, "s": start, "n": now},
    ).fetchone()
    assert row is not None
    return Headline(int(row[0]), int(row[1]), int(row[2]))


KINDS = ("share", "reply", "reaction", "click", "save")  # what an engagement counts as, in the order a line names them


def load_reaction_emoji(conn: psycopg.Connection, window: dict[str, Any]) -> list[str]:
    """The distinct emoji of the reactions on the channel's papers in ``[since, until)``: as many as the emoji in
    use, however many reactions there are."""
    rows = conn.execute(
        f"""
        SELECT DISTINCT x.emoji FROM reactions x
         WHERE x.team_id = %(t)s AND x.channel_id = %(c)s AND {_IN_WINDOW.format(col="x.reacted_at")}
           AND EXISTS (SELECT 1 FROM message_papers mp WHERE mp.message_id = x.message_id)
         ORDER BY x.emoji
        """,
        window,
    ).fetchall()
    return [r[0] for r in rows]


def load_top_engagement(
    conn: psycopg.Connection, window: dict[str, Any], reactions: Mapping[str, str], limit: int
) -> list[tuple[int, dict[str, int], list[str]]]:
    """(paper, counts by kind (``KINDS``), members by how much they engaged, then by id) of the ``limit`` papers
    of the channel members engaged with most in ``[since, until)``, the most first (ties: more members, then the
    lower paper id). Counted in the database: what comes back is ``limit`` rows, however many engagements there were.

    An engagement is a ``share`` (a message linking the paper, PaperPing's own posts left out), a ``reply`` in the
    thread of a message linking it, a reaction on one, counted as the kind ``reactions`` gives its emoji (one it
    does not name counts for nothing), or a ``save`` with `/paperping save`. A reaction or reply on a digest counts
    for each of its papers, a click on one of its items for that paper alone. Bots and authors not known are left
    out."""
    params = {**window, "emoji": list(reactions), "kinds": list(reactions.values()), "n": limit}
    rows = conn.execute(
        f"""
        WITH kinds AS (SELECT * FROM unnest(%(emoji)s::text[], %(kinds)s::text[]) AS k(emoji, kind)),
        events AS (
            SELECT mp.paper_id, k.kind, x.user_id
              FROM reactions x JOIN message_papers mp ON mp.message_id = x.message_id
              JOIN kinds k ON k.emoji = x.emoji
             WHERE x.team_id = %(t)s AND x.channel_id = %(c)s AND {_IN_WINDOW.format(col="x.reacted_at")}
            UNION ALL
            SELECT mp.paper_id, 'reply', m.user_id
              FROM messages m
              JOIN messages root
                ON (root.team_id, root.channel_id, root.ts) = (m.team_id, m.channel_id, m.thread_ts)
              JOIN message_papers mp ON mp.message_id = root.id
             WHERE m.team_id = %(t)s AND m.channel_id = %(c)s AND m.is_reply AND root.id <> m.id
               AND {_IN_WINDOW.format(col="m.posted_at")}
            UNION ALL
            SELECT mp.paper_id, 'share', m.user_id
              FROM message_papers mp JOIN messages m ON m.id = mp.message_id
             WHERE mp.team_id = %(t)s AND mp.channel_id = %(c)s AND {MEMBER_SHARE}
               AND {_IN_WINDOW.format(col="m.posted_at")}
            UNION ALL
            SELECT s.paper_id, 'save', s.user_id FROM saved_papers s
             WHERE s.team_id = %(t)s AND s.channel_id = %(c)s AND {_IN_WINDOW.format(col="s.saved_at")}
        ),
        counted AS (
            SELECT e.* FROM events e
             WHERE e.user_id IS NOT NULL
               AND NOT EXISTS (SELECT 1 FROM members b WHERE b.team_id = %(t)s AND b.user_id = e.user_id AND b.is_bot)
        ),
        top AS (
            SELECT paper_id, count(*) AS total, count(DISTINCT user_id) AS people FROM counted
             GROUP BY paper_id ORDER BY total DESC, people DESC, paper_id LIMIT %(n)s
        ),
        by_kind AS (
            SELECT paper_id, jsonb_object_agg(kind, n) AS counts
              FROM (SELECT paper_id, kind, count(*) AS n FROM counted WHERE paper_id IN (SELECT paper_id FROM top)
                     GROUP BY paper_id, kind) k
             GROUP BY paper_id
        ),
        by_member AS (
            SELECT paper_id, array_agg(user_id ORDER BY n DESC, user_id COLLATE "C") AS members
              FROM (SELECT paper_id, user_id, count(*) AS n FROM counted WHERE paper_id IN (SELECT paper_id FROM top)
                     GROUP BY paper_id, user_id) u
             GROUP BY paper_id
        )
        SELECT t.paper_id, k.counts, u.members
          FROM top t JOIN by_kind k USING (paper_id) JOIN by_member u USING (paper_id)
         ORDER BY t.total DESC, t.people DESC, t.paper_id
        """,
        params,
    ).fetchall()
    return [(int(r[0]), {k: int(r[1][k]) for k in KINDS if r[1].get(k)}, list(r[2])) for r in rows]
