"""What papers are about, for the candidate sources that start from it: the arXiv categories and the other
sources' subjects (bioRxiv's and medRxiv's categories, OpenAlex's topics) of a channel's papers, and how many of
them are computer science."""

from __future__ import annotations

from collections.abc import Sequence

import psycopg

# identities of computer-science papers: arXiv, the ACL Anthology and the CS venues' own ids, and the DOI prefixes
# of the ACM, IEEE and the ACL Anthology
CS_SCHEMES = ("arxiv", "acl", "openreview", "neurips", "pmlr", "cvf", "ieee", "acm", "ijcai", "aaai", "tacl")
CS_DOI_PREFIXES = ("10.1145/", "10.1109/", "10.18653/", "10.24963/", "10.1609/")


def count_computer_science(conn: psycopg.Connection, paper_ids: Sequence[int]) -> tuple[int, int]:
    """(how many of these papers are on arXiv or at a computer-science venue, how many there are)."""
    row = conn.execute(
        """
        SELECT count(*) FILTER (WHERE EXISTS (
                   SELECT 1 FROM paper_ids i WHERE i.paper_id = p.id
                      AND (i.scheme = ANY(%(schemes)s::text[])
                           OR (i.scheme = 'doi' AND i.value LIKE ANY(%(prefixes)s::text[])))
               )), count(*)
          FROM papers p WHERE p.id = ANY(%(ids)s::bigint[])
        """,
        {"ids": list(paper_ids), "schemes": list(CS_SCHEMES), "prefixes": [p + "%" for p in CS_DOI_PREFIXES]},
    ).fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def load_subjects(conn: psycopg.Connection, paper_ids: Sequence[int], prefix: str) -> list[str]:
    """The subjects with this prefix (``biorxiv:``, ``medrxiv:``, ``openalex:``) of these papers, without the
    prefix, the most frequent first."""
    rows = conn.execute(
        """
        SELECT substr(s, %(n)s), count(*) FROM papers, unnest(subjects) AS s
         WHERE id = ANY(%(ids)s::bigint[]) AND starts_with(s, %(prefix)s) GROUP BY s ORDER BY count(*) DESC, s
        """,
        {"ids": list(paper_ids), "prefix": prefix, "n": len(prefix) + 1},
    ).fetchall()
    return [r[0] for r in rows]


def load_channel_categories(conn: psycopg.Connection, paper_ids: Sequence[int]) -> list[str]:
    """The arXiv categories of these papers, the most frequent first."""
    rows = conn.execute(
        """
        SELECT c, count(*) FROM papers, unnest(arxiv_categories) AS c
         WHERE id = ANY(%(ids)s::bigint[]) GROUP BY c ORDER BY count(*) DESC, c
        """,
        {"ids": list(paper_ids)},
    ).fetchall()
    return [r[0] for r in rows]


def load_preprints_without_subjects(conn: psycopg.Connection, paper_ids: Sequence[int], limit: int = 3) -> list[str]:
    """The bioRxiv and medRxiv DOIs (``10.1101/``) of these papers whose category is not known yet (another
    source described them first)."""
    rows = conn.execute(
        """
        SELECT i.value FROM paper_ids i JOIN papers p ON p.id = i.paper_id
         WHERE i.paper_id = ANY(%(ids)s::bigint[]) AND i.scheme = 'doi' AND i.value LIKE '10.1101/%%'
           AND p.subjects IS NULL
         ORDER BY i.paper_id DESC LIMIT %(n)s
        """,
        {"ids": list(paper_ids), "n": limit},
    ).fetchall()
    return [r[0] for r in rows]


def mark_no_subjects(conn: psycopg.Connection, dois: Sequence[str]) -> None:
    """Preprints neither server knows: their category is not asked for again."""
    conn.execute(
        """
        UPDATE papers SET subjects = '{}' WHERE subjects IS NULL
           AND id IN (SELECT paper_id FROM paper_ids WHERE scheme = 'doi' AND value = ANY(%(d)s::text[]))
        """,
        {"d": list(dois)},
    )
