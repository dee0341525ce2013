"""Which papers' metadata is to be asked of the online sources, and what came of asking: looked up at a
moment, or failed and retried later."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

import psycopg

from socialrag.storage.papers import load_identities

# A paper (row ``p``) whose metadata is to be asked of the online sources: none yet, older than ``%(stale)s``
# (catalog papers excepted), or a catalog paper a channel shared, asked once for what catalogs lack (tldr,
# references). ``load_papers_to_fetch`` and the index queue (``storage.queue``) share this rule.
NEEDS_LOOKUP = """(p.fetched_at IS NULL
     OR (p.fetched_at < %(stale)s AND NOT p.in_catalog)
     OR (p.metadata_source = 'catalog' AND p.fetch_attempts = 0
         AND EXISTS (SELECT 1 FROM message_papers mp WHERE mp.paper_id = p.id)))"""


def load_papers_to_fetch(
    conn: psycopg.Connection, now: datetime, max_age: timedelta, limit: int = 500
) -> list[tuple[int, dict[str, str]]]:
    """Papers that lack metadata and are due a try, or whose metadata is older than ``max_age``."""
    rows = conn.execute(
        f"""
        SELECT p.id FROM papers p
         WHERE {NEEDS_LOOKUP} AND (p.next_fetch_at IS NULL OR p.next_fetch_at <= %(now)s)
         ORDER BY p.fetched_at NULLS FIRST, p.id
         LIMIT %(limit)s
        """,
        {"now": now, "stale": now - max_age, "limit": limit},
    ).fetchall()
    ids = [r[0] for r in rows]
    identities = load_identities(conn, ids)
    return [(pid, identities.get(pid, {})) for pid in ids]


def record_fetch_failure(conn: psycopg.Connection, paper_ids: Sequence[int], retry_at: datetime) -> None:
    """Metadata could not be had for these papers: count the try and schedule the next one."""
    conn.execute(
        """
        UPDATE papers SET fetch_attempts = fetch_attempts + 1, next_fetch_at = %(retry)s
         WHERE id = ANY(%(ids)s::bigint[])
        """,
        {"ids": list(paper_ids), "retry": retry_at},
    )


def load_existing(conn: psycopg.Connection, paper_ids: Sequence[int]) -> list[int]:
    """Which of these paper ids still exist (a merge may have folded some into another row)."""
    rows = conn.execute("SELECT id FROM papers WHERE id = ANY(%(ids)s::bigint[]) ORDER BY id", {"ids": list(paper_ids)})
    return [r[0] for r in rows]


def mark_fetched(conn: psycopg.Connection, paper_ids: Sequence[int], at: datetime) -> None:
    """A source answered for these papers just now (even with what was stored already): fresh until
    ``PAPERPING_METADATA_MAX_AGE_DAYS`` have passed."""
    conn.execute(
        "UPDATE papers SET fetched_at = %(at)s, next_fetch_at = NULL WHERE id = ANY(%(ids)s::bigint[])",
        {"ids": list(paper_ids), "at": at},
    )
