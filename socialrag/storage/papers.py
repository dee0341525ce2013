"""Queries on the paper side of the knowledge base: metadata, authors, venues, references. Which stored paper a
record is, by its identities, is ``storage.identities``'s (its queries are named here too, as they always were).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import date

import psycopg

from socialrag.models import Paper
from socialrag.names import normalize_person_name, normalize_venue
from socialrag.storage.identities import ensure_papers as ensure_papers
from socialrag.storage.identities import load_identities as load_identities
from socialrag.storage.identities import load_paper_ids as load_paper_ids
from socialrag.storage.identities import resolve_paper_rows

# Which identity to prefer when a paper is asked of a source, best first.
ID_PREFERENCE = (
    "s2",
    "arxiv",
    "doi",
    "acl",
    "corpus",
    "pmid",
    "pmcid",
    "openalex",
    "pii",
    "oup",
    "openreview",
    "ieee",
    "neurips",
    "pmlr",
    "cvf",
    "acm",
)


# What PaperPing keeps of a paper's text from any source, in characters: far past any real paper's (the longest
# abstracts run to a few thousand), so that one answer of a source cannot make every later read of the paper large.
MOST_CHARS = {"title": 1_000, "abstract": 20_000, "tldr": 2_000, "venue": 500}
MOST_URL = 2_000  # a longer address is not kept (cut, it would lead nowhere)


def bounded(paper: Paper) -> Paper:
    """``paper`` with its texts cut to ``MOST_CHARS`` and an address longer than ``MOST_URL`` left out."""
    changes: dict[str, str | None] = {
        name: value[:most]
        for name, most in MOST_CHARS.items()
        if isinstance(value := getattr(paper, name), str) and len(value) > most
    }
    for name in ("url", "oa_pdf_url"):
        if len(getattr(paper, name) or "") > MOST_URL:
            changes[name] = None
    return replace(paper, **changes) if changes else paper  # type: ignore[arg-type]


def record_papers(
    conn: psycopg.Connection,
    papers: Sequence[Paper],
    *,
    in_catalog: bool = False,
    anchors: Sequence[int | None] | None = None,
) -> list[int]:
    """Store metadata for ``papers`` (from any source, ``bounded``); returns their paper ids in the same order.
    ``anchors``: for each record, the stored paper the source was asked about, if any
    (``identities.resolve_paper_rows``)."""
    if not papers:
        return []
    papers = [bounded(p) for p in papers]
    ids = resolve_paper_rows(conn, papers, anchors)
    # Two entries of one batch can turn out to be the same paper; the first one's metadata is used.
    unique = dict(reversed(list(zip(ids, papers, strict=True))))
    pids, firsts = list(unique), list(unique.values())
    _update_paper_rows(conn, pids, firsts, in_catalog)
    _replace_authors(conn, [(pid, p) for pid, p in unique.items() if p.authors])
    _add_references(conn, [(pid, p) for pid, p in unique.items() if p.references])
    _add_popularity_history(conn, [(pid, p) for pid, p in unique.items() if p.popularity_history])
    return ids


def _add_popularity_history(conn: psycopg.Connection, items: Sequence[tuple[int, Paper]]) -> None:
    """Earlier popularity readings a source gave (a reading on a date counts from that day's start, UTC)."""
    _add_readings(conn, [(pid, day, value) for pid, p in items for day, value in p.popularity_history])


def add_popularity_readings(conn: psycopg.Connection, paper_id: int, readings: Sequence[tuple[date, float]]) -> None:
    """Readings of one paper's popularity on earlier days (say, its citation count as it was)."""
    _add_readings(conn, [(paper_id, day, value) for day, value in readings])


def _add_readings(conn: psycopg.Connection, rows: Sequence[tuple[int, date, float]]) -> None:
    if not rows:
        return
    conn.execute(
        """
        INSERT INTO paper_popularity (paper_id, observed_at, value)
        SELECT p, d::timestamp AT TIME ZONE 'UTC', v
          FROM unnest(%(p)s::bigint[], %(d)s::date[], %(v)s::float8[]) AS t(p, d, v)
        ON CONFLICT (paper_id, observed_at) DO UPDATE SET value = EXCLUDED.value
        """,
        {"p": [r[0] for r in rows], "d": [r[1] for r in rows], "v": [r[2] for r in rows]},
    )


def _venue_ids(conn: psycopg.Connection, names: Sequence[str | None]) -> list[int | None]:
    normalized = {n: normalize_venue(n) for n in names if n}
    if not normalized:
        return [None] * len(names)
    pairs = list({key: display for key, display in normalized.values()}.items())
    conn.execute(
        """
        INSERT INTO venues (normalized_name, name)
        SELECT * FROM unnest(%(k)s::text[], %(d)s::text[]) ON CONFLICT (normalized_name) DO NOTHING
        """,
        {"k": [p[0] for p in pairs], "d": [p[1] for p in pairs]},
    )
    rows = conn.execute(
        "SELECT normalized_name, id FROM venues WHERE normalized_name = ANY(%(k)s::text[])",
        {"k": [p[0] for p in pairs]},
    ).fetchall()
    by_key: dict[str, int] = dict(rows)
    return [by_key[normalized[n][0]] if n else None for n in names]


# a new date replaces the stored one unless it is known less precisely (a month does not undo a day)
_FINER_DATE = """
n.pdate IS NOT NULL AND (p.publication_date IS NULL OR array_position(ARRAY['year', 'month', 'day'],
    COALESCE(n.prec, 'day')) >= array_position(ARRAY['year', 'month', 'day'], COALESCE(p.date_precision, 'day')))"""
_NEW_PRECISION = f"""
CASE WHEN {_FINER_DATE} THEN COALESCE(n.prec, 'day')
     WHEN p.publication_date IS NULL AND COALESCE(n.year, p.year) IS NOT NULL THEN 'year'
     ELSE p.date_precision END"""


def _update_paper_rows(conn: psycopg.Connection, ids: Sequence[int], papers: Sequence[Paper], in_catalog: bool) -> None:
    venue_ids = _venue_ids(conn, [p.venue for p in papers])
    conn.execute(
        f"""
        UPDATE papers AS p SET
            title = COALESCE(n.title, p.title), abstract = COALESCE(n.abstract, p.abstract),
            tldr = COALESCE(n.tldr, p.tldr), venue_id = COALESCE(n.venue_id, p.venue_id),
            year = COALESCE(n.year, p.year),
            publication_date = CASE WHEN {_FINER_DATE} THEN n.pdate ELSE p.publication_date END,
            date_precision = {_NEW_PRECISION},
            url = COALESCE(p.url, n.url), popularity = COALESCE(n.popularity, p.popularity),
            citation_count = COALESCE(n.citations, p.citation_count),
            arxiv_categories = COALESCE(c.categories, p.arxiv_categories),
            subjects = CASE WHEN n.subjects_joined IS NULL THEN p.subjects
                            ELSE ARRAY(SELECT DISTINCT unnest(COALESCE(p.subjects, ARRAY[]::text[])
                                                              || string_to_array(n.subjects_joined, ' ')))
                       END,
            in_catalog = p.in_catalog OR %(catalog)s,
            oa_pdf_url = COALESCE(n.oa_url, p.oa_pdf_url), oa_licence = COALESCE(n.oa_licence, p.oa_licence),
            metadata_source = CASE WHEN n.title IS NULL THEN p.metadata_source ELSE n.source END,
            fetched_at = CASE WHEN n.title IS NULL THEN p.fetched_at ELSE now() END,
            next_fetch_at = CASE WHEN n.title IS NULL THEN p.next_fetch_at ELSE NULL END
          FROM unnest(%(id)s::bigint[], %(title)s::text[], %(abstract)s::text[], %(tldr)s::text[],
                      %(venue)s::bigint[], %(year)s::int[], %(pdate)s::date[], %(url)s::text[],
                      %(pop)s::float8[], %(cit)s::int[], %(source)s::text[], %(cats)s::text[], %(prec)s::text[],
                      %(subjects)s::text[], %(oa_url)s::text[], %(oa_licence)s::text[])
               AS n(id, title, abstract, tldr, venue_id, year, pdate, url, popularity, citations, source, cats_joined,
                    prec, subjects_joined, oa_url, oa_licence)
          CROSS JOIN LATERAL (SELECT string_to_array(n.cats_joined, ' ') AS categories) c
         WHERE p.id = n.id
           AND (p.title, p.abstract, p.tldr, p.venue_id, p.year, p.publication_date, p.popularity,
                p.citation_count, p.in_catalog OR %(catalog)s, p.arxiv_categories, p.date_precision, p.oa_pdf_url,
                n.subjects_joined IS NOT NULL
                    AND NOT COALESCE(p.subjects, ARRAY[]::text[]) @> string_to_array(n.subjects_joined, ' '))
               IS DISTINCT FROM
               (COALESCE(n.title, p.title), COALESCE(n.abstract, p.abstract), COALESCE(n.tldr, p.tldr),
                COALESCE(n.venue_id, p.venue_id), COALESCE(n.year, p.year),
                CASE WHEN {_FINER_DATE} THEN n.pdate ELSE p.publication_date END, COALESCE(n.popularity, p.popularity),
                COALESCE(n.citations, p.citation_count), p.in_catalog, COALESCE(c.categories, p.arxiv_categories),
                {_NEW_PRECISION}, COALESCE(n.oa_url, p.oa_pdf_url), false)
        """,
        {
            "id": list(ids),
            "title": [p.title for p in papers],
            "abstract": [p.abstract for p in papers],
            "tldr": [p.tldr for p in papers],
            "venue": venue_ids,
            "year": [p.year for p in papers],
            "pdate": [p.publication_date for p in papers],
            "url": [p.url for p in papers],
            "pop": [p.popularity for p in papers],
            "cit": [p.citation_count for p in papers],
            "source": [p.source for p in papers],
            "cats": [" ".join(p.arxiv_categories) or None for p in papers],
            "prec": [p.date_precision for p in papers],
            "subjects": [" ".join(p.subjects) or None for p in papers],
            "oa_url": [p.oa_pdf_url for p in papers],
            "oa_licence": [p.oa_licence for p in papers],
            "catalog": in_catalog,
        },
    )


def _author_ids(conn: psycopg.Connection, people: Sequence[tuple[str, str | None]]) -> list[int]:
    """Author row ids for (name, s2_author_id) pairs: by S2 id when known, else by normalised name."""
    with_id = list({s2: name for name, s2 in people if s2}.items())
    if with_id:
        conn.execute(
            """
            INSERT INTO authors (s2_author_id, name, normalized_name)
            SELECT s, n, k FROM unnest(%(s)s::text[], %(n)s::text[], %(k)s::text[]) AS t(s, n, k)
            ON CONFLICT (s2_author_id) DO NOTHING
            """,
            {
                "s": [a[0] for a in with_id],
                "n": [a[1] for a in with_id],
                "k": [normalize_person_name(a[1]) for a in with_id],
            },
        )
    by_s2: dict[str, int] = (
        dict(
            conn.execute(
                "SELECT s2_author_id, id FROM authors WHERE s2_author_id = ANY(%(s)s::text[])",
                {"s": [a[0] for a in with_id]},
            ).fetchall()
        )
        if with_id
        else {}
    )
    plain = {normalize_person_name(name): name for name, s2 in people if not s2}
    by_name: dict[str, int] = {}
    if plain:
        rows = conn.execute(
            """
            SELECT DISTINCT ON (normalized_name) normalized_name, id FROM authors
             WHERE normalized_name = ANY(%(k)s::text[]) ORDER BY normalized_name, s2_author_id NULLS FIRST, id
            """,
            {"k": list(plain)},
        ).fetchall()
        by_name = dict(rows)
        new = [k for k in plain if k not in by_name]
        if new:
            created = conn.execute(
                """
                INSERT INTO authors (name, normalized_name)
                SELECT * FROM unnest(%(n)s::text[], %(k)s::text[]) RETURNING normalized_name, id
                """,
                {"n": [plain[k] for k in new], "k": new},
            ).fetchall()
            by_name.update(dict(created))
    return [by_s2[s2] if s2 else by_name[normalize_person_name(name)] for name, s2 in people]


def _replace_authors(conn: psycopg.Connection, items: Sequence[tuple[int, Paper]]) -> None:
    if not items:
        return
    people = [(a.name, a.s2_author_id) for _, p in items for a in p.authors]
    author_ids = iter(_author_ids(conn, people))
    rows = [
        (pid, pos, next(author_ids), "\x1f".join(a.affiliations)) for pid, p in items for pos, a in enumerate(p.authors)
    ]
    conn.execute("DELETE FROM paper_authors WHERE paper_id = ANY(%(ids)s::bigint[])", {"ids": [i[0] for i in items]})
    conn.execute(
        """
        INSERT INTO paper_authors (paper_id, position, author_id, affiliations)
        SELECT p, pos, a, CASE WHEN aff = '' THEN '{}'::text[] ELSE string_to_array(aff, E'\\x1f') END
          FROM unnest(%(p)s::bigint[], %(pos)s::int[], %(a)s::bigint[], %(aff)s::text[]) AS t(p, pos, a, aff)
        """,
        {
            "p": [r[0] for r in rows],
            "pos": [r[1] for r in rows],
            "a": [r[2] for r in rows],
            "aff": [r[3] for r in rows],
        },
    )


def _add_references(conn: psycopg.Connection, items: Sequence[tuple[int, Paper]]) -> None:
    rows = [
        (pid, ref.scheme, ref.value, list(p.reference_contexts.get(ref.key, ())) or None)
        for pid, p in items
        for ref in p.references
    ]
    if not rows:
        return
    # Contexts are passed as one joined string per row; unnest cannot take ragged arrays.
    conn.execute(
        """
        INSERT INTO paper_references (citing_paper_id, cited_scheme, cited_value, contexts)
        SELECT p, s, v, CASE WHEN c IS NULL THEN NULL ELSE string_to_array(c, E'\\x1f') END
          FROM unnest(%(p)s::bigint[], %(s)s::text[], %(v)s::text[], %(c)s::text[]) AS t(p, s, v, c)
        ON CONFLICT (citing_paper_id, cited_scheme, cited_value) DO UPDATE
           SET contexts = COALESCE(EXCLUDED.contexts, paper_references.contexts)
         WHERE EXCLUDED.contexts IS NOT NULL AND EXCLUDED.contexts IS DISTINCT FROM paper_references.contexts
        """,
        {
            "p": [r[0] for r in rows],
            "s": [r[1] for r in rows],
            "v": [r[2] for r in rows],
            "c": ["\x1f".join(r[3]) if r[3] else None for r in rows],
        },
    )


def best_identity(ids: dict[str, str]) -> tuple[str, str] | None:
    for scheme in ID_PREFERENCE:
        if scheme in ids:
            return scheme, ids[scheme]
    return next(iter(ids.items()), None)


def load_catalog_size(conn: psycopg.Connection) -> int:
    row = conn.execute("SELECT count(*) FROM papers WHERE in_catalog").fetchone()
    return int(row[0]) if row else 0
