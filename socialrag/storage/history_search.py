"""The group's memory (`/paperping ask`, the AI app panel, a mention): full-text and vector search over one
channel's own papers and threads, and what each member did with them. Every query is scoped by the channel
asked about; the caller decides which channels the asker may see."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np
import psycopg


def load_keyword_candidates(
    conn: psycopg.Connection, paper_ids: Sequence[int], terms: Sequence[str]
) -> tuple[dict[int, set[str]], dict[int, set[str]], dict[int, set[str]]]:
    """For each of these papers whose title or abstract holds one of the question's ``terms`` (plain words
    ``[a-z0-9]``, as ``topic_words`` gives them) in some form Postgres' English dictionary folds together
    ("evaluate", "evaluation"), the terms it holds so (its full-text index finds them; a term also as written
    anywhere in them, where the parser kept it inside a longer token); and, for each paper, the
    terms that name one of its authors, and those that name its venue or its year."""
    if not paper_ids or not terms:
        return {}, {}, {}
    args = {"terms": list(terms), "ids": list(paper_ids)}
    held: dict[int, set[str]] = {}
    for pid, term in conn.execute(
        """
        SELECT p.id, t.term FROM papers p, unnest(%(terms)s::text[]) AS t(term)
         WHERE p.id = ANY(%(ids)s::bigint[])
           AND (p.search @@ to_tsquery('english', t.term)
                -- a name the English parser keeps whole in a longer token ("github.com/facebookresearch/lama");
                -- the caller counts only whole words; a stop word ("same") stays unmatched, as the index has it
                OR (numnode(to_tsquery('english', t.term)) > 0
                    AND strpos(lower(coalesce(p.title, '') || ' ' || coalesce(p.abstract, '')), t.term) > 0))
        """,
        args,
    ).fetchall():
        held.setdefault(pid, set()).add(term)
    named: dict[int, set[str]] = {}
    fields: dict[int, set[str]] = {}
    for pid, term, by_author in conn.execute(
        """
        SELECT pa.paper_id, t.term, true FROM paper_authors pa JOIN authors a ON a.id = pa.author_id,
               unnest(%(terms)s::text[]) AS t(term)
         WHERE pa.paper_id = ANY(%(ids)s::bigint[]) AND to_tsvector('simple', a.name) @@ to_tsquery('simple', t.term)
        UNION
        SELECT p.id, t.term, false FROM papers p JOIN venues v ON v.id = p.venue_id,
               unnest(%(terms)s::text[]) AS t(term)
         WHERE p.id = ANY(%(ids)s::bigint[]) AND to_tsvector('simple', v.name) @@ to_tsquery('simple', t.term)
        UNION
        SELECT p.id, t.term, false FROM papers p, unnest(%(terms)s::text[]) AS t(term)
         WHERE p.id = ANY(%(ids)s::bigint[]) AND t.term ~ '^(19|20)[0-9][0-9]$' AND p.year::text = t.term
        """,
        args,
    ).fetchall():
        (named if by_author else fields).setdefault(pid, set()).add(term)
    return held, named, fields


def load_thread_matches(
    conn: psycopg.Connection, team_id: str, channel_id: str, query: str, most: int, before: datetime | None = None
) -> list[tuple[str, float]]:
    """(thread root ts, rank) of the channel's threads whose messages (a share's own words, its replies) match
    ``query``, best first: where the group discussed it; with ``before``, only messages posted before it."""
    if not query:
        return []
    rows = conn.execute(
        """
        SELECT coalesce(m.thread_ts, m.ts) AS root, max(ts_rank_cd(to_tsvector('english', m.text), q, 1))
          FROM messages m, to_tsquery('english', %(q)s) q
         WHERE m.team_id = %(t)s AND m.channel_id = %(c)s AND to_tsvector('english', m.text) @@ q
           AND (%(before)s::timestamptz IS NULL OR m.posted_at < %(before)s)
         GROUP BY root ORDER BY 2 DESC, root LIMIT %(n)s
        """,
        {"t": team_id, "c": channel_id, "q": query, "n": most, "before": before},
    ).fetchall()
    return [(r[0], float(r[1])) for r in rows]


def load_vector_matches(
    conn: psycopg.Connection, team_id: str, channel_id: str, model: str, paper_ids: Sequence[int], vector: np.ndarray
) -> list[tuple[int, float]]:
    """(paper id, cosine similarity to ``vector``) of these papers, by pgvector, closest first. A paper without a
    title counts by the vector made from this channel's own messages, never another channel's."""
    if not paper_ids:
        return []
    dim = len(vector)
    rows = conn.execute(
        f"""
        SELECT paper_id, max(similarity) FROM (
            SELECT paper_id, 1 - (embedding::vector({dim}) <=> %(q)s::vector({dim})) AS similarity
              FROM paper_embeddings WHERE model = %(m)s AND paper_id = ANY(%(ids)s::bigint[])
            UNION ALL
            SELECT paper_id, 1 - (embedding::vector({dim}) <=> %(q)s::vector({dim}))
              FROM channel_text_embeddings
             WHERE model = %(m)s AND team_id = %(t)s AND channel_id = %(c)s AND paper_id = ANY(%(ids)s::bigint[])
        ) found GROUP BY paper_id ORDER BY 2 DESC, paper_id
        """,
        {"q": vector, "m": model, "ids": list(paper_ids), "t": team_id, "c": channel_id},
    ).fetchall()
    return [(r[0], float(r[1])) for r in rows]


@dataclass(frozen=True)
class SavedBy:
    paper_id: int
    user_id: str


def load_saves(
    conn: psycopg.Connection, team_id: str, channel_id: str, paper_ids: Sequence[int], before: datetime | None = None
) -> list[SavedBy]:
    """Who saved which of these papers to the channel's reading list (with ``before``, saved before it)."""
    rows = conn.execute(
        """
        SELECT paper_id, user_id FROM saved_papers
         WHERE team_id = %(t)s AND channel_id = %(c)s AND paper_id = ANY(%(ids)s::bigint[]) AND user_id IS NOT NULL
           AND (%(before)s::timestamptz IS NULL OR saved_at < %(before)s)
        """,
        {"t": team_id, "c": channel_id, "ids": list(paper_ids), "before": before},
    ).fetchall()
    return [SavedBy(r[0], r[1]) for r in rows]


def load_recent_titles(conn: psycopg.Connection, team_id: str, channel_id: str, most: int) -> list[str]:
    """The titles of the papers most recently shared in the channel (for the panel's suggested questions)."""
    rows = conn.execute(
        """
        SELECT p.title FROM message_papers mp
          JOIN messages m ON m.id = mp.message_id JOIN papers p ON p.id = mp.paper_id
         WHERE mp.team_id = %(t)s AND mp.channel_id = %(c)s AND p.title IS NOT NULL
         ORDER BY m.posted_at DESC LIMIT %(n)s
        """,
        {"t": team_id, "c": channel_id, "n": most},
    ).fetchall()
    return [r[0] for r in rows]


def upsert_assistant_thread(
    conn: psycopg.Connection,
    channel_id: str,
    thread_ts: str,
    team_id: str,
    context_channel_id: str | None,
    user_id: str | None = None,
) -> None:
    """The channel a member had in view beside an assistant thread (the thread lives in their DM with PaperPing),
    and which member's thread it is (kept once known, so that `forget-me` deletes it)."""
    conn.execute(
        """
        INSERT INTO assistant_threads (channel_id, thread_ts, team_id, context_channel_id, user_id)
        VALUES (%(c)s, %(ts)s, %(t)s, %(ctx)s, %(u)s)
        ON CONFLICT (channel_id, thread_ts) DO UPDATE
           SET team_id = EXCLUDED.team_id, context_channel_id = EXCLUDED.context_channel_id,
               user_id = coalesce(EXCLUDED.user_id, assistant_threads.user_id), updated_at = now()
        """,
        {"c": channel_id, "ts": thread_ts, "t": team_id, "ctx": context_channel_id, "u": user_id},
    )


def load_assistant_thread(conn: psycopg.Connection, channel_id: str, thread_ts: str) -> tuple[str, str | None] | None:
    """(team id, channel in view) of an assistant thread, or None when none was kept."""
    row = conn.execute(
        "SELECT team_id, context_channel_id FROM assistant_threads WHERE channel_id = %(c)s AND thread_ts = %(ts)s",
        {"c": channel_id, "ts": thread_ts},
    ).fetchone()
    return (row[0], row[1]) if row else None
