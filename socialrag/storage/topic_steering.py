"""The topics members muted or boosted in a channel (`/paperping profile mute|boost`), and the first day's
ratings post (`onboarding`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import psycopg

from socialrag.storage.context_rows import MEMBER_SHARE


@dataclass(frozen=True)
class SteerRow:
    label: str
    action: str
    model: str
    direction: list[float]
    radius: float
    user_id: str | None
    set_at: datetime
    words: tuple[str, ...] = ()  # the member's own words, when they named the topic by words


def load_steering(conn: psycopg.Connection, team_id: str, channel_id: str) -> list[SteerRow]:
    rows = conn.execute(
        """
        SELECT label, action, model, direction, radius, user_id, set_at, words FROM topic_steering
         WHERE team_id = %(t)s AND channel_id = %(c)s ORDER BY set_at, label
        """,
        {"t": team_id, "c": channel_id},
    ).fetchall()
    return [SteerRow(r[0], r[1], r[2], list(r[3]), float(r[4]), r[5], r[6], tuple(r[7])) for r in rows]


def upsert_steering(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str,
    row: SteerRow,
) -> None:
    """Keep a muted or boosted topic of the channel; who asked is not kept when they are on the workspace's forget
    list (as forget-me clears it)."""
    conn.execute(
        """
        INSERT INTO topic_steering
               (team_id, channel_id, label, action, model, direction, radius, user_id, set_at, words)
        VALUES (%(t)s, %(c)s, %(label)s, %(action)s, %(model)s, %(direction)s, %(radius)s,
                CASE WHEN EXISTS (SELECT 1 FROM forgotten_members WHERE team_id = %(t)s AND user_id = %(user)s)
                     THEN NULL ELSE %(user)s END,
                %(at)s, %(words)s)
        ON CONFLICT (team_id, channel_id, label) DO UPDATE SET action = EXCLUDED.action, model = EXCLUDED.model,
            direction = EXCLUDED.direction, radius = EXCLUDED.radius, user_id = EXCLUDED.user_id,
            set_at = EXCLUDED.set_at, words = EXCLUDED.words
        """,
        {
            "t": team_id,
            "c": channel_id,
            "label": row.label,
            "action": row.action,
            "model": row.model,
            "direction": row.direction,
            "radius": row.radius,
            "user": row.user_id,
            "at": row.set_at,
            "words": list(row.words),
        },
    )


def delete_steering(
    conn: psycopg.Connection, team_id: str, channel_id: str, labels: Sequence[str] | None = None
) -> int:
    """Forget some steered topics (all of the channel's when ``labels`` is None); how many were."""
    cur = conn.execute(
        """
        DELETE FROM topic_steering WHERE team_id = %(t)s AND channel_id = %(c)s
           AND (%(all)s OR label = ANY(%(labels)s::text[]))
        """,
        {"t": team_id, "c": channel_id, "all": labels is None, "labels": list(labels or ())},
    )
    return cur.rowcount


@dataclass(frozen=True)
class Onboarding:
    asked_at: datetime
    reason: str
    paper_ids: list[int]
    used_at: datetime | None


def load_onboarding(conn: psycopg.Connection, team_id: str, channel_id: str) -> Onboarding | None:
    row = conn.execute(
        "SELECT asked_at, reason, paper_ids, used_at FROM onboarding WHERE team_id = %(t)s AND channel_id = %(c)s",
        {"t": team_id, "c": channel_id},
    ).fetchone()
    return Onboarding(row[0], row[1], list(row[2]), row[3]) if row else None


def start_over(conn: psycopg.Connection, team_id: str, channel_id: str, at: datetime) -> None:
    """`/paperping start-over`: the next slot offers five papers to rate again."""
    conn.execute(
        """
        INSERT INTO onboarding (team_id, channel_id, asked_at, reason) VALUES (%(t)s, %(c)s, %(at)s, 'start-over')
        ON CONFLICT (team_id, channel_id) DO UPDATE
           SET asked_at = EXCLUDED.asked_at, reason = EXCLUDED.reason, paper_ids = '{}', used_at = NULL
        """,
        {"t": team_id, "c": channel_id, "at": at},
    )


def record_onboarding(
    conn: psycopg.Connection, team_id: str, channel_id: str, reason: str, paper_ids: Sequence[int], at: datetime
) -> bool:
    """Keep the five papers offered; False when the channel already had its first day (and no start-over is
    due), so that it is offered once."""
    cur = conn.execute(
        """
        INSERT INTO onboarding (team_id, channel_id, asked_at, reason, paper_ids)
        VALUES (%(t)s, %(c)s, %(at)s, %(r)s, %(ids)s)
        ON CONFLICT (team_id, channel_id) DO UPDATE SET asked_at = EXCLUDED.asked_at, paper_ids = EXCLUDED.paper_ids
         WHERE onboarding.paper_ids = '{}'
        """,
        {"t": team_id, "c": channel_id, "at": at, "r": reason, "ids": list(paper_ids)},
    )
    return cur.rowcount == 1


def release_unsent_onboarding(
    conn: psycopg.Connection, team_id: str, channel_id: str, slot_id: int, slot_at: datetime, now: datetime
) -> bool:
    """The slot ``slot_id`` (due at ``slot_at``) drafted the first day's post and it never went out (Slack failed
    it, or its sender was killed before Slack had it, or before the slot stored its draft): the five papers are
    given back, so that the slot's retry offers the first day again instead of losing it. The slot drafted them
    when its stored draft is the first day's, or when they were drafted since it was due; never while another
    slot of the channel is being sent, nor once a first day's post drafted since went out. True when there was
    such a first day."""
    cur = conn.execute(
        """
        UPDATE onboarding o SET paper_ids = '{}'
         WHERE o.team_id = %(t)s AND o.channel_id = %(c)s AND o.paper_ids <> '{}'
           AND EXISTS (SELECT 1 FROM recommendations r
                        WHERE r.id = %(slot)s AND (r.team_id, r.channel_id) = (o.team_id, o.channel_id)
                          AND r.message_ts IS NULL
                          AND (r.draft->>'kind' = 'onboarding' OR o.asked_at >= %(slot_at)s))
           AND NOT EXISTS (SELECT 1 FROM recommendations r
                            WHERE (r.team_id, r.channel_id) = (o.team_id, o.channel_id) AND r.id <> %(slot)s
                              AND ((r.message_ts IS NOT NULL AND r.draft->>'kind' = 'onboarding'
                                    AND r.posted_at >= o.asked_at)
                                   OR (r.status = 'sending' AND r.lease_until > %(now)s)))
        """,
        {"t": team_id, "c": channel_id, "slot": slot_id, "slot_at": slot_at, "now": now},
    )
    return cur.rowcount == 1


def count_ratings(conn: psycopg.Connection, team_id: str, channel_id: str, paper_ids: Sequence[int]) -> int:
    """How many ratings (Relevant or Not for us clicks) members gave the papers of the first day's post."""
    row = conn.execute(
        """
        SELECT count(*) FROM reactions r JOIN message_papers mp ON mp.message_id = r.message_id
          JOIN messages m ON m.id = r.message_id
         WHERE mp.team_id = %(t)s AND mp.channel_id = %(c)s AND mp.paper_id = ANY(%(ids)s::bigint[])
           AND position('/' in m.ts) > 0 AND r.emoji IN ('button:relevant', 'button:not-for-us')
        """,
        {"t": team_id, "c": channel_id, "ids": list(paper_ids)},
    ).fetchone()
    return int(row[0]) if row else 0


def mark_onboarding_used(conn: psycopg.Connection, team_id: str, channel_id: str, at: datetime) -> bool:
    """Note that a post said it used the ratings; True the first time."""
    cur = conn.execute(
        "UPDATE onboarding SET used_at = %(at)s WHERE team_id = %(t)s AND channel_id = %(c)s AND used_at IS NULL",
        {"t": team_id, "c": channel_id, "at": at},
    )
    return cur.rowcount == 1


def count_member_shares(conn: psycopg.Connection, team_id: str, channel_id: str) -> int:
    """How many papers members shared in the channel (PaperPing's own posts and digests left out)."""
    row = conn.execute(
        f"""
        SELECT count(DISTINCT mp.paper_id) FROM message_papers mp JOIN messages m ON m.id = mp.message_id
         WHERE mp.team_id = %(t)s AND mp.channel_id = %(c)s AND {MEMBER_SHARE}
        """,
        {"t": team_id, "c": channel_id},
    ).fetchone()
    return int(row[0]) if row else 0
