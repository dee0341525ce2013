"""Queries of papers' full text (``paper_fulltexts``, ``paper_passages``): public data kept with the paper and
gone with it; which channel may read a passage out is the caller's rule (the channel's own papers)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
import psycopg

from socialrag.storage.context_rows import id_array

RETRY_AFTER = timedelta(days=30)  # a paper with no full text (none, unreadable) is looked for again after this


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
    retry_at: datetime | None = None,
) -> None:
    """What was read of a paper (or why nothing was), with its passages (section, text) in order, replacing any
    earlier reading of it (and its passages' vectors) in one transaction. ``retry_at``: when a paper with no full
    text is tried again (None: ``RETRY_AFTER`` after it was read)."""
    with conn.transaction():
        conn.execute(
            """
            INSERT INTO paper_fulltexts (paper_id, status, kind, source_url, licence, note, read_at, retry_at)
            VALUES (%(p)s, %(s)s, %(k)s, %(u)s, %(l)s, %(n)s, now(), %(r)s)
            ON CONFLICT (paper_id) DO UPDATE
               SET status = EXCLUDED.status, kind = EXCLUDED.kind, source_url = EXCLUDED.source_url,
                   licence = EXCLUDED.licence, note = EXCLUDED.note, read_at = EXCLUDED.read_at,
                   retry_at = EXCLUDED.retry_at
            """,
            {"p": paper_id, "s": status, "k": kind, "u": source_url, "l": licence, "n": note, "r": retry_at},
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


# The papers some channel that reads full text has (its workspace did not turn it off either): shared there or
# posted by PaperPing since ``since``, or asked about since then (a reply in the thread of a message that has it).
_WANTED = """
WITH reading AS (
    SELECT c.team_id, c.channel_id FROM channels c
      JOIN teams t ON t.team_id = c.team_id
      LEFT JOIN channel_settings s ON s.team_id = c.team_id AND s.channel_id = c.channel_id
     WHERE t.fulltext AND COALESCE(s.fulltext, true)
), wanted AS (
    SELECT mp.paper_id, m.posted_at AS at FROM message_papers mp
      JOIN reading r ON r.team_id = mp.team_id AND r.channel_id = mp.channel_id
      JOIN messages m ON m.id = mp.message_id
     WHERE m.posted_at >= %(since)s
        OR EXISTS (SELECT 1 FROM messages q
                    WHERE q.team_id = m.team_id AND q.channel_id = m.channel_id AND q.thread_ts = m.ts
                      AND q.ts <> m.ts AND q.posted_at >= %(since)s)
    UNION ALL
    SELECT p.paper_id, p.posted_at FROM recommendations p
      JOIN reading r ON r.team_id = p.team_id AND r.channel_id = p.channel_id
     WHERE p.status = 'posted' AND p.posted_at >= %(since)s AND p.paper_id IS NOT NULL
)"""


def claim_fulltext_work(
    conn: psycopg.Connection, worker_id: str, now: datetime, until: datetime, since: datetime, most: int
) -> list[int]:
    """Up to ``most`` papers whose full text is due (never looked for, or none found and its retry time come), that
    no other process is reading: claimed by ``worker_id`` until ``until``, never read first, newest first. Two
    processes claiming at once get different papers (the claim row is the lock)."""
    rows = conn.execute(
        _WANTED
        + """
        , due AS (
            SELECT w.paper_id, max(w.at) AS at, bool_or(f.paper_id IS NULL) AS never FROM wanted w
              LEFT JOIN paper_fulltexts f ON f.paper_id = w.paper_id
              LEFT JOIN fulltext_claims c ON c.paper_id = w.paper_id
             WHERE (f.paper_id IS NULL
                    OR (f.status <> 'read' AND COALESCE(f.retry_at, f.read_at + %(again)s) <= %(now)s))
               AND (c.paper_id IS NULL OR c.claimed_until < %(now)s)
             GROUP BY w.paper_id
             ORDER BY 3 DESC, 2 DESC, 1 LIMIT %(most)s
        )
        INSERT INTO fulltext_claims (paper_id, worker_id, claimed_until)
        SELECT paper_id, %(w)s, %(until)s FROM due
        ON CONFLICT (paper_id) DO UPDATE SET worker_id = EXCLUDED.worker_id, claimed_until = EXCLUDED.claimed_until
         WHERE fulltext_claims.claimed_until < %(now)s
        RETURNING paper_id
        """,
        {"since": since, "now": now, "until": until, "w": worker_id, "most": most, "again": RETRY_AFTER},
    ).fetchall()
    return [r[0] for r in rows]


def claim_fulltext_paper(
    conn: psycopg.Connection, paper_id: int, worker_id: str, now: datetime, until: datetime
) -> bool:
    """Claim one paper to read at once (a post about to go out), unless another process is reading it now."""
    row = conn.execute(
        """
        INSERT INTO fulltext_claims (paper_id, worker_id, claimed_until) VALUES (%(p)s, %(w)s, %(until)s)
        ON CONFLICT (paper_id) DO UPDATE SET worker_id = EXCLUDED.worker_id, claimed_until = EXCLUDED.claimed_until
         WHERE fulltext_claims.claimed_until < %(now)s
        RETURNING paper_id
        """,
        {"p": paper_id, "w": worker_id, "now": now, "until": until},
    ).fetchone()
    return row is not None


def release_fulltext_claim(conn: psycopg.Connection, paper_id: int, worker_id: str) -> None:
    conn.execute(
        "DELETE FROM fulltext_claims WHERE paper_id = %(p)s AND worker_id = %(w)s", {"p": paper_id, "w": worker_id}
    )


def load_open_access(conn: psycopg.Connection, paper_id: int) -> tuple[str | None, str | None]:
    """The open-access PDF a source reported for the paper (``papers.oa_pdf_url``) and its licence."""
    row = conn.execute("SELECT oa_pdf_url, oa_licence FROM papers WHERE id = %(p)s", {"p": paper_id}).fetchone()
    return (row[0], row[1]) if row else (None, None)


def record_open_access(conn: psycopg.Connection, paper_id: int, url: str, licence: str | None) -> None:
    """The open-access PDF OpenAlex gave for the paper when asked for it alone."""
    conn.execute(
        "UPDATE papers SET oa_pdf_url = %(u)s, oa_licence = COALESCE(%(l)s, oa_licence) WHERE id = %(p)s",
        {"p": paper_id, "u": url, "l": licence},
    )


@dataclass(frozen=True)
class FullTextCounts:
    """How many of a channel's papers have their full text read, none found, unreadable, or not looked for yet."""

    papers: int
    read: int
    none: int
    unreadable: int

    @property
    def waiting(self) -> int:
        return self.papers - self.read - self.none - self.unreadable


def load_fulltext_counts(conn: psycopg.Connection, team_id: str, channel_id: str) -> FullTextCounts:
    """The full text of the papers this channel shared (PaperPing's own posts included)."""
    row = conn.execute(
        """
        SELECT count(*), count(*) FILTER (WHERE f.status = 'read'), count(*) FILTER (WHERE f.status = 'none'),
               count(*) FILTER (WHERE f.status = 'unreadable')
          FROM (SELECT DISTINCT paper_id FROM message_papers WHERE team_id = %(t)s AND channel_id = %(c)s) mp
          LEFT JOIN paper_fulltexts f ON f.paper_id = mp.paper_id
        """,
        {"t": team_id, "c": channel_id},
    ).fetchone()
    return FullTextCounts(*row) if row else FullTextCounts(0, 0, 0, 0)


def load_workspace_fulltext(conn: psycopg.Connection, team_id: str) -> bool:
    """Whether the workspace reads papers' full text (its admins can turn it off)."""
    row = conn.execute("SELECT fulltext FROM teams WHERE team_id = %(t)s", {"t": team_id}).fetchone()
    return bool(row[0]) if row else True


def set_workspace_fulltext(conn: psycopg.Connection, team_id: str, on: bool) -> None:
    conn.execute("UPDATE teams SET fulltext = %(on)s WHERE team_id = %(t)s", {"t": team_id, "on": on})


def passage_index_name(model: str) -> str:
    """The name of the HNSW index of ``model``'s passage vectors (the migration made the default model's)."""
    slug = re.sub(r"[^a-z0-9]+", "_", model.lower()).strip("_")
    return f"paper_passage_vectors_hnsw_{slug}"[:63]


def ensure_passage_index(conn: psycopg.Connection, model: str, dimension: int) -> None:
    """An HNSW cosine index over this model's passage vectors, as ``embeddings.ensure_vector_index`` makes one."""
    name = passage_index_name(model)
    if conn.execute("SELECT 1 FROM pg_indexes WHERE indexname = %(n)s", {"n": name}).fetchone():
        return
    literal = model.replace("'", "''")
    conn.execute(
        f"CREATE INDEX IF NOT EXISTS {name} ON paper_passage_vectors USING hnsw "
        f"((embedding::vector({int(dimension)})) vector_cosine_ops) WHERE model = '{literal}'"
    )


def load_passages_to_embed(conn: psycopg.Connection, model: str, most: int) -> list[StoredPassage]:
    """Passages with no vector of ``model`` yet (papers just read, or a new model), a paper's together, in order;
    locked until the transaction ends, so that another process embedding at the same time takes the next ones."""
    rows = conn.execute(
        """
        SELECT p.paper_id, p.n, p.section, p.text FROM paper_passages p
         WHERE NOT EXISTS (SELECT 1 FROM paper_passage_vectors v
                            WHERE v.paper_id = p.paper_id AND v.n = p.n AND v.model = %(m)s)
         ORDER BY p.paper_id, p.n LIMIT %(most)s
           FOR UPDATE OF p SKIP LOCKED
        """,
        {"m": model, "most": most},
    ).fetchall()
    return [StoredPassage(*r) for r in rows]


def upsert_passage_vectors(conn: psycopg.Connection, model: str, rows: Sequence[tuple[int, int, np.ndarray]]) -> None:
    """(paper id, passage number, vector) of ``model``; a passage gone meanwhile (read again) is skipped."""
    with conn.cursor() as cur:
        cur.executemany(
            """
            INSERT INTO paper_passage_vectors (paper_id, n, model, embedding)
            SELECT %(p)s, %(n)s, %(m)s, %(v)s
             WHERE EXISTS (SELECT 1 FROM paper_passages WHERE paper_id = %(p)s AND n = %(n)s)
            ON CONFLICT (paper_id, n, model) DO UPDATE SET embedding = EXCLUDED.embedding, embedded_at = now()
            """,
            [{"p": pid, "n": n, "m": model, "v": vector} for pid, n, vector in rows],
        )


def load_passage_vectors(
    conn: psycopg.Connection, model: str, paper_ids: Sequence[int]
) -> dict[tuple[int, int], np.ndarray]:
    """The vectors of these papers' passages on ``model``, by (paper id, passage number)."""
    if not paper_ids:
        return {}
    rows = conn.execute(
        """
        SELECT paper_id, n, vector_send(embedding) FROM paper_passage_vectors
         WHERE model = %(m)s AND paper_id = ANY(%(ids)s::bigint[])
        """,
        {"m": model, "ids": id_array(paper_ids)},
        binary=True,
    ).fetchall()
    # pgvector's binary form: the dimension and a spare as two 16-bit integers, then big-endian float32s
    return {(int(r[0]), int(r[1])): np.frombuffer(bytes(r[2]), dtype=">f4")[1:].astype(np.float32) for r in rows}
