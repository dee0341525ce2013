"""Paper vectors (``paper_embeddings``): what is waiting to be embedded, vectors reused by content hash, and
vectors read back for ranking. One HNSW index per embedding model keeps the nearest-neighbour search fast."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np
import psycopg


def as_array(value: Any) -> np.ndarray:
    """A stored vector (pgvector's ``Vector`` or a sequence) as float32 numpy."""
    if hasattr(value, "to_numpy"):
        value = value.to_numpy()
    return np.asarray(value, dtype=np.float32)


def index_name(model: str) -> str:
    """The name of the HNSW index for ``model`` (the migration created the default model's)."""
    slug = re.sub(r"[^a-z0-9]+", "_", model.lower()).strip("_")
    return f"paper_embeddings_hnsw_{slug}"[:63]


def ensure_vector_index(conn: psycopg.Connection, model: str, dimension: int) -> None:
    """An HNSW cosine index over this model's vectors, so kNN search stays fast for any model."""
    name = index_name(model)
    exists = conn.execute("SELECT 1 FROM pg_indexes WHERE indexname = %(n)s", {"n": name}).fetchone()
    if exists:
        return
    literal = model.replace("'", "''")
    conn.execute(
        f"CREATE INDEX IF NOT EXISTS {name} ON paper_embeddings USING hnsw "
        f"((embedding::vector({int(dimension)})) vector_cosine_ops) WHERE model = '{literal}'"
    )


# The text each paper is embedded from, its hash, and the hash already stored for this model.
_PENDING_SQL = r"""
WITH wanted AS (
    SELECT p.id,
           CASE WHEN p.title IS NOT NULL THEN p.title || E'\n' || COALESCE(p.abstract, '')
                ELSE (SELECT string_agg(
                          COALESCE(mp.label || E'\n', '') ||
                          regexp_replace(m.text, '<(https?://[^|>]*)\|?([^>]*)>', '\2', 'g'),
                          E'\n' ORDER BY m.posted_at, m.id)
                        FROM message_papers mp JOIN messages m ON m.id = mp.message_id
                       WHERE mp.paper_id = p.id)
           END AS text
      FROM papers p
     WHERE (%(ids)s::bigint[] IS NULL AND (p.in_catalog
            OR EXISTS (SELECT 1 FROM message_papers mp WHERE mp.paper_id = p.id)))
        OR p.id = ANY(%(ids)s::bigint[])
)
SELECT w.id, w.text, md5(w.text) AS hash, e.paper_id IS NOT NULL AS stale
  FROM wanted w
  LEFT JOIN paper_embeddings e ON e.paper_id = w.id AND e.model = %(model)s
 WHERE w.text IS NOT NULL AND btrim(w.text) <> '' AND e.content_hash IS DISTINCT FROM md5(w.text)
 ORDER BY w.id
"""


def load_pending(
    conn: psycopg.Connection, model: str, paper_ids: list[int] | None = None
) -> list[tuple[int, str, str, bool]]:
    """(paper id, text, hash, has a stale vector) of papers whose vector for ``model`` is missing or stale:
    the catalog's and the shared ones, or just ``paper_ids``."""
    rows = conn.execute(_PENDING_SQL, {"model": model, "ids": paper_ids}).fetchall()
    return [(r[0], r[1], r[2], r[3]) for r in rows]


def count_current(conn: psycopg.Connection, model: str) -> int:
    row = conn.execute("SELECT count(*) FROM paper_embeddings WHERE model = %(m)s", {"m": model}).fetchone()
    return int(row[0]) if row else 0


def load_cached_vectors(conn: psycopg.Connection, model: str, hashes: Sequence[str]) -> dict[str, np.ndarray]:
    """Vectors already computed for the same text (under another paper id) for this model."""
    rows = conn.execute(
        """
        SELECT DISTINCT ON (content_hash) content_hash, embedding FROM paper_embeddings
         WHERE model = %(m)s AND content_hash = ANY(%(h)s::text[])
        """,
        {"m": model, "h": list(hashes)},
    ).fetchall()
    return {r[0]: as_array(r[1]) for r in rows}


def upsert_embeddings(conn: psycopg.Connection, model: str, rows: Sequence[tuple[int, str, np.ndarray]]) -> None:
    with conn.cursor() as cur:
        cur.executemany(
            """
            INSERT INTO paper_embeddings (paper_id, model, content_hash, embedding)
            VALUES (%s, %s, %s, %s)
            ON CONFLICT (paper_id, model) DO UPDATE
               SET content_hash = EXCLUDED.content_hash, embedding = EXCLUDED.embedding, embedded_at = now()
            """,
            [(pid, model, h, vec) for pid, h, vec in rows],
        )


def load_vectors(conn: psycopg.Connection, model: str, paper_ids: list[int]) -> dict[int, np.ndarray]:
    if not paper_ids:
        return {}
    rows = conn.execute(
        "SELECT paper_id, embedding FROM paper_embeddings WHERE model = %(m)s AND paper_id = ANY(%(ids)s::bigint[])",
        {"m": model, "ids": paper_ids},
        binary=True,  # vectors parse much faster in binary
    ).fetchall()
    return {r[0]: as_array(r[1]) for r in rows}


def load_embedded_ids(conn: psycopg.Connection, model: str) -> list[int]:
    """Every paper with a vector of this model."""
    return [r[0] for r in conn.execute("SELECT paper_id FROM paper_embeddings WHERE model = %s", (model,)).fetchall()]


def load_catalog_neighbours(
    conn: psycopg.Connection,
    model: str,
    vectors: Sequence[np.ndarray],
    *,
    before: datetime,
    after: datetime | None,
    k: int,
) -> list[int]:
    """Catalog papers published in ``[after, before)`` nearest to each vector (HNSW, cosine), the nearest of
    the first vector first; a paper known only by its year counts from January 1 of that year."""
    if not vectors:
        return []
    dim = len(vectors[0])
    conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
    conn.execute("SET LOCAL hnsw.ef_search = 100")
    found: dict[int, None] = {}
    for vec in vectors:
        rows = conn.execute(
            f"""
            SELECT e.paper_id FROM paper_embeddings e JOIN papers p ON p.id = e.paper_id
             WHERE e.model = %(model)s AND p.in_catalog
               AND COALESCE(p.publication_date, make_date(p.year, 1, 1)) < %(as_of)s
               AND (%(after)s::timestamptz IS NULL
                    OR COALESCE(p.publication_date, make_date(p.year, 1, 1)) >= %(after)s)
             ORDER BY e.embedding::vector({dim}) <=> %(q)s::vector({dim})
             LIMIT %(k)s
            """,
            {"model": model, "as_of": before, "after": after, "q": vec, "k": k},
        ).fetchall()
        found.update(dict.fromkeys(r[0] for r in rows))
    return list(found)


def forget_text_vectors(conn: psycopg.Connection, where: str, params: Mapping[str, object]) -> list[int]:
    """Papers linked by the messages ``where`` selects (a fixed condition on ``messages``, never input),
    with the vectors made from message text (papers without a title) deleted. Returns those papers."""
    ids = [
        r[0]
        for r in conn.execute(
            f"SELECT DISTINCT mp.paper_id FROM message_papers mp JOIN messages m ON m.id = mp.message_id WHERE {where}",
            params,
        ).fetchall()
    ]
    conn.execute(
        """
        DELETE FROM paper_embeddings e USING papers p
         WHERE e.paper_id = p.id AND p.id = ANY(%(ids)s::bigint[]) AND p.title IS NULL
        """,
        {"ids": ids},
    )
    return ids
