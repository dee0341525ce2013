"""Paper vectors (``paper_embeddings``, from public metadata) and channels' own vectors of papers no source
knows (``channel_text_embeddings``, from that channel's words): what is waiting to be embedded, vectors reused
by content hash, and vectors read back for ranking. One HNSW index per embedding model keeps the
nearest-neighbour search fast."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import psycopg

from socialrag.storage.context_rows import DIGEST_ITEMS, id_array


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


# A paper's public text (title and abstract), its hash, and whether a vector of this model is stored for it.
_PENDING_SQL = r"""
WITH wanted AS (
    SELECT p.id, p.title || E'\n' || COALESCE(p.abstract, '') AS text
      FROM papers p
     WHERE p.title IS NOT NULL
       AND ((%(ids)s::bigint[] IS NULL AND (p.in_catalog
             OR EXISTS (SELECT 1 FROM message_papers mp WHERE mp.paper_id = p.id)))
            OR p.id = ANY(%(ids)s::bigint[]))
)
SELECT w.id, w.text, md5(w.text) AS hash, e.paper_id IS NOT NULL AS stale
  FROM wanted w
  LEFT JOIN paper_embeddings e ON e.paper_id = w.id AND e.model = %(model)s
 WHERE btrim(w.text) <> '' AND e.content_hash IS DISTINCT FROM md5(w.text)
 ORDER BY w.id
"""

# A paper without a title, in each channel that shared it: the labels and texts of that channel's messages
# (links reduced to their labels), never another channel's. Unless ``every``, only the pairs with no vector yet
# or whose words changed since (``mark_channel_texts_changed``) are read, so that the frequent call stays cheap.
_CHANNEL_PENDING_SQL = r"""
WITH pairs AS (
    SELECT DISTINCT mp.team_id, mp.channel_id, mp.paper_id
      FROM message_papers mp JOIN papers p ON p.id = mp.paper_id
     WHERE p.title IS NULL AND (%(ids)s::bigint[] IS NULL OR mp.paper_id = ANY(%(ids)s::bigint[]))
       AND (%(every)s OR NOT EXISTS (
                SELECT 1 FROM channel_text_embeddings e
                 WHERE e.team_id = mp.team_id AND e.channel_id = mp.channel_id AND e.paper_id = mp.paper_id
                   AND e.model = %(model)s AND e.content_hash <> ''))
), wanted AS (
    SELECT mp.team_id, mp.channel_id, mp.paper_id,
           string_agg(COALESCE(mp.label || E'\n', '') ||
                      regexp_replace(m.text, '<(https?://[^|>]*)\|?([^>]*)>', '\2', 'g'),
                      E'\n' ORDER BY m.posted_at, m.id) AS text
      FROM pairs JOIN message_papers mp USING (team_id, channel_id, paper_id)
      JOIN messages m ON m.id = mp.message_id
     GROUP BY mp.team_id, mp.channel_id, mp.paper_id
)
SELECT w.team_id, w.channel_id, w.paper_id, w.text, md5(w.text), e.paper_id IS NOT NULL AS stale
  FROM wanted w
  LEFT JOIN channel_text_embeddings e
    ON e.team_id = w.team_id AND e.channel_id = w.channel_id AND e.paper_id = w.paper_id AND e.model = %(model)s
 WHERE btrim(w.text) <> '' AND e.content_hash IS DISTINCT FROM md5(w.text)
 ORDER BY w.paper_id, w.team_id, w.channel_id
"""


@dataclass(frozen=True)
class ChannelText:
    """The words one channel wrote about a paper no source knows, to be embedded for that channel alone."""

    team_id: str
    channel_id: str
    paper_id: int
    text: str
    content_hash: str
    stale: bool  # a vector of older words is stored


def load_pending(
    conn: psycopg.Connection, model: str, paper_ids: list[int] | None = None
) -> list[tuple[int, str, str, bool]]:
    """(paper id, text, hash, has a stale vector) of papers with a title whose vector for ``model`` is missing
    or stale: the catalog's and the shared ones, or just ``paper_ids``."""
    rows = conn.execute(_PENDING_SQL, {"model": model, "ids": paper_ids}).fetchall()
    return [(r[0], r[1], r[2], r[3]) for r in rows]


def load_channel_pending(
    conn: psycopg.Connection, model: str, paper_ids: list[int] | None = None, *, every: bool = True
) -> list[ChannelText]:
    """Papers without a title whose vector in a channel that shared them is missing or stale (all, or just
    ``paper_ids``), one row per channel. ``every=False`` looks only at the vectors missing or marked changed
    (quick); ``every=True`` compares every stored vector's text as well."""
    rows = conn.execute(_CHANNEL_PENDING_SQL, {"model": model, "ids": paper_ids, "every": every}).fetchall()
    return [ChannelText(*r) for r in rows]


def mark_channel_texts_changed(conn: psycopg.Connection, links: Sequence[tuple[str, str, int]]) -> None:
    """New or edited words about these papers in these channels (team id, channel id, paper id): their
    channel vectors, if any, are made again at the next quick pass. The vector in force stays readable."""
    if not links:
        return
    teams, channels, papers = (list(column) for column in zip(*links, strict=True))
    conn.execute(
        """
        UPDATE channel_text_embeddings x SET content_hash = ''
          FROM unnest(%(t)s::text[], %(c)s::text[], %(p)s::bigint[]) AS l(team_id, channel_id, paper_id)
         WHERE x.team_id = l.team_id AND x.channel_id = l.channel_id AND x.paper_id = l.paper_id
           AND x.content_hash <> ''
        """,
        {"t": teams, "c": channels, "p": papers},
    )


def upsert_channel_vectors(
    conn: psycopg.Connection, model: str, rows: Sequence[tuple[ChannelText, np.ndarray]]
) -> None:
    with conn.cursor() as cur:
        cur.executemany(
            """
            INSERT INTO channel_text_embeddings (team_id, channel_id, paper_id, model, content_hash, embedding)
            VALUES (%s, %s, %s, %s, %s, %s)
            ON CONFLICT (team_id, channel_id, paper_id, model) DO UPDATE
               SET content_hash = EXCLUDED.content_hash, embedding = EXCLUDED.embedding, embedded_at = now()
            """,
            [(t.team_id, t.channel_id, t.paper_id, model, t.content_hash, vec) for t, vec in rows],
        )


def prune_channel_vectors(conn: psycopg.Connection, paper_ids: list[int] | None = None) -> int:
    """Channel vectors no longer needed: the paper has a title by now, or the channel no longer shares it.
    Returns how many went."""
    cur = conn.execute(
        """
        DELETE FROM channel_text_embeddings x USING papers p
         WHERE p.id = x.paper_id AND (%(ids)s::bigint[] IS NULL OR x.paper_id = ANY(%(ids)s::bigint[]))
           AND (p.title IS NOT NULL
                OR NOT EXISTS (SELECT 1 FROM message_papers mp WHERE mp.paper_id = x.paper_id
                                  AND mp.team_id = x.team_id AND mp.channel_id = x.channel_id))
        """,
        {"ids": paper_ids},
    )
    return cur.rowcount


def count_current(conn: psycopg.Connection, model: str) -> int:
    """Vectors of this model: papers' and channels' own."""
    row = conn.execute(
        """
        SELECT (SELECT count(*) FROM paper_embeddings WHERE model = %(m)s)
             + (SELECT count(*) FROM channel_text_embeddings WHERE model = %(m)s)
        """,
        {"m": model},
    ).fetchone()
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


def load_vectors(
    conn: psycopg.Connection, model: str, paper_ids: list[int], *, channel: tuple[str, str] | None = None
) -> dict[int, np.ndarray]:
    """The vectors of these papers; with ``channel`` (team id, channel id), a paper without a title has the
    vector made from that channel's own messages, and no other channel's."""
    if not paper_ids:
        return {}
    out: dict[int, np.ndarray] = {}
    if channel is not None:
        rows = conn.execute(
            """
            SELECT paper_id, vector_send(embedding) FROM channel_text_embeddings
             WHERE model = %(m)s AND team_id = %(t)s AND channel_id = %(c)s AND paper_id = ANY(%(ids)s::bigint[])
            """,
            {"m": model, "t": channel[0], "c": channel[1], "ids": id_array(paper_ids)},
            binary=True,
        ).fetchall()
        out.update(_decoded(rows))
    rows = conn.execute(
        """
        SELECT paper_id, vector_send(embedding) FROM paper_embeddings
         WHERE model = %(m)s AND paper_id = ANY(%(ids)s::bigint[])
        """,
        {"m": model, "ids": id_array(paper_ids)},
        binary=True,
    ).fetchall()
    out.update(_decoded(rows))
    return out


def _decoded(rows: Sequence[tuple[int, bytes]]) -> dict[int, np.ndarray]:
    """Vectors in pgvector's binary form (``vector_send``: the dimension and a spare as two 16-bit integers, then
    big-endian float32s) decoded all at once: thousands parse in one step instead of one object each."""
    if not rows:
        return {}
    blobs = [bytes(r[1]) for r in rows]
    size = len(blobs[0])
    if any(len(b) != size for b in blobs):  # vectors of different sizes: one at a time
        return {
            int(r[0]): np.frombuffer(b, dtype=">f4")[1:].astype(np.float32) for r, b in zip(rows, blobs, strict=True)
        }
    matrix = np.frombuffer(b"".join(blobs), dtype=">f4").reshape(len(blobs), size // 4)[:, 1:].astype(np.float32)
    return dict(zip((int(r[0]) for r in rows), matrix, strict=True))


def load_embedded_ids(conn: psycopg.Connection, model: str) -> list[int]:
    """Every paper with a vector of this model."""
    return [r[0] for r in conn.execute("SELECT paper_id FROM paper_embeddings WHERE model = %s", (model,)).fetchall()]


# a catalog paper a ranking at %(as_of)s may offer, published from %(after)s on (NULL: any date); a fixed condition.
# A day begins at midnight UTC, as in the replay (``Universe.available``), whatever the session's time zone: the
# moments are read as UTC wall time, to which a date compares as its midnight (and the index on the date serves).
_AS_OF = "(%(as_of)s::timestamptz AT TIME ZONE 'UTC')"
_OFFERED = f"""(p.available_on < {_AS_OF} OR (%(serving)s AND p.publication_date <= {_AS_OF}))
    AND (%(after)s::timestamptz IS NULL OR p.available_on >= (%(after)s::timestamptz AT TIME ZONE 'UTC'))"""


def load_catalog_neighbours(
    conn: psycopg.Connection,
    model: str,
    vectors: Sequence[np.ndarray],
    *,
    before: datetime,
    after: datetime | None,
    k: int,
    serving: bool = False,
) -> list[int]:
    """Catalog papers published in ``[after, before)`` nearest to each vector (HNSW, cosine), the nearest of
    the first vector first. A paper whose date is known only to the month or the year counts from the last day
    it may have come out (``available_on``), so a replay never offers it before it surely existed. ``serving``
    (the moment is now): a paper in the store exists, so one dated to the day or month counts from the first day
    it may have come out (a conference's proceedings, dated to this month, in the week of the conference)."""
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
             WHERE e.model = %(model)s AND p.in_catalog AND {_OFFERED}
             ORDER BY e.embedding::vector({dim}) <=> %(q)s::vector({dim})
             LIMIT %(k)s
            """,
            {"model": model, "as_of": before, "after": after, "q": vec, "k": k, "serving": serving},
        ).fetchall()
        found.update(dict.fromkeys(r[0] for r in rows))
    return list(found)


def load_catalog_window(
    conn: psycopg.Connection,
    model: str,
    *,
    before: datetime,
    after: datetime | None,
    most: int,
    serving: bool = False,
) -> list[int] | None:
    """Every catalog paper with a vector that surely came out in ``[after, before)`` (``serving``: or may have, as
    ``load_catalog_neighbours`` says), newest first, or None
    when the window holds more than ``most`` catalog papers (then it is searched, not taken whole). The papers are
    counted first, without their vectors, and the count stops at ``most + 1``: a window too large to take whole
    costs a few milliseconds, not the reading of its rows."""
    counted = conn.execute(
        f"""
        SELECT count(*) FROM (
            SELECT 1 FROM papers p WHERE p.in_catalog AND {_OFFERED} LIMIT %(n)s) w
        """,
        {"as_of": before, "after": after, "n": most + 1, "serving": serving},
    ).fetchone()
    if counted is None or counted[0] > most:
        return None
    rows = conn.execute(
        f"""
        SELECT e.paper_id FROM paper_embeddings e JOIN papers p ON p.id = e.paper_id
         WHERE e.model = %(model)s AND p.in_catalog AND {_OFFERED}
         ORDER BY p.available_on DESC, p.id LIMIT %(n)s
        """,
        {"model": model, "as_of": before, "after": after, "n": most, "serving": serving},
    ).fetchall()
    return [r[0] for r in rows]


def forget_text_vectors(conn: psycopg.Connection, where: str, params: Mapping[str, object]) -> list[int]:
    """Papers linked by the messages ``where`` selects (a fixed condition on ``messages``, never input), with
    the vectors their channels made from message text deleted. Returns those papers."""
    rows = conn.execute(
        f"""
        SELECT DISTINCT mp.team_id, mp.channel_id, mp.paper_id
          FROM message_papers mp JOIN messages m ON m.id = mp.message_id WHERE {where}
        """,
        params,
    ).fetchall()
    with conn.cursor() as cur:
        cur.executemany(
            "DELETE FROM channel_text_embeddings WHERE team_id = %s AND channel_id = %s AND paper_id = %s",
            rows,
        )
    return sorted({r[2] for r in rows})


# a paper some row still refers to (another member's or another workspace's share, post or digest, save, pick,
# focus, removal from or unsave in a reading list, waiting author news or follow-up, first-day offer)
_STILL_REFERRED = (
    """
EXISTS (SELECT 1 FROM message_papers mp WHERE mp.paper_id = p.id)
OR EXISTS (SELECT 1 FROM recommendations r WHERE r.paper_id = p.id)
OR EXISTS (SELECT 1 FROM recommendations r, """
    + DIGEST_ITEMS
    + """ AS d
            WHERE d #>> '{paper,paper_id}' = p.id::text)
OR EXISTS (SELECT 1 FROM saved_papers s WHERE s.paper_id = p.id)
OR EXISTS (SELECT 1 FROM reading_list_removals rr WHERE rr.paper_id = p.id)
OR EXISTS (SELECT 1 FROM reading_list_unsaves ru WHERE ru.paper_id = p.id)
OR EXISTS (SELECT 1 FROM zotero_items z WHERE z.paper_id = p.id)
OR EXISTS (SELECT 1 FROM personal_picks pp WHERE pp.paper_id = p.id)
OR EXISTS (SELECT 1 FROM author_news an WHERE an.paper_id = p.id)
OR EXISTS (SELECT 1 FROM follow_ups fu WHERE fu.paper_id = p.id)
OR EXISTS (SELECT 1 FROM onboarding o WHERE p.id = ANY(o.paper_ids))
OR EXISTS (SELECT 1 FROM channel_settings cs WHERE p.id = ANY(cs.focus_paper_ids))
"""
)


def drop_orphaned_papers(conn: psycopg.Connection, linked: Sequence[int], referred: Sequence[int]) -> int:
    """After a purge, a forget-me, a deletion or an edit: delete the papers that only the rows just deleted (or
    unlinked) brought in, and that no row refers to any more: those their messages ``linked`` (whatever the sources
    said of them), and those otherwise ``referred`` to (a focus, a save, an asked-about link) that no source knows,
    whose identifiers were theirs alone. Catalog papers always stay. Returns how many went."""
    return conn.execute(
        f"""
        DELETE FROM papers p
         WHERE (p.id = ANY(%(linked)s::bigint[]) OR (p.id = ANY(%(referred)s::bigint[]) AND p.metadata_source IS NULL))
           AND NOT p.in_catalog AND NOT ({_STILL_REFERRED})
        """,
        {"linked": list(linked), "referred": list(referred)},
    ).rowcount
