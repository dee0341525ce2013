"""Queries of posting on schedule: claiming due channels, one recommendation row per slot, what posts drew.

Workers claim a due channel with ``FOR UPDATE SKIP LOCKED`` and take a short lease on it, so two processes
never serve the same slot; the recommendation row (unique per channel and slot) is written before anything
is posted, so a crash or a second worker cannot post twice, and a failed slot is retried.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from socialrag.models import Style
from socialrag.reasons import members_named
from socialrag.storage.locks import hold_forget_lists


@dataclass(frozen=True)
class DueChannel:
    team_id: str
    channel_id: str
    slot_at: datetime
    frequency: str
    style: Style | None  # None: the channel never chose one
    timezone: str | None
    start_hour: int
    end_hour: int
    weekdays_only: bool
    last_post_at: datetime | None
    last_activity_at: datetime | None
    digest_size: int | None = None  # a weekly digest of this many papers (frequency `weekly-digest`)
    explanation_length: str = "normal"


@dataclass(frozen=True)
class SlotRow:
    id: int
    status: str
    message_ts: str | None
    created_at: datetime


def claim_due_channel(conn: psycopg.Connection, now: datetime, lease_until: datetime) -> DueChannel | None:
    """Lock one due channel (others skip it), lease it until ``lease_until``, and return its schedule."""
    row = conn.execute(
        """
        SELECT s.team_id, s.channel_id, COALESCE(s.slot_at, s.next_post_at), s.frequency, s.style,
               COALESCE(s.timezone, t.timezone), s.post_start_hour, s.post_end_hour, s.weekdays_only,
               s.last_post_at, s.last_activity_at, s.digest_size, s.explanation_length
          FROM channel_settings s JOIN teams t USING (team_id)
         WHERE NOT s.paused AND s.active AND s.next_post_at <= %(now)s
         ORDER BY s.next_post_at
         LIMIT 1
           FOR UPDATE OF s SKIP LOCKED
        """,
        {"now": now},
    ).fetchone()
    if row is None:
        return None
    conn.execute(
        """
        UPDATE channel_settings SET slot_at = COALESCE(slot_at, next_post_at), next_post_at = %(lease)s
         WHERE team_id = %(t)s AND channel_id = %(c)s
        """,
        {"lease": lease_until, "t": row[0], "c": row[1]},
    )
    return DueChannel(*row)


def open_slot(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str,
    slot_key: str,
    style: str | None,
    *,
    at: datetime | None = None,
) -> SlotRow:
    """The recommendation row of a slot, created if new (status ``posting``; ``at`` replays a past time)."""
    conn.execute(
        """
        INSERT INTO recommendations (team_id, channel_id, slot_key, style, status, created_at)
        VALUES (%(t)s, %(c)s, %(k)s, %(s)s, 'posting', COALESCE(%(at)s, now()))
        ON CONFLICT (team_id, channel_id, slot_key) DO NOTHING
        """,
        {"t": team_id, "c": channel_id, "k": slot_key, "s": style, "at": at},
    )
    row = conn.execute(
        """
        SELECT id, status, message_ts, created_at FROM recommendations
         WHERE team_id = %(t)s AND channel_id = %(c)s AND slot_key = %(k)s
        """,
        {"t": team_id, "c": channel_id, "k": slot_key},
    ).fetchone()
    assert row is not None
    return SlotRow(*row)


def record_draft(
    conn: psycopg.Connection,
    rec_id: int,
    paper_id: int,
    style: str,
    score: float,
    draft: dict[str, Any],
    *,
    worker: str | None = None,
    length: str | None = None,
) -> bool:
    """The draft of a slot, written by the worker that holds it (any worker when ``worker`` is None); False when
    the slot is no longer this worker's to draft. ``length``: the channel's explanation length it was written to.

    A slot left *sending* is redrafted only by the worker holding its lease: one that took it over after the
    sender's lease lapsed (the sender died, or could not record its failure) and found no post of it in the
    channel. Without ``worker`` a slot being sent is left alone.

    False as well when the draft @-mentions or names a member who asked to be forgotten while it was written
    (checked under the forget list's lock): the slot is drafted again once its lease ends, without them."""
    team = conn.execute("SELECT team_id FROM recommendations WHERE id = %(id)s", {"id": rec_id}).fetchone()
    if team is not None:
        hold_forget_lists(conn, [team[0]])
    row = conn.execute(
        """
        UPDATE recommendations SET paper_id = %(p)s, style = %(s)s, score = %(score)s, draft = %(d)s,
               status = 'posting', explanation_length = %(len)s
         WHERE id = %(id)s AND status <> 'posted'
           AND (status <> 'sending' OR %(w)s::text IS NOT NULL)
           AND (%(w)s::text IS NULL OR claimed_by = %(w)s)
           AND NOT EXISTS (SELECT 1 FROM forgotten_members f
                            WHERE f.team_id = recommendations.team_id AND f.user_id = ANY(%(named)s::text[]))
        RETURNING 1
        """,
        {"p": paper_id, "s": style, "score": score, "d": Jsonb(draft), "id": rec_id, "w": worker, "len": length,
         "named": members_named(draft)},
    ).fetchone()  # fmt: skip
    return row is not None


def record_posted(conn: psycopg.Connection, rec_id: int, message_ts: str, at: datetime) -> None:
    conn.execute(
        "UPDATE recommendations SET status = 'posted', message_ts = %(ts)s, posted_at = %(at)s WHERE id = %(id)s",
        {"ts": message_ts, "at": at, "id": rec_id},
    )


def record_failed(conn: psycopg.Connection, rec_id: int) -> None:
    conn.execute("UPDATE recommendations SET status = 'failed' WHERE id = %(id)s", {"id": rec_id})


def schedule_next(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str,
    next_at: datetime,
    *,
    posted_at: datetime | None = None,
    keep_slot: bool = False,
) -> None:
    """When to look at the channel again; after a post, the slot is closed and ``last_post_at`` set."""
    conn.execute(
        """
        UPDATE channel_settings
           SET next_post_at = %(next)s,
               slot_at = CASE WHEN %(keep)s THEN slot_at ELSE NULL END,
               last_post_at = COALESCE(%(posted)s, last_post_at),
               failures = CASE WHEN %(posted)s::timestamptz IS NULL THEN failures ELSE 0 END,
               empty_slots = CASE WHEN %(posted)s::timestamptz IS NULL THEN empty_slots ELSE 0 END,
               empty_reason = CASE WHEN %(posted)s::timestamptz IS NULL THEN empty_reason END
         WHERE team_id = %(t)s AND channel_id = %(c)s
        """,
        {"next": next_at, "keep": keep_slot, "posted": posted_at, "t": team_id, "c": channel_id},
    )


def record_empty_slot(conn: psycopg.Connection, team_id: str, channel_id: str, reason: str, at: datetime) -> int:
    """A slot found nothing to post: keep why (status shows it) and count the empty tries in a row."""
    row = conn.execute(
        """
        UPDATE channel_settings SET empty_reason = left(%(r)s, 500), empty_at = %(at)s, empty_slots = empty_slots + 1
         WHERE team_id = %(t)s AND channel_id = %(c)s
        RETURNING empty_slots
        """,
        {"r": reason, "at": at, "t": team_id, "c": channel_id},
    ).fetchone()
    return int(row[0]) if row else 1


@dataclass(frozen=True)
class PostEngagement:
    """One of PaperPing's posts and what it drew: reactions (and clicks) by emoji, and thread replies."""

    id: int
    posted_at: datetime
    message_ts: str
    title: str | None
    reactions: int
    replies: int
    emoji: dict[str, int]


def load_post_engagement(
    conn: psycopg.Connection, team_id: str, channel_id: str, limit: int = 5
) -> list[PostEngagement]:
    """The last posts (newest first, since the last step-down; none deleted in Slack) with the reactions (and
    clicks) and replies each drew; ``emoji`` counts each reaction's name."""
    rows = conn.execute(
        """
        SELECT r.id, r.posted_at, r.message_ts, p.title,
               (SELECT count(*) FROM messages m JOIN reactions x ON x.message_id = m.id
                 WHERE m.team_id = r.team_id AND m.channel_id = r.channel_id AND m.ts = r.message_ts),
               (SELECT count(*) FROM messages m
                 WHERE m.team_id = r.team_id AND m.channel_id = r.channel_id AND m.thread_ts = r.message_ts
                   AND m.is_reply),
               (SELECT jsonb_object_agg(x.emoji, x.n) FROM (
                   SELECT x.emoji, count(*) AS n FROM messages m JOIN reactions x ON x.message_id = m.id
                    WHERE m.team_id = r.team_id AND m.channel_id = r.channel_id AND m.ts = r.message_ts
                    GROUP BY x.emoji) x)
          FROM recommendations r LEFT JOIN papers p ON p.id = r.paper_id
         WHERE r.team_id = %(t)s AND r.channel_id = %(c)s AND r.status = 'posted' AND r.deleted_at IS NULL
           AND r.posted_at > COALESCE((SELECT stepped_down_at FROM channel_settings s
                                        WHERE s.team_id = r.team_id AND s.channel_id = r.channel_id), '-infinity')
         ORDER BY r.posted_at DESC LIMIT %(n)s
        """,
        {"t": team_id, "c": channel_id, "n": limit},
    ).fetchall()
    return [
        PostEngagement(r[0], r[1], r[2], r[3], int(r[4]), int(r[5]), {str(k): int(v) for k, v in (r[6] or {}).items()})
        for r in rows
    ]


def record_step_down(conn: psycopg.Connection, team_id: str, channel_id: str, frequency: str, reason: str) -> None:
    conn.execute(
        """
        UPDATE channel_settings SET frequency = %(f)s, step_down_reason = %(r)s, stepped_down_at = now(),
               updated_at = now()
         WHERE team_id = %(t)s AND channel_id = %(c)s
        """,
        {"f": frequency, "r": reason, "t": team_id, "c": channel_id},
    )


def record_activity(conn: psycopg.Connection, team_id: str, channel_id: str, at: datetime) -> None:
    """A member wrote in the channel at ``at`` (only the time is kept, for the quiet period)."""
    conn.execute(
        """
        UPDATE channel_settings SET last_activity_at = GREATEST(last_activity_at, %(at)s)
         WHERE team_id = %(t)s AND channel_id = %(c)s
        """,
        {"at": at, "t": team_id, "c": channel_id},
    )


def delete_posts(conn: psycopg.Connection, team_id: str, channel_id: str) -> None:
    """Forget every recommendation row of a channel (the demo starts each run afresh)."""
    conn.execute(
        "DELETE FROM recommendations WHERE team_id = %(t)s AND channel_id = %(c)s", {"t": team_id, "c": channel_id}
    )


def load_last_posted_draft(conn: psycopg.Connection, team_id: str, channel_id: str) -> dict[str, Any] | None:
    """The stored draft of the channel's latest post still in Slack (for ``/paperping why``)."""
    row = conn.execute(
        """
        SELECT draft FROM recommendations WHERE team_id = %(t)s AND channel_id = %(c)s AND status = 'posted'
           AND deleted_at IS NULL
         ORDER BY posted_at DESC LIMIT 1
        """,
        {"t": team_id, "c": channel_id},
    ).fetchone()
    return dict(row[0]) if row and row[0] else None


def take_slot(conn: psycopg.Connection, rec_id: int, worker: str, now: datetime, until: datetime) -> bool:
    """Hold the slot's lease: free, already ours, or left to expire by a worker that stopped."""
    row = conn.execute(
        """
        UPDATE recommendations SET claimed_by = %(w)s, lease_until = %(until)s
         WHERE id = %(id)s AND status <> 'posted'
           AND (claimed_by IS NULL OR claimed_by = %(w)s OR lease_until IS NULL OR lease_until < %(now)s)
        RETURNING 1
        """,
        {"id": rec_id, "w": worker, "now": now, "until": until},
    ).fetchone()
    return row is not None


def renew_lease(
    conn: psycopg.Connection, rec_id: int, team_id: str, channel_id: str, worker: str, until: datetime
) -> bool:
    """Extend a held lease (and keep the channel from looking due meanwhile); False when it was lost."""
    row = conn.execute(
        """
        UPDATE recommendations SET lease_until = %(until)s
         WHERE id = %(id)s AND claimed_by = %(w)s AND status <> 'posted' RETURNING 1
        """,
        {"id": rec_id, "w": worker, "until": until},
    ).fetchone()
    if row is not None:
        conn.execute(
            """
            UPDATE channel_settings SET next_post_at = %(until)s
             WHERE team_id = %(t)s AND channel_id = %(c)s AND next_post_at < %(until)s
            """,
            {"t": team_id, "c": channel_id, "until": until},
        )
    return row is not None


def start_sending(conn: psycopg.Connection, rec_id: int, worker: str, until: datetime) -> bool:
    """The compare-and-set before ``chat.postMessage``: only the lease holder moves the slot to 'sending'."""
    row = conn.execute(
        """
        UPDATE recommendations SET status = 'sending', lease_until = %(until)s
         WHERE id = %(id)s AND claimed_by = %(w)s AND status IN ('drafted', 'posting', 'failed') RETURNING 1
        """,
        {"id": rec_id, "w": worker, "until": until},
    ).fetchone()
    return row is not None


def record_channel_failure(
    conn: psycopg.Connection, team_id: str, channel_id: str, *, permanent: bool, reason: str
) -> int:
    """Count a failed post; a permanent failure also stops the channel with its reason. Returns the count."""
    row = conn.execute(
        """
        UPDATE channel_settings
           SET failures = failures + 1,
               stopped_reason = CASE WHEN %(p)s THEN %(r)s ELSE stopped_reason END,
               active = active AND NOT %(p)s,
               slot_at = CASE WHEN %(p)s THEN NULL ELSE slot_at END
         WHERE team_id = %(t)s AND channel_id = %(c)s
        RETURNING failures
        """,
        {"t": team_id, "c": channel_id, "p": permanent, "r": reason[:300]},
    ).fetchone()
    return int(row[0]) if row else 0


def is_deleted_post(conn: psycopg.Connection, team_id: str, channel_id: str, message_ts: str) -> bool:
    """Whether PaperPing's post with this ts in the channel was deleted in Slack (``post_sources``)."""
    row = conn.execute(
        """
        SELECT 1 FROM recommendations
         WHERE team_id = %(t)s AND channel_id = %(c)s AND message_ts = %(ts)s AND deleted_at IS NOT NULL
        """,
        {"t": team_id, "c": channel_id, "ts": message_ts},
    ).fetchone()
    return row is not None


def load_slot_draft(conn: psycopg.Connection, rec_id: int) -> dict[str, Any] | None:
    """The draft a slot recorded before sending (None: none yet)."""
    row = conn.execute("SELECT draft FROM recommendations WHERE id = %(id)s", {"id": rec_id}).fetchone()
    return dict(row[0]) if row and row[0] else None


def load_posted_draft(
    conn: psycopg.Connection, team_id: str, channel_id: str, message_ts: str
) -> dict[str, Any] | None:
    """The stored draft of PaperPing's post with this ts in the channel, None when it is not one."""
    row = conn.execute(
        """
        SELECT draft FROM recommendations
         WHERE team_id = %(t)s AND channel_id = %(c)s AND message_ts = %(ts)s AND status = 'posted'
           AND deleted_at IS NULL
        """,
        {"t": team_id, "c": channel_id, "ts": message_ts},
    ).fetchone()
    return dict(row[0]) if row and row[0] else None
