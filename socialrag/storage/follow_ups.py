"""Follow-ups in the original thread: the shared papers to ask the sources about again (``paper_watch`` keeps what
was seen last), the follow-ups noticed for each channel that shared a paper (``follow_ups``, once per channel,
paper, kind and key), and what deciding and sending them needs."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from socialrag.storage.context_rows import MEMBER_SHARE
from socialrag.storage.locks import hold_lock

# A member's share of a paper in a channel with follow-ups on, in the last twelve months (PaperPing's own posts,
# digest items and replies are not shares).
_SHARED_HERE = f"""
    FROM message_papers mp
    JOIN messages m ON m.id = mp.message_id
    JOIN channel_settings s ON (s.team_id, s.channel_id) = (mp.team_id, mp.channel_id)
   WHERE {MEMBER_SHARE} AND m.posted_at >= %(since)s AND s.active AND s.follow_ups
"""


@dataclass(frozen=True)
class Watched:
    """A shared paper due a check, with what was seen of it last (``seen``: checked before)."""

    paper_id: int
    stored_venue: str | None  # the venue the knowledge base holds for it
    seen: bool
    venue: str | None
    version: int | None
    citing: tuple[str, ...]


def load_papers_to_watch(
    conn: psycopg.Connection, checked_before: datetime, since: datetime, limit: int = 20
) -> list[Watched]:
    """Papers members shared since ``since`` in channels with follow-ups on, not checked since ``checked_before``."""
    rows = conn.execute(
        f"""
        SELECT p.id, v.name, w.paper_id IS NOT NULL, w.venue, w.version, COALESCE(w.citing, '{{}}')
          FROM papers p
          LEFT JOIN venues v ON v.id = p.venue_id
          LEFT JOIN paper_watch w ON w.paper_id = p.id
         WHERE (w.checked_at IS NULL OR w.checked_at < %(before)s)
           AND p.title IS NOT NULL  -- looked up: what it was when shared is the first look's baseline
           AND EXISTS (SELECT 1 {_SHARED_HERE} AND mp.paper_id = p.id)
         ORDER BY w.checked_at NULLS FIRST, p.id
         LIMIT %(n)s
        """,
        {"before": checked_before, "since": since, "n": limit},
    ).fetchall()
    return [Watched(r[0], r[1], r[2], r[3], r[4], tuple(r[5])) for r in rows]


def record_watch(
    conn: psycopg.Connection, paper_id: int, at: datetime, venue: str | None, version: int | None, citing: Sequence[str]
) -> None:
    conn.execute(
        """
        INSERT INTO paper_watch (paper_id, checked_at, venue, version, citing)
        VALUES (%(p)s, %(at)s, %(v)s, %(n)s, %(c)s)
        ON CONFLICT (paper_id) DO UPDATE
           SET checked_at = EXCLUDED.checked_at, venue = EXCLUDED.venue, version = EXCLUDED.version,
               citing = EXCLUDED.citing
        """,
        {"p": paper_id, "at": at, "v": venue, "n": version, "c": list(citing)[:5000]},
    )


def load_sharing_channels(conn: psycopg.Connection, paper_id: int, since: datetime) -> list[tuple[str, str]]:
    """The channels (with follow-ups on) where members shared the paper since ``since``."""
    rows = conn.execute(
        f"SELECT DISTINCT mp.team_id, mp.channel_id {_SHARED_HERE} AND mp.paper_id = %(p)s",
        {"p": paper_id, "since": since},
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


def record_follow_up(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str,
    paper_id: int,
    kind: str,
    key: str,
    detail: dict[str, Any],
    at: datetime,
) -> bool:
    """Note a follow-up for the channel's thread of the paper; False when it was noted before."""
    cur = conn.execute(
        """
        INSERT INTO follow_ups (team_id, channel_id, paper_id, kind, key, detail, noticed_at)
        VALUES (%(t)s, %(c)s, %(p)s, %(k)s, %(key)s, %(d)s, %(at)s)
        ON CONFLICT DO NOTHING
        """,
        {"t": team_id, "c": channel_id, "p": paper_id, "k": kind, "key": key[:300], "d": Jsonb(detail), "at": at},
    )
    return cur.rowcount > 0


@dataclass(frozen=True)
class Citer:
    key: str  # ``paper:<id>`` for a paper the base holds, else ``s2:<Semantic Scholar id>`` (one key a paper)
    paper_id: int | None
    title: str | None
    scheme: str | None
    value: str | None


def load_citers(conn: psycopg.Connection, paper_id: int) -> list[Citer]:
    """The papers known to cite ``paper_id``: from the catalog's reference lists and Semantic Scholar's citations
    (each citing paper once, by its Semantic Scholar id or the paper the base holds under it)."""
    rows = conn.execute(
        """
        SELECT 'paper:' || r.citing_paper_id, r.citing_paper_id, NULL::text, NULL::text, NULL::text
          FROM paper_references r JOIN paper_ids i ON (i.scheme, i.value) = (r.cited_scheme, r.cited_value)
         WHERE i.paper_id = %(p)s
        UNION
        SELECT COALESCE('paper:' || ci.paper_id, 's2:' || pc.citing_value), ci.paper_id,
               pc.citing_title, pc.citing_scheme, pc.citing_value
          FROM paper_citations pc LEFT JOIN paper_ids ci ON (ci.scheme, ci.value) = ('s2', pc.citing_value)
         WHERE pc.cited_paper_id = %(p)s AND pc.citing_scheme = 's2'
        """,
        {"p": paper_id},
    ).fetchall()
    found: dict[str, Citer] = {}
    for r in rows:
        found.setdefault(r[0], Citer(r[0], r[1], r[2], r[3], r[4]))
    return list(found.values())


def load_cited_by(conn: psycopg.Connection, keys: Sequence[str]) -> dict[str, set[int]]:
    """For each citing paper (by ``Citer.key``), the papers of the base it is known to cite."""
    rows = conn.execute(
        """
        SELECT 'paper:' || r.citing_paper_id, i.paper_id
          FROM paper_references r JOIN paper_ids i ON (i.scheme, i.value) = (r.cited_scheme, r.cited_value)
         WHERE 'paper:' || r.citing_paper_id = ANY(%(k)s::text[])
        UNION
        SELECT COALESCE('paper:' || ci.paper_id, 's2:' || pc.citing_value), pc.cited_paper_id
          FROM paper_citations pc LEFT JOIN paper_ids ci ON (ci.scheme, ci.value) = ('s2', pc.citing_value)
         WHERE pc.citing_scheme = 's2'
           AND COALESCE('paper:' || ci.paper_id, 's2:' || pc.citing_value) = ANY(%(k)s::text[])
        """,
        {"k": list(keys)},
    ).fetchall()
    out: dict[str, set[int]] = {}
    for key, pid in rows:
        out.setdefault(key, set()).add(int(pid))
    return out


@dataclass(frozen=True)
class FollowUp:
    id: int
    team_id: str
    channel_id: str
    paper_id: int
    kind: str
    key: str
    detail: dict[str, Any]
    noticed_at: datetime


# A waiting follow-up ``f`` its thread and its channel still have room for: the thread heard none in ``%(gap)s``
# days, the channel fewer than ``%(week)s`` in the past week (each up to ``%(now)s``)
_UNDER_CAPS = """(
    NOT EXISTS (SELECT 1 FROM follow_ups g
                 WHERE (g.team_id, g.channel_id, g.paper_id) = (f.team_id, f.channel_id, f.paper_id)
                   AND g.status IN ('posted', 'sending')
                   AND g.posted_at > %(now)s - make_interval(days => %(gap)s))
    AND (SELECT count(*) FROM follow_ups g
          WHERE (g.team_id, g.channel_id) = (f.team_id, f.channel_id) AND g.status IN ('posted', 'sending')
            AND g.posted_at > %(now)s - interval '7 days') < %(week)s)"""


def load_due_follow_ups(
    conn: psycopg.Connection, now: datetime, *, thread_gap_days: int, per_week: int, limit: int = 20
) -> list[FollowUp]:
    """Follow-ups waiting in channels with follow-ups on and not paused (they wait for `resume`), whose thread got
    none in ``thread_gap_days`` and whose channel got fewer than ``per_week`` in the past week; the oldest first."""
    rows = conn.execute(
        f"""
        SELECT f.id, f.team_id, f.channel_id, f.paper_id, f.kind, f.key, f.detail, f.noticed_at FROM follow_ups f
          JOIN channel_settings s ON (s.team_id, s.channel_id) = (f.team_id, f.channel_id)
         WHERE f.status = 'waiting' AND s.active AND s.follow_ups AND NOT s.paused
           AND {_UNDER_CAPS}
         ORDER BY f.noticed_at, f.id
         LIMIT %(n)s
        """,
        {"now": now, "gap": thread_gap_days, "week": per_week, "n": limit},
    ).fetchall()
    return [FollowUp(r[0], r[1], r[2], r[3], r[4], r[5], dict(r[6]), r[7]) for r in rows]


def claim_follow_up(
    conn: psycopg.Connection, follow_up_id: int, now: datetime, *, thread_gap_days: int, per_week: int
) -> bool:
    """Take a waiting follow-up to send it (one process does), only while its channel still has follow-ups on
    and is not paused, and its thread and its channel are under their caps (checked at the claim, under a lock
    of the channel, not when the batch was loaded: a batch of five never passes a cap of three, and a channel
    that turned follow-ups off halfway through a batch hears no more of it); counted against both from now."""
    with conn.transaction():
        row = conn.execute(
            "SELECT team_id, channel_id FROM follow_ups WHERE id = %(id)s AND status = 'waiting'", {"id": follow_up_id}
        ).fetchone()
        if row is None:
            return False
        hold_lock(conn, f"follow-ups:{row[0]}:{row[1]}")
        cur = conn.execute(
            f"""
            UPDATE follow_ups f SET status = 'sending', posted_at = %(now)s
              FROM channel_settings s
             WHERE f.id = %(id)s AND f.status = 'waiting'
               AND (s.team_id, s.channel_id) = (f.team_id, f.channel_id) AND s.active AND s.follow_ups AND NOT s.paused
               AND {_UNDER_CAPS}
            """,
            {"id": follow_up_id, "now": now, "gap": thread_gap_days, "week": per_week},
        )
        return cur.rowcount > 0


def finish_follow_up(
    conn: psycopg.Connection,
    follow_up_id: int,
    status: str,
    *,
    thread_ts: str | None = None,
    reply_ts: str | None = None,
    reason: str | None = None,
) -> None:
    """Settle a claimed follow-up. The thread's ts is kept only while its share is stored: a share deleted or
    forgotten while the reply was being sent leaves no trace here (``forget_gone_shares``)."""
    conn.execute(
        """
        UPDATE follow_ups f
           SET status = %(s)s, reply_ts = %(r)s, reason = %(why)s,
               thread_ts = (SELECT m.ts FROM messages m
                             WHERE (m.team_id, m.channel_id, m.ts) = (f.team_id, f.channel_id, %(th)s::text))
         WHERE id = %(id)s
        """,
        {"id": follow_up_id, "s": status, "th": thread_ts, "r": reply_ts, "why": (reason or "")[:300] or None},
    )


@dataclass(frozen=True)
class SharedThread:
    """A paper's first share by a member in a channel: the thread a follow-up goes to."""

    paper_id: int
    ts: str
    user_id: str | None
    posted_at: datetime
    permalink: str | None
    title: str | None
    replies: int
    reactions: int


def load_shared_threads(
    conn: psycopg.Connection, team_id: str, channel_id: str, paper_ids: Sequence[int] | None = None
) -> dict[int, SharedThread]:
    """Every paper members shared in the channel (or those of ``paper_ids`` they did), with its first share and
    how much it was discussed there."""
    rows = conn.execute(
        f"""
        SELECT DISTINCT ON (mp.paper_id) mp.paper_id, m.ts, m.user_id, m.posted_at, m.permalink, p.title,
               (SELECT count(*) FROM messages x WHERE (x.team_id, x.channel_id, x.thread_ts)
                                                    = (m.team_id, m.channel_id, m.ts) AND x.is_reply),
               (SELECT count(*) FROM reactions x JOIN message_papers y ON y.message_id = x.message_id
                 WHERE (y.team_id, y.channel_id, y.paper_id) = (mp.team_id, mp.channel_id, mp.paper_id))
          FROM message_papers mp JOIN messages m ON m.id = mp.message_id JOIN papers p ON p.id = mp.paper_id
         WHERE mp.team_id = %(t)s AND mp.channel_id = %(c)s AND {MEMBER_SHARE}
           AND (%(p)s::bigint[] IS NULL OR mp.paper_id = ANY(%(p)s::bigint[]))
         ORDER BY mp.paper_id, m.posted_at, m.id
        """,
        {"t": team_id, "c": channel_id, "p": None if paper_ids is None else [int(p) for p in paper_ids]},
    ).fetchall()
    return {r[0]: SharedThread(r[0], r[1], r[2], r[3], r[4], r[5], int(r[6]), int(r[7])) for r in rows}


GONE = "the share it follows is gone"  # why a follow-up whose thread went is dropped


def forget_gone_shares(conn: psycopg.Connection, team_id: str, channel_ids: Sequence[str] | None = None) -> None:
    """After messages of these channels of the workspace (None: of any of its channels) were deleted or forgotten:
    a follow-up no longer keeps the ts of a thread whose share is not stored, and one still waiting for a paper
    no member's share in its channel is left of is dropped (``GONE``), as the sender would drop it. The caps
    count a thread's follow-ups by paper, not by this ts."""
    params = {"t": team_id, "c": None if channel_ids is None else list(channel_ids), "why": GONE}
    scope = "f.team_id = %(t)s AND (%(c)s::text[] IS NULL OR f.channel_id = ANY(%(c)s::text[]))"
    conn.execute(
        f"""
        UPDATE follow_ups f SET thread_ts = NULL
         WHERE {scope} AND f.thread_ts IS NOT NULL
           AND NOT EXISTS (SELECT 1 FROM messages m
                            WHERE (m.team_id, m.channel_id, m.ts) = (f.team_id, f.channel_id, f.thread_ts))
        """,
        params,
    )
    conn.execute(
        f"""
        UPDATE follow_ups f SET status = 'dropped', reason = %(why)s
         WHERE {scope} AND f.status = 'waiting'
           AND NOT EXISTS (SELECT 1 FROM message_papers mp JOIN messages m ON m.id = mp.message_id
                            WHERE (mp.team_id, mp.channel_id, mp.paper_id) = (f.team_id, f.channel_id, f.paper_id)
                              AND {MEMBER_SHARE})
        """,
        params,
    )


def delete_follow_ups(conn: psycopg.Connection, team_id: str, channel_id: str) -> None:
    """Forget the channel's follow-ups and what was seen of its papers (the demo tells the same story each run)."""
    conn.execute("DELETE FROM follow_ups WHERE team_id = %(t)s AND channel_id = %(c)s", {"t": team_id, "c": channel_id})
    conn.execute(
        """
        DELETE FROM paper_watch w USING message_papers mp
         WHERE mp.paper_id = w.paper_id AND mp.team_id = %(t)s AND mp.channel_id = %(c)s
        """,
        {"t": team_id, "c": channel_id},
    )
