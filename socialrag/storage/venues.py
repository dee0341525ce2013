"""Venues as the knowledge base knows them, and the papers of one venue series in one year (the conference
planner's catalog half)."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg

MAX_VENUES = 20000  # venue names read to match what a member typed
MAX_PAPERS = 5000  # papers of one venue and year


def load_venues(conn: psycopg.Connection) -> list[tuple[int, str, str]]:
    """(id, display name, series key) of the venues of known papers."""
    rows = conn.execute(
        """
        SELECT v.id, v.name, v.normalized_name FROM venues v
         WHERE EXISTS (SELECT 1 FROM papers p WHERE p.venue_id = v.id)
         ORDER BY v.id LIMIT %(n)s
        """,
        {"n": MAX_VENUES},
    ).fetchall()
    return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]


def load_venue_papers(conn: psycopg.Connection, venue_ids: Sequence[int], year: int) -> list[int]:
    """The papers with a title of these venues in ``year`` (by their year, or their publication date's)."""
    rows = conn.execute(
        """
        SELECT id FROM papers
         WHERE venue_id = ANY(%(v)s::bigint[]) AND title IS NOT NULL
           AND COALESCE(year, extract(year FROM publication_date)::int) = %(y)s
         ORDER BY id LIMIT %(n)s
        """,
        {"v": list(venue_ids), "y": year, "n": MAX_PAPERS},
    ).fetchall()
    return [int(r[0]) for r in rows]
