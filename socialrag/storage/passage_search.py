"""Reading papers' passages back for answers (a thread's question, the group's memory, a post's section line): the
passages of the papers asked about closest to a question's meaning (``fulltext.search_passages`` finds them by
their words), how many passages those papers have, which of them have any, and where a paper's contribution
sentences are. Every query takes the paper ids the caller may read out (the asking
channel's own papers); nothing here widens that scope."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import psycopg

from socialrag.storage.fulltext import StoredPassage

# the section headings a paper's contribution sentences stand under, and its conclusion's
GIST_SECTIONS = r"(^|[^a-z])(introduction|background|conclusions?|concluding remarks|summary)([^a-z]|$)"


def count_passages(conn: psycopg.Connection, paper_ids: Sequence[int]) -> int:
    """How many passages these papers have in all (what a word's rarity among them counts against)."""
    if not paper_ids:
        return 0
    row = conn.execute(
        "SELECT count(*) FROM paper_passages WHERE paper_id = ANY(%(ids)s::bigint[])", {"ids": list(paper_ids)}
    ).fetchone()
    return int(row[0]) if row else 0


def load_papers_with_passages(conn: psycopg.Connection, paper_ids: Sequence[int]) -> set[int]:
    """Which of these papers have a full text read into passages."""
    if not paper_ids:
        return set()
    rows = conn.execute(
        "SELECT DISTINCT paper_id FROM paper_passages WHERE paper_id = ANY(%(ids)s::bigint[])",
        {"ids": list(paper_ids)},
    ).fetchall()
    return {r[0] for r in rows}


def load_gist_passages(conn: psycopg.Connection, paper_id: int, most: int = 12) -> list[StoredPassage]:
    """The first passages of a paper's introduction (or background) and of its conclusion (or summary), in order:
    where its contribution sentences are."""
    rows = conn.execute(
        """
        SELECT paper_id, n, section, text FROM (
            SELECT paper_id, n, section, text,
                   row_number() OVER (PARTITION BY lower(split_part(section, ' › ', 1)) ORDER BY n) AS k
              FROM paper_passages
             WHERE paper_id = %(p)s AND lower(split_part(section, ' › ', 1)) ~ %(re)s
        ) s WHERE k <= 4 ORDER BY n LIMIT %(most)s
        """,
        {"p": paper_id, "re": GIST_SECTIONS, "most": most},
    ).fetchall()
    return [StoredPassage(*r) for r in rows]


def load_near_passages(
    conn: psycopg.Connection, model: str, paper_ids: Sequence[int], vector: np.ndarray, most: int = 50
) -> list[tuple[StoredPassage, float]]:
    """The passages of these papers whose vector (of ``model``) is closest to ``vector``, with its cosine, closest
    first."""
    if not paper_ids:
        return []
    dim = len(vector)
    rows = conn.execute(
        f"""
        SELECT p.paper_id, p.n, p.section, p.text, 1 - (v.embedding::vector({dim}) <=> %(q)s::vector({dim}))
          FROM paper_passage_vectors v JOIN paper_passages p USING (paper_id, n)
         WHERE v.model = %(m)s AND v.paper_id = ANY(%(ids)s::bigint[])
         ORDER BY 5 DESC, p.paper_id, p.n LIMIT %(most)s
        """,
        {"q": vector, "m": model, "ids": list(paper_ids), "most": most},
    ).fetchall()
    return [(StoredPassage(r[0], r[1], r[2], r[3]), float(r[4])) for r in rows]
