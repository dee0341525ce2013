"""Citations between papers: the sentences with which a paper cites another (``paper_references``), the papers
citing a shared paper (``paper_citations``), and the links between a candidate and a channel's papers that h5
quotes."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import psycopg


def load_citations_lacking_contexts(conn: psycopg.Connection, limit: int = 200) -> list[tuple[int, str]]:
    """(citing paper id, its Semantic Scholar id) for shared papers citing a paper shared in the same
    channel, whose citing sentences have not been asked for yet."""
    rows = conn.execute(
        """
        SELECT DISTINCT r.citing_paper_id, s2.value
          FROM paper_references r
          JOIN message_papers a ON a.paper_id = r.citing_paper_id
          JOIN paper_ids i ON (i.scheme, i.value) = (r.cited_scheme, r.cited_value)
          JOIN message_papers b ON b.paper_id = i.paper_id AND (b.team_id, b.channel_id) = (a.team_id, a.channel_id)
          JOIN paper_ids s2 ON s2.paper_id = r.citing_paper_id AND s2.scheme = 's2'
         WHERE r.contexts IS NULL AND i.paper_id <> r.citing_paper_id
         LIMIT %(limit)s
        """,
        {"limit": limit},
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


def record_reference_contexts(conn: psycopg.Connection, citing_id: int, contexts: dict[str, tuple[str, ...]]) -> int:
    """Store citing sentences; references asked for but without sentences get an empty list (asked)."""
    keys = list(contexts)
    cur = conn.execute(
        """
        UPDATE paper_references r
           SET contexts = COALESCE(
                 (SELECT string_to_array(c.joined, E'\\x1f') FROM unnest(%(k)s::text[], %(c)s::text[]) AS c(key, joined)
                   WHERE c.key = r.cited_scheme || ':' || r.cited_value), '{}'::text[])
         WHERE r.citing_paper_id = %(id)s AND r.contexts IS NULL
        """,
        {"id": citing_id, "k": keys, "c": ["\x1f".join(contexts[k]) for k in keys]},
    )
    return cur.rowcount


def load_papers_lacking_citations(
    conn: psycopg.Connection, stale_before: datetime, limit: int = 100
) -> list[tuple[int, str, int | None]]:
    """(paper id, Semantic Scholar id, citation count when it is the paper's popularity) of papers channels
    shared whose citing papers are unknown or stale."""
    rows = conn.execute(
        """
        SELECT p.id, s2.value,
               CASE WHEN p.popularity IS NULL OR p.popularity = p.citation_count THEN p.citation_count END
          FROM papers p
          JOIN paper_ids s2 ON s2.paper_id = p.id AND s2.scheme = 's2'
         WHERE (p.citations_fetched_at IS NULL OR p.citations_fetched_at < %(stale)s)
           AND EXISTS (SELECT 1 FROM message_papers mp WHERE mp.paper_id = p.id)
         ORDER BY p.citations_fetched_at NULLS FIRST, p.id
         LIMIT %(limit)s
        """,
        {"stale": stale_before, "limit": limit},
    ).fetchall()
    return [(r[0], r[1], r[2]) for r in rows]


def record_citations(
    conn: psycopg.Connection, paper_id: int, citations: Sequence[tuple[str, str, str | None, int | None, Sequence[str]]]
) -> None:
    """Replace the citing papers of ``paper_id``: (scheme, value, title, year, contexts) per identity."""
    conn.execute("DELETE FROM paper_citations WHERE cited_paper_id = %(id)s", {"id": paper_id})
    if citations:
        conn.execute(
            """
            INSERT INTO paper_citations
                   (cited_paper_id, citing_scheme, citing_value, citing_title, citing_year, contexts)
            SELECT %(id)s, s, v, t, y, CASE WHEN c = '' THEN NULL ELSE string_to_array(c, E'\\x1f') END
              FROM unnest(%(s)s::text[], %(v)s::text[], %(t)s::text[], %(y)s::int[], %(c)s::text[]) AS x(s, v, t, y, c)
            ON CONFLICT DO NOTHING
            """,
            {
                "id": paper_id,
                "s": [c[0] for c in citations],
                "v": [c[1] for c in citations],
                "t": [c[2] for c in citations],
                "y": [c[3] for c in citations],
                "c": ["\x1f".join(c[4]) for c in citations],
            },
        )
    mark_citations_fetched(conn, paper_id)


def mark_citations_fetched(conn: psycopg.Connection, paper_id: int) -> None:
    """Note that ``paper_id``'s citing papers were asked for now, its stored ones kept (an answer that could not
    be stored waits for the next turn, behind the other papers)."""
    conn.execute("UPDATE papers SET citations_fetched_at = now() WHERE id = %(id)s", {"id": paper_id})


def load_citation_links(
    conn: psycopg.Connection, candidate_id: int, paper_ids: Sequence[int]
) -> list[tuple[int, int, list[str] | None]]:
    """(citing paper, cited paper, citing sentences) between a candidate and these papers, either way."""
    rows = conn.execute(
        """
        SELECT r.citing_paper_id, i.paper_id, r.contexts FROM paper_references r
          JOIN paper_ids i ON (i.scheme, i.value) = (r.cited_scheme, r.cited_value)
         WHERE (r.citing_paper_id = %(c)s AND i.paper_id = ANY(%(ch)s::bigint[]))
            OR (r.citing_paper_id = ANY(%(ch)s::bigint[]) AND i.paper_id = %(c)s)
        UNION ALL
        SELECT i.paper_id, pc.cited_paper_id, pc.contexts FROM paper_citations pc
          JOIN paper_ids i ON (i.scheme, i.value) = (pc.citing_scheme, pc.citing_value)
         WHERE i.paper_id = %(c)s AND pc.cited_paper_id = ANY(%(ch)s::bigint[])
        """,
        {"c": candidate_id, "ch": list(paper_ids)},
    ).fetchall()
    return [(r[0], r[1], r[2]) for r in rows]


def load_authored_papers(conn: psycopg.Connection, author_ids: Sequence[int]) -> list[tuple[int, int, list[str]]]:
    """(author, paper, affiliations on that paper) of every paper by these authors."""
    rows = conn.execute(
        "SELECT author_id, paper_id, affiliations FROM paper_authors WHERE author_id = ANY(%(a)s::bigint[])",
        {"a": list(author_ids)},
    ).fetchall()
    return [(r[0], r[1], list(r[2] or ())) for r in rows]
