"""Queries of the index queue (papers waiting to be looked up and embedded) and of the shared pace of the
outside services. Every process of ``paperping run`` works from these rows, so they share the work and the
services' rate limits through Postgres alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import psycopg

from socialrag.storage.lookups import NEEDS_LOOKUP
from socialrag.storage.usage import take_member_hourly

# priorities: lower is sooner
PRIORITY_NOW = 0  # a paper a member just linked (focus, save, like), within their hourly cap
PRIORITY_SHARED = 1  # a paper a channel shared
PRIORITY_REFRESH = 2  # metadata grown stale
PRIORITY_CATALOG = 3  # a catalog paper without a vector of the current model

# papers one member may put ahead of every channel's shares in an hour, in one workspace (docs/slack.md says why)
MEMBER_FIRST_PER_HOUR = 20


@dataclass(frozen=True)
class IndexProgress:
    """How far one channel's papers are indexed."""

    stored: int
    looked_up: int
    embedded: int
    waiting: int
    given_up: int
    # waiting with no vector yet: the only papers a post waits for (a lookup that would only enrich a paper the
    # catalog or an earlier lookup made usable never holds one)
    unusable: int

    @property
    def busy(self) -> bool:
        return self.unusable > 0


def enqueue_papers(conn: psycopg.Connection, paper_ids: Sequence[int], priority: int = PRIORITY_SHARED) -> int:
    """Put the papers that need work in the queue: not looked up yet, never embedded, without a title (each
    channel that shares it embeds its own words, which may have changed), or a catalog paper never
    asked of the online sources (a paper already waiting keeps its place, or moves up to ``priority``; a paper
    given up stays given up; stale metadata and a new model are the hourly sweep's). Returns how many."""
    if not paper_ids:
        return 0
    cur = conn.execute(
        """
        INSERT INTO index_queue (paper_id, priority)
        SELECT p.id, %(p)s FROM papers p
         WHERE p.id = ANY(%(ids)s::bigint[])
           AND (p.fetched_at IS NULL OR p.title IS NULL OR (p.metadata_source = 'catalog' AND p.fetch_attempts = 0)
                OR NOT EXISTS (SELECT 1 FROM paper_embeddings e WHERE e.paper_id = p.id))
        ON CONFLICT (paper_id) DO UPDATE
           SET priority = EXCLUDED.priority, not_before = LEAST(index_queue.not_before, now())
         WHERE index_queue.priority > EXCLUDED.priority AND index_queue.given_up_at IS NULL
        """,
        {"ids": list(paper_ids), "p": priority},
    )
    return cur.rowcount


def enqueue_for_member(
    conn: psycopg.Connection,
    team_id: str,
    user_id: str,
    paper_ids: Sequence[int],
    now: datetime,
    per_hour: int = MEMBER_FIRST_PER_HOUR,
) -> int:
    """Queue the papers a member asked for: first (``PRIORITY_NOW``) while fewer than ``per_hour`` of theirs went
    first this hour in this workspace, else as a channel's shares are (``PRIORITY_SHARED``: still indexed, in
    turn). Only a paper that moves up counts (one already indexed or already first does not). Returns how many
    would have gone first but were queued in turn."""
    behind = 0
    for paper_id in dict.fromkeys(paper_ids):
        try:
            with conn.transaction():  # a savepoint: past the cap the paper's move to the front is undone
                if enqueue_papers(conn, [paper_id], PRIORITY_NOW) and not take_member_hourly(
                    conn, team_id, user_id, "lookups", now, per_hour
                ):
                    raise _PastCap
        except _PastCap:
            behind += 1
            enqueue_papers(conn, [paper_id], PRIORITY_SHARED)
    return behind


class _PastCap(Exception):
    pass


def claim_index_work(
    conn: psycopg.Connection, worker: str, now: datetime, lease_until: datetime, limit: int
) -> list[int]:
    """Lease up to ``limit`` ready papers to ``worker``, most urgent first; other processes skip them."""
    rows = conn.execute(
        """
        UPDATE index_queue q SET leased_by = %(w)s, lease_until = %(until)s
          FROM (SELECT paper_id FROM index_queue
                 WHERE given_up_at IS NULL AND not_before <= %(now)s
                   AND (lease_until IS NULL OR lease_until < %(now)s)
                 ORDER BY priority, not_before, paper_id
                 LIMIT %(n)s
                   FOR UPDATE SKIP LOCKED) ready
         WHERE q.paper_id = ready.paper_id
        RETURNING q.paper_id
        """,
        {"w": worker, "until": lease_until, "now": now, "n": limit},
    ).fetchall()
    return sorted(r[0] for r in rows)


def finish_index_work(conn: psycopg.Connection, paper_ids: Sequence[int], worker: str) -> int:
    """These papers are indexed: they leave the queue (unless another worker has taken them over)."""
    cur = conn.execute(
        "DELETE FROM index_queue WHERE paper_id = ANY(%(ids)s::bigint[]) AND leased_by = %(w)s",
        {"ids": list(paper_ids), "w": worker},
    )
    return cur.rowcount


def record_index_failure(
    conn: psycopg.Connection,
    paper_ids: Sequence[int],
    worker: str,
    now: datetime,
    error: str,
    *,
    first_wait: timedelta,
    max_attempts: int,
) -> int:
    """A try failed: wait longer each time (``first_wait`` × 3^(tries-1)), and give up after ``max_attempts``.
    Returns how many papers were given up."""
    rows = conn.execute(
        """
        UPDATE index_queue SET attempts = attempts + 1, leased_by = NULL, lease_until = NULL,
               last_error = left(%(e)s, 500),
               not_before = %(now)s + %(wait)s * power(3, LEAST(attempts, 8)),
               given_up_at = CASE WHEN attempts + 1 >= %(max)s THEN %(now)s END
         WHERE paper_id = ANY(%(ids)s::bigint[]) AND leased_by = %(w)s
        RETURNING given_up_at IS NOT NULL
        """,
        {"ids": list(paper_ids), "w": worker, "now": now, "e": error, "wait": first_wait, "max": max_attempts},
    ).fetchall()
    return sum(1 for r in rows if r[0])


def load_lookups_needed(
    conn: psycopg.Connection, paper_ids: Sequence[int], now: datetime, max_age: timedelta
) -> list[int]:
    """Which of these papers need their metadata looked up: none yet, grown stale, or a catalog paper a
    channel shared that was never asked of the online sources (for its tldr and references)."""
    rows = conn.execute(
        f"SELECT p.id FROM papers p WHERE p.id = ANY(%(ids)s::bigint[]) AND {NEEDS_LOOKUP} ORDER BY p.id",
        {"ids": list(paper_ids), "stale": now - max_age},
    ).fetchall()
    return [r[0] for r in rows]


def enqueue_due(conn: psycopg.Connection, now: datetime, model: str, max_age: timedelta, limit: int = 5000) -> int:
    """The sweep: shared papers without a vector of ``model`` or with stale metadata, and catalog papers
    without a vector of ``model`` (after a change of model), into the queue; a paper given up ``max_age`` ago
    gets another chance (a preprint no source knew may be known by now). Returns how many were added."""
    conn.execute("DELETE FROM index_queue WHERE given_up_at < %(before)s", {"before": now - max_age})
    added = 0
    for priority, sql in (
        (PRIORITY_SHARED, _SHARED_UNEMBEDDED),
        (PRIORITY_REFRESH, _STALE),
        (PRIORITY_CATALOG, _CATALOG_UNEMBEDDED),
    ):
        ids = [r[0] for r in conn.execute(sql, {"m": model, "stale": now - max_age, "now": now, "n": limit})]
        added += enqueue_papers(conn, ids, priority)
    return added


_NOT_QUEUED = "NOT EXISTS (SELECT 1 FROM index_queue q WHERE q.paper_id = p.id)"
# A paper has the vectors of ``model`` it needs: its own when it has a title, else one for each channel sharing it.
_EMBEDDED = """
(CASE WHEN p.title IS NOT NULL
      THEN EXISTS (SELECT 1 FROM paper_embeddings e WHERE e.paper_id = p.id AND e.model = %(m)s)
      ELSE NOT EXISTS (SELECT 1 FROM message_papers mp WHERE mp.paper_id = p.id AND NOT EXISTS (
               SELECT 1 FROM channel_text_embeddings x WHERE x.paper_id = p.id AND x.model = %(m)s
                  AND x.team_id = mp.team_id AND x.channel_id = mp.channel_id)) END)"""
_NO_VECTOR = f"NOT {_EMBEDDED}"
_SHARED_UNEMBEDDED = f"""
SELECT p.id FROM papers p
 WHERE EXISTS (SELECT 1 FROM message_papers mp WHERE mp.paper_id = p.id) AND {_NO_VECTOR} AND {_NOT_QUEUED}
 ORDER BY p.id LIMIT %(n)s
"""
_STALE = f"""
SELECT p.id FROM papers p
 WHERE EXISTS (SELECT 1 FROM message_papers mp WHERE mp.paper_id = p.id) AND {_NOT_QUEUED}
   AND ((p.fetched_at IS NULL AND p.next_fetch_at <= %(now)s) OR (p.fetched_at < %(stale)s AND NOT p.in_catalog))
 ORDER BY p.fetched_at NULLS FIRST, p.id LIMIT %(n)s
"""
_CATALOG_UNEMBEDDED = f"""
SELECT p.id FROM papers p WHERE p.in_catalog AND p.title IS NOT NULL AND {_NO_VECTOR} AND {_NOT_QUEUED}
 ORDER BY p.id LIMIT %(n)s
"""


def load_index_progress(conn: psycopg.Connection, team_id: str, channel_id: str, model: str) -> IndexProgress:
    """One channel's shared papers: how many are stored, looked up, embedded, waiting, given up, and waiting with
    no vector yet."""
    row = conn.execute(
        """
        WITH shared AS (SELECT DISTINCT paper_id FROM message_papers WHERE team_id = %(t)s AND channel_id = %(c)s),
        state AS (
            SELECT p.title IS NOT NULL AS looked_up,
                   EXISTS (SELECT 1 FROM paper_embeddings e WHERE e.paper_id = s.paper_id AND e.model = %(m)s)
                   OR EXISTS (SELECT 1 FROM channel_text_embeddings x
                               WHERE x.paper_id = s.paper_id AND x.model = %(m)s
                                 AND x.team_id = %(t)s AND x.channel_id = %(c)s) AS embedded,
                   q.paper_id IS NOT NULL AND q.given_up_at IS NULL AS waiting,
                   q.given_up_at IS NOT NULL AS given_up
              FROM shared s JOIN papers p ON p.id = s.paper_id
              LEFT JOIN index_queue q ON q.paper_id = s.paper_id
        )
        SELECT count(*), count(*) FILTER (WHERE looked_up), count(*) FILTER (WHERE embedded),
               count(*) FILTER (WHERE waiting), count(*) FILTER (WHERE given_up),
               count(*) FILTER (WHERE waiting AND NOT embedded)
          FROM state
        """,
        {"t": team_id, "c": channel_id, "m": model},
    ).fetchone()
    assert row is not None
    return IndexProgress(*(int(v) for v in row))


def load_channel_waiting(conn: psycopg.Connection, team_id: str, channel_id: str) -> int:
    """How many of the channel's shared papers still wait in the queue (given up ones do not)."""
    row = conn.execute(
        """
        SELECT count(DISTINCT q.paper_id) FROM message_papers mp JOIN index_queue q ON q.paper_id = mp.paper_id
         WHERE mp.team_id = %(t)s AND mp.channel_id = %(c)s AND q.given_up_at IS NULL
        """,
        {"t": team_id, "c": channel_id},
    ).fetchone()
    return int(row[0]) if row else 0


def drop_indexed(conn: psycopg.Connection, model: str, now: datetime) -> int:
    """Take out of the queue what a foreground run (``paperping index``, an import) already indexed: papers
    with a vector of ``model`` whose lookup succeeded or failed recently. Leased rows are left alone."""
    cur = conn.execute(
        f"""
        DELETE FROM index_queue q USING papers p
         WHERE p.id = q.paper_id AND q.given_up_at IS NULL AND (q.lease_until IS NULL OR q.lease_until < %(now)s)
           AND (p.fetched_at IS NOT NULL OR p.next_fetch_at > %(now)s) AND {_EMBEDDED}
        """,
        {"m": model, "now": now},
    )
    return cur.rowcount


def load_queue_counts(conn: psycopg.Connection) -> dict[str, int]:
    """The whole queue: papers waiting (ready now or later), leased right now, given up."""
    row = conn.execute(
        """
        SELECT count(*) FILTER (WHERE given_up_at IS NULL),
               count(*) FILTER (WHERE given_up_at IS NULL AND lease_until > now()),
               count(*) FILTER (WHERE given_up_at IS NOT NULL)
          FROM index_queue
        """
    ).fetchone()
    assert row is not None
    return {"waiting": int(row[0]), "working": int(row[1]), "given_up": int(row[2])}


def requeue_shared(conn: psycopg.Connection, paper_ids: Sequence[int]) -> None:
    """Queue again those of these papers that are still shared (their vector made from words that are gone
    was deleted), to be embedded anew from the messages that remain."""
    rows = conn.execute(
        "SELECT DISTINCT paper_id FROM message_papers WHERE paper_id = ANY(%(ids)s::bigint[])",
        {"ids": list(paper_ids)},
    ).fetchall()
    enqueue_papers(conn, [r[0] for r in rows])


def papers_waiting(conn: psycopg.Connection, paper_ids: Sequence[int]) -> bool:
    """Whether any of these papers still waits to be looked up and embedded."""
    row = conn.execute(
        "SELECT EXISTS (SELECT 1 FROM index_queue WHERE paper_id = ANY(%(p)s) AND given_up_at IS NULL)",
        {"p": list(paper_ids)},
    ).fetchone()
    return bool(row and row[0])


def defer_papers(conn: psycopg.Connection, paper_ids: Sequence[int], until: datetime) -> None:
    """Papers whose sources are all held wait for them, their lease given back and no attempt counted."""
    conn.execute(
        """
        UPDATE index_queue SET not_before = GREATEST(not_before, %(until)s), lease_until = NULL, leased_by = NULL
         WHERE paper_id = ANY(%(ids)s::bigint[])
        """,
        {"ids": list(paper_ids), "until": until},
    )
