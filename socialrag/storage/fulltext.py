"""Queries of papers' full text (``paper_fulltexts``, ``paper_passages``): public data kept with the paper and
gone with it; which channel may read a passage out is the caller's rule (the channel's own papers)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import psycopg


@dataclass(frozen=True)
class FullTextState:
    status: str  # read, none, unreadable
    kind: str | None
    source_url: str | None
    licence: str | None
    note: str | None
    read_at: datetime


@dataclass(frozen=True)
class StoredPassage:
    paper_id: int
    n: int
    section: str
    text: str


def save_fulltext(
    conn: psycopg.Connection,
    paper_id: int,
    *,
    status: str,
    kind: str | None = None,
    source_url: str | None = None,
    licence: str | None = None,
    note: str | None = None,
    passages: Sequence[tuple[str, str]] = (),
) -> None:
    """What was read of a paper (or why nothing was), with its passages (section, text) in order, replacing any
    earlier reading of it in one transaction."""
    with conn.transaction():
        conn.execute(
            """
            INSERT INTO paper_fulltexts (paper_id, status, kind, source_url, licence, note, read_at)
            VALUES (%(p)s, %(s)s, %(k)s, %(u)s, %(l)s, %(n)s, now())
            ON CONFLICT (paper_id) DO UPDATE
               SET status = EXCLUDED.status, kind = EXCLUDED.kind, source_url = EXCLUDED.source_url,
                   licence = EXCLUDED.licence, note = EXCLUDED.note, read_at = EXCLUDED.read_at
            """,
            {"p": paper_id, "s": status, "k": kind, "u": source_url, "l": licence, "n": note},
        )
        conn.execute("DELETE FROM paper_passages WHERE paper_id = %(p)s", {"p": paper_id})
        if passages:
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO paper_passages (paper_id, n, section, text) VALUES (%s, %s, %s, %s)",
                    [(paper_id, n, section, text) for n, (section, text) in enumerate(passages)],
                )


def load_fulltext_state(conn: psycopg.Connection, paper_id: int) -> FullTextState | None:
    row = conn.execute(
        "SELECT status, kind, source_url, licence, note, read_at FROM paper_fulltexts WHERE paper_id = %(p)s",
        {"p": paper_id},
    ).fetchone()
    return FullTextState(*row) if row else None


def load_passages(conn: psycopg.Connection, paper_id: int) -> list[StoredPassage]:
    rows = conn.execute(
        "SELECT paper_id, n, section, text FROM paper_passages WHERE paper_id = %(p)s ORDER BY n", {"p": paper_id}
    ).fetchall()
    return [StoredPassage(*r) for r in rows]


def search_passages(
    conn: psycopg.Connection, paper_ids: Sequence[int], words: Sequence[str], most: int = 5
) -> list[tuple[StoredPassage, float]]:
    """The passages of these papers (the asking channel's own) that hold any of ``words`` (letters and digits
    only; anything else in a word is left out), best first."""
    plain = [w for w in (re.sub(r"[^a-z0-9]", "", word.lower()) for word in words) if w]
    query = " | ".join(plain)
    if not paper_ids or not query:
        return []
    rows = conn.execute(
        """
        SELECT paper_id, n, section, text, ts_rank_cd(search, q, 1) FROM paper_passages, to_tsquery('english', %(q)s) q
         WHERE paper_id = ANY(%(ids)s::bigint[]) AND search @@ q
         ORDER BY 5 DESC, paper_id, n LIMIT %(most)s
        """,
        {"ids": list(paper_ids), "q": query, "most": most},
    ).fetchall()
    return [(StoredPassage(r[0], r[1], r[2], r[3]), float(r[4])) for r in rows]
