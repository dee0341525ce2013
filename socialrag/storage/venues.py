"""Venues as the knowledge base knows them, and the papers of one venue series in one year (the conference
planner's catalog half), as one channel may see them: a paper known only because another channel shared it (a
private channel, another workspace) is that channel's, never another's planner row or venue name."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg

from socialrag.storage.visibility import VISIBLE

MAX_VENUES = 20000  # venue names read to match what a member typed
MAX_PAPERS = 5000  # papers of one venue and year


def load_venues(conn: psycopg.Connection, team_id: str, channel_id: str) -> list[tuple[int, str, str]]:
    """(id, display name, series key) of the venues of the papers this channel may see."""
    rows = conn.execute(
        f"""
        SELECT v.id, v.name, v.normalized_name FROM venues v
         WHERE EXISTS (SELECT 1 FROM papers p WHERE p.venue_id = v.id AND {VISIBLE})
         ORDER BY v.id LIMIT %(n)s
        """,
        {"n": MAX_VENUES, "team": team_id, "channel": channel_id},
    ).fetchall()
    return [(int(r[0]), str(r[1]), str(r[2])) for r in rows]


def load_venue_papers(
    conn: psycopg.Connection, venue_ids: Sequence[int], year: int, team_id: str, channel_id: str
) -> list[int]:
    """The papers with a title of these venues in ``year`` (by their year, or their publication date's) that this
    channel may see."""
    rows = conn.execute(
        f"""
        SELECT p.id FROM papers p
         WHERE p.venue_id = ANY(%(v)s::bigint[]) AND p.title IS NOT NULL
           AND COALESCE(p.year, extract(year FROM p.publication_date)::int) = %(y)s
           AND {VISIBLE}
         ORDER BY p.id LIMIT %(n)s
        """,
        {"v": list(venue_ids), "y": year, "n": MAX_PAPERS, "team": team_id, "channel": channel_id},
    ).fetchall()
    return [int(r[0]) for r in rows]
